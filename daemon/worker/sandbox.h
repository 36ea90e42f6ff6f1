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

/*
 * Compile the workers' filter: what is not on its list fails with EPERM, or,
 * with log_only (--fault-inject=seccomp-log, for finding what the list
 * lacks), is allowed and logged by the kernel. bpf(BPF_BTF_GET_NEXT_ID)
 * fails with ENOENT (modbtf.h).
 */
int sandbox_build(bool log_only, struct sandbox *ret);
/* Install it in this process, for good. Needs no_new_privs. */
int sandbox_apply(const struct sandbox *s);
void sandbox_done(struct sandbox *s);
