/* SPDX-License-Identifier: MIT */
/*
 * The spawner's and the workers' seccomp filters: allow-lists of the system
 * calls each makes, built once in the spawner with libseccomp, installed in
 * the spawner after its setup and in each worker after fork.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct sock_filter;

/* A compiled filter, ready for prctl(PR_SET_SECCOMP). */
struct sandbox {
	struct sock_filter *filter;
	unsigned short len;
};

enum sandbox_kind {
	/* A worker: what workers do, signals only to itself, sendmsg() only to the event loop. */
	SANDBOX_WORKER,
	/*
	 * The spawner: what it does to fork workers, and what they do (a
	 * filter is inherited: the workers run under both, so this one is the
	 * wider), with the arguments that name a worker's own pid narrowed to
	 * one process's pid only.
	 */
	SANDBOX_SPAWNER,
};

/* Testing only, from --fault-inject: */
enum {
	/* seccomp-log: what is not on the list is allowed and logged (to find what it lacks) */
	SANDBOX_LOG_ONLY = 1 << 0,
	/* job-leaks:netns: unshare(CLONE_NEWNET) allowed, so a job can leave its namespace */
	SANDBOX_UNSHARE_NET = 1 << 1,
	/* the store's crash faults: kill(daemon, SIGKILL) allowed, the crash they simulate */
	SANDBOX_KILL_DAEMON = 1 << 2,
};

/*
 * Compile a filter: what is not on its list fails with EPERM.
 * bpf(BPF_BTF_GET_NEXT_ID) fails with ENOENT (modbtf.h). flags: SANDBOX_*,
 * for tests only; 0 in service. daemon: the pid SANDBOX_KILL_DAEMON names.
 */
int sandbox_build(enum sandbox_kind kind, unsigned flags, pid_t daemon, struct sandbox *ret);
/*
 * Install it in this process, for good: the rules about "itself" name this
 * process's pid. Needs no_new_privs.
 */
int sandbox_apply(const struct sandbox *s);
void sandbox_done(struct sandbox *s);
