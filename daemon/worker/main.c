/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-worker: exec'd by bpfbrokerd as its worker spawner. Sets up once
 * what every worker shares (capabilities, the policy the daemon read,
 * libbpf's feature probes), then forks the workers from this lean image.
 * Not for running by hand: the daemon passes its socket and the policy as
 * fds (daemon/shared/spawn.h). With --recover, at the daemon's start: finish
 * or undo what a crash interrupted in the store, and exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/macro.h"
#include "common/parse.h"
#include "common/sha256.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "daemon/shared/spawn.h"
#include "handout.h"
#include "sandbox.h"
#include "policy/attach_type.h"
#include "policy/policy.h"
#include "spawner.h"
#include "store.h"
#include "warmup.h"

struct options {
	struct load_config load;
	pid_t daemon_pid;
	unsigned jobs_per_worker; /* of one connection, then a worker exits */
	bool allow_writable_bpffs;
	bool recover; /* finish or undo what a crash interrupted (store.h), then exit */
};

static int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_PIN_ROOT = 256,
		OPT_STATE_DIR,
		OPT_FAULT,
		OPT_DAEMON_PID,
		OPT_VERIFIER_TIMEOUT_USEC,
		OPT_ADMIN_GID,
		OPT_ALLOW_WRITABLE_BPFFS,
		OPT_JOBS_PER_WORKER,
		OPT_RECOVER,
		OPT_OBJECTS_DIR,
	};
	static const struct option longopts[] = {
		{"pin-root", required_argument, NULL, OPT_PIN_ROOT},
		{"state-dir", required_argument, NULL, OPT_STATE_DIR},
		{"fault-inject", required_argument, NULL, OPT_FAULT},
		{"daemon-pid", required_argument, NULL, OPT_DAEMON_PID},
		{"verifier-timeout-usec", required_argument, NULL, OPT_VERIFIER_TIMEOUT_USEC},
		{"admin-gid", required_argument, NULL, OPT_ADMIN_GID},
		{"allow-writable-bpffs", no_argument, NULL, OPT_ALLOW_WRITABLE_BPFFS},
		{"jobs-per-worker", required_argument, NULL, OPT_JOBS_PER_WORKER},
		{"recover", no_argument, NULL, OPT_RECOVER},
		{"objects-dir", required_argument, NULL, OPT_OBJECTS_DIR},
		{"verbose", no_argument, NULL, 'v'},
		{},
	};
	uint64_t v;
	int c;

	*o = (struct options){.jobs_per_worker = 1};
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) >= 0) {
		int k = 0;

		switch (c) {
		case OPT_PIN_ROOT:
			o->load.store.pin_root = optarg;
			break;
		case OPT_STATE_DIR:
			o->load.store.state_dir = optarg;
			break;
		case OPT_FAULT:
			o->load.store.fault = optarg;
			break;
		case OPT_DAEMON_PID:
			k = parse_u64(optarg, INT32_MAX, &v);
			o->daemon_pid = (pid_t)v;
			break;
		case OPT_VERIFIER_TIMEOUT_USEC:
			k = parse_u64(optarg, UINT64_MAX, &o->load.verifier_timeout_usec);
			break;
		case OPT_ADMIN_GID:
			k = parse_u64(optarg, (gid_t)-2, &v);
			o->load.admin_gid = (gid_t)v;
			o->load.have_admin_gid = true;
			break;
		case OPT_ALLOW_WRITABLE_BPFFS:
			o->allow_writable_bpffs = true;
			break;
		case OPT_JOBS_PER_WORKER:
			k = parse_u64(optarg, UINT_MAX, &v);
			o->jobs_per_worker = (unsigned)v;
			break;
		case OPT_RECOVER:
			o->recover = true;
			break;
		case OPT_OBJECTS_DIR:
			o->load.objects_dir = optarg;
			break;
		case 'v':
			log_max_level = LOG_DEBUG;
			break;
		default:
			return -EINVAL;
		}
		if (k < 0)
			return k;
	}
	if (optind < argc || o->daemon_pid <= 1 || o->jobs_per_worker == 0 ||
	    !o->load.store.pin_root || !o->load.store.state_dir)
		return -EINVAL;
	o->load.store.daemon_pid = o->daemon_pid;
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* The policy the daemon read (SPAWN_POLICY_FD), parsed as it parsed it. */
static int policy_from_fd(int fd, struct policy **ret)
{
	_cleanup_free_ char *error = NULL;
	struct stat st;
	void *buf;
	int k;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (st.st_size == 0)
		return policy_load_snapshot(NULL, 0, NULL, NULL, ret, &error);
	buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED)
		return negative_errno();
	/* No warnings: the daemon gave them when it read the files. */
	k = policy_load_snapshot(buf, (size_t)st.st_size, NULL, NULL, ret, &error);
	munmap(buf, (size_t)st.st_size);
	if (k < 0)
		log_error("worker spawner: the daemon's policy: %s", error ? error : strerror(-k));
	return k;
}

