/* SPDX-License-Identifier: MIT */
/*
 * The worker's seccomp filter: an allow-list of the system calls a worker
 * makes, built once in the spawner with libseccomp, installed in each worker.
 */
#pragma once

#include <stdbool.h>

struct sock_filter;

/* A compiled filter, ready for prctl(PR_SET_SECCOMP). */
struct sandbox {
	struct sock_filter *filter;
	unsigned short len;
};

/* Testing only, from --fault-inject: */
enum {
	/* seccomp-log: what is not on the list is allowed and logged (to find what it lacks) */
	SANDBOX_LOG_ONLY = 1 << 0,
	/* job-leaks:netns: unshare(CLONE_NEWNET) allowed, so a job can leave its namespace */
	SANDBOX_UNSHARE_NET = 1 << 1,
};

/*
 * Compile the workers' filter: what is not on its list fails with EPERM.
 * bpf(BPF_BTF_GET_NEXT_ID) fails with ENOENT (modbtf.h). flags: SANDBOX_*,
 * for tests only; 0 in service.
 */
int sandbox_build(unsigned flags, struct sandbox *ret);
/* Install it in this process, for good. Needs no_new_privs. */
int sandbox_apply(const struct sandbox *s);
void sandbox_done(struct sandbox *s);
