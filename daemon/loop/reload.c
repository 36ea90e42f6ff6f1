/* SPDX-License-Identifier: MIT */
/*
 * The policy: loaded at startup and again on SIGHUP, kept for the spawner in a
 * sealed memfd, and a reload that fails leaves the previous one in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/log.h"

const struct policy *current_policy;

static void policy_warn(void *userdata, const char *message)
{
	log_warning("policy: %s", message);
}

/*
 * The policy in dir, and the files it was parsed from in a sealed memfd for
 * the spawner (SPAWN_POLICY_FD), which parses the same text: what changes on
 * disk later counts only at the next reload. Or a negative errno and what is
 * wrong (which file, why) in why.
 */
int policy_load(const char *dir, struct policy **ret, int *ret_fd, char *why, size_t why_size)
{
	_cleanup_free_ char *error = NULL, *snap = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t size = 0;
	int k;

	k = policy_snapshot_dir(dir, policy_warn, NULL, &snap, &size, &error);
	if (k >= 0)
		k = policy_load_snapshot(snap, size, policy_warn, NULL, ret, &error);
	if (k < 0) {
		snprintf(why, why_size, "%s", error ? error : strerror(-k));
		return k;
	}
	/* Sealed: nothing, not even a bug of ours, changes it under a spawner reading it. */
	fd = memfd_create("bpfbroker-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		k = negative_errno();
	else if (size > 0 && write(fd, snap, size) != (ssize_t)size)
		k = -EIO; /* a memfd takes all of it at once, or ENOMEM */
	else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) <
		 0)
		k = negative_errno();
	if (k < 0) {
		snprintf(why, why_size, "cannot keep the policy for workers: %s", strerror(-k));
		*ret = policy_free(*ret);
		return k;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct policy *p = NULL;
	char why[1024], reason[1200];
	int fd = -EBADF;

	sd_notify(0, "RELOADING=1");
	if (policy_load(d->opt.policy_dir, &p, &fd, why, sizeof(why)) < 0) {
		log_error("policy reload failed; the previous policy stays in force: %s", why);
		snprintf(reason, sizeof(reason),
			 "the new policy is invalid (%s); the previous one stays in force", why);
		audit_log(&(struct audit_record){
			.event = "policy-reload", .decision = "error", .reason = reason});
	} else {
		policy_free(d->policy);
		d->policy = p;
		current_policy = p;
		safe_close(d->policy_fd);
		d->policy_fd = fd;
		/* Idle workers and the spawner hold the old policy. */
		worker_pool_refresh(d->pool);
		log_info("policy reloaded from %s: %zu rules", d->opt.policy_dir,
			 policy_n_rules(p));
		audit_log(&(struct audit_record){.event = "policy-reload", .decision = "allow"});
	}
	sd_notify(0, "READY=1");
	return 0;
}