/*
 * Testing (--fault-inject): seccomp-log logs what the list lacks instead of
 * refusing it; job-leaks:netns lets a job leave its network namespace, for
 * the reuse checks to catch; worker-escape changes nothing (what it tries
 * must stay refused); the store's crash points (store.h) end by killing
 * the daemon, as a crash of the machine would.
 */
static unsigned sandbox_flags(const char *fault)
{
	if (!fault)
		return 0;
	if (strcmp(fault, "seccomp-log") == 0)
		return SANDBOX_LOG_ONLY;
	if (strcmp(fault, "job-leaks:netns") == 0)
		return SANDBOX_UNSHARE_NET;
	if (strncmp(fault, "job-leaks:", 10) == 0 || strcmp(fault, "worker-escape") == 0)
		return 0;
	return SANDBOX_KILL_DAEMON;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	uint64_t start = now_usec();
	struct options o;
	struct policy *policy = NULL;
	struct sandbox sandbox, own;
	unsigned flags;
	int k;

	if (parse_options(argc, argv, &o) < 0) {
		fprintf(stderr, "bpfbroker-worker: started by bpfbrokerd only, not by hand\n");
		return EXIT_FAILURE;
	}
	/*
	 * The daemon passed the workers' set as ambient capabilities, which exec
	 * made effective: make it permitted only, first of all.
	 */
	k = caps_spawner_init(o.load.store.fault &&
			      strcmp(o.load.store.fault, "bpf-needs-cap") == 0);
	if (k < 0) {
		log_error("worker spawner: cannot reduce capabilities: %s", strerror(-k));
		return EXIT_FAILURE;
	}
	if (o.recover)
		return store_recover(&o.load.store) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	if (spawner_prepare(o.daemon_pid) < 0)
		return EXIT_FAILURE;
	/* Our socket and the policy; anything else the daemon held is not ours. */
	if (close_range(SPAWN_POLICY_FD + 1, ~0U, 0) < 0)
		return EXIT_FAILURE;
	/* Testing: a spawner that can never start (the daemon must back off, not spin). */
	if (o.load.store.fault && strcmp(o.load.store.fault, "spawner-start") == 0)
		return EXIT_FAILURE;
	/* Workers set their own printer; reading attach type names says nothing either. */
	libbpf_set_print(libbpf_quiet);
	attach_type_init();
	k = policy_from_fd(SPAWN_POLICY_FD, &policy);
	safe_close(SPAWN_POLICY_FD);
	if (k < 0)
		return EXIT_FAILURE;
	/*
	 * Its place taken by journald's socket, connected now: neither we nor
	 * our workers may connect() once our filters are in (audit.h).
	 */
	k = audit_connect_journal(SPAWN_JOURNAL_FD);
	if (k < 0 && k != -ENOENT)
		log_warning("worker spawner: cannot connect to journald, audit records go to "
			    "stderr: %s",
			    strerror(-k));
	warmup_libbpf();
	/*
	 * libcrypto's first digest costs about 0.6 ms: paid here once, not by each
	 * worker's audit record (common/sha256.h).
	 */
	k = sha256_init();
	if (k < 0)
		log_debug("SHA-256 warm-up: %s", strerror(-k));
	/* The workers' system call filter, compiled once for all of them, and our own. */
	flags = sandbox_flags(o.load.store.fault);
	k = sandbox_build(SANDBOX_WORKER, flags, o.daemon_pid, &sandbox);
	if (k >= 0)
		k = sandbox_build(SANDBOX_SPAWNER, flags, o.daemon_pid, &own);
	if (k < 0) {
		log_error("worker spawner: cannot build the system call filters: %s", strerror(-k));
		return EXIT_FAILURE;
	}
	handout_allow_writable_bpffs(o.allow_writable_bpffs);
	{
		char msg[2048];

		if (handout_check_bpffs(msg, sizeof(msg)) < 0)
			log_error("%s", msg);
		else if (o.allow_writable_bpffs)
			log_warning("--allow-writable-bpffs: read-only and write-only map fds are "
				    "handed out even while a bpffs is writable by non-root");
	}
	/* What an exec per worker would add to each, besides exec itself (daemon/README.md). */
	log_debug("worker spawner ready: its setup took %llu us",
		  (unsigned long long)(now_usec() - start));
	spawner_run(&(struct worker_config){.policy = policy,
					    .load = o.load,
					    .sandbox = &sandbox,
					    .max_jobs = o.jobs_per_worker,
					    .max_rss_growth = SERVE_MAX_RSS_GROWTH},
		    &own);
}
