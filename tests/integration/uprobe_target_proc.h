/* SPDX-License-Identifier: MIT */
/*
 * Processes to probe, for the uprobe tests: uprobe_target (or a copy of it)
 * started as a user, driven by one command a line (see uprobe_target.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

struct target {
	pid_t pid;
	int cmds, replies; /* its stdin and stdout */
};

/*
 * Start exe as u (if we are not u already: from root), with no_new_privs
 * or not, and wait for its "ready".
 */
int target_start(const struct user *u, bool nnp, const char *exe, struct target *t);
/* One command, one line back. */
int target_cmd(struct target *t, const char *cmd, char *reply, size_t size);
/* "call N": its uprobe_target_work() N times. */
int target_call(struct target *t, int n);
/* Its USDT semaphore's value, or -1. */
int target_semaphore(struct target *t);
/* The kernel drops a detached probe (and its count) in the background: wait for it. */
int target_semaphore_becomes(struct target *t, int want);
/* End it (end of input) and reap it. */
void target_stop(struct target *t);
