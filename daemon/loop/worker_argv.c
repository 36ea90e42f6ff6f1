/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-worker's command line, and its --recover run at startup that
 * finishes or undoes what a crash interrupted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon.h"
#include "daemon/shared/log.h"
#include "spawn.h"

/*
 * Finish or undo what a crash interrupted (worker/store.h), before anything
 * else touches the store: in bpfbroker-worker --recover, which holds the
 * workers' capabilities and raises them as it goes.
 */
int store_recover_in_child(const struct daemon *d)
{
	char *argv[32];
	size_t n = 0;
	pid_t pid;
	int status = 0, k;

	/* The spawner's arguments, and --recover. */
	for (char **a = d->worker_argv; *a && n < ARRAY_SIZE(argv) - 2; a++)
		argv[n++] = *a;
	argv[n++] = (char *)"--recover";
	argv[n] = NULL;
	k = spawn_exec(d->worker_exe_fd, argv, -EBADF, -EBADF, &pid);
	if (k < 0)
		return log_error_errno(k, "cannot start recovery: %s", strerror(-k));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return log_error_errno(-errno, "waiting for recovery: %m");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warning("recovery of named objects did not finish; see the messages above");
	return 0;
}

void argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

_printf_(3, 4) static bool argv_add(char **argv, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *a;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&a, fmt, ap);
	va_end(ap);
	if (k < 0)
		return false;
	argv[(*n)++] = a;
	return true;
}

/* What bpfbroker-worker is told (worker/main.c): the same store, limits and testing faults. */
int worker_argv_new(const struct daemon *d, char ***ret)
{
	char **argv = calloc(16, sizeof(char *)); /* NULL-terminated: at most 11 are set */
	size_t n = 0;
	bool ok = !!argv;

#define ARG(...) (ok = ok && argv_add(argv, &n, __VA_ARGS__))
	ARG("%s", "bpfbroker-worker");
	ARG("--daemon-pid=%d", (int)getpid());
	ARG("--pin-root=%s", d->opt.pin_root);
	ARG("--state-dir=%s", d->opt.state_dir);
	if (d->opt.objects_dir)
		ARG("--objects-dir=%s", d->opt.objects_dir);
	ARG("--verifier-timeout-usec=%llu",
	    (unsigned long long)(d->opt.verifier_timeout_sec * 1e6));
	ARG("--jobs-per-worker=%u", d->opt.jobs_per_worker);
	if (d->opt.admin_group)
		ARG("--admin-gid=%u", (unsigned)d->admin_gid);
	if (d->opt.fault_inject)
		ARG("--fault-inject=%s", d->opt.fault_inject);
	if (d->opt.allow_writable_bpffs)
		ARG("%s", "--allow-writable-bpffs");
	if (log_max_level >= LOG_DEBUG)
		ARG("%s", "--verbose");
#undef ARG
	if (!ok) {
		argv_free(argv);
		return -ENOMEM;
	}
	*ret = argv;
	return 0;
}
