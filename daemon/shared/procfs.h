/* SPDX-License-Identifier: MIT */
/*
 * Text files under /proc parsed by pure functions over their text (no files opened, so
 * tests/fuzz links them alone): /proc/PID/status for the uprobe process checks and our own
 * capabilities, and a cgroup path (common/cgroupfs.h reads it) split for the unit identity
 * at accept. The text is read whole with procfs_read() (common/procfs.h).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/procfs.h"

/* Components of a cgroup path we look at (slices, the unit, user slices, the user unit). */
#define PROCFS_CGROUP_MAX_DEPTH 64

/* "KEY:..." at the start of a line of text: what follows the colon, or NULL. */
const char *procfs_status_field(const char *text, const char *key);
/*
 * The number on line KEY of status text (base 16 for the Cap* masks, 10 otherwise), after tabs
 * or spaces, ending the line. -ENOENT no such line, -EINVAL not such a number.
 */
int procfs_status_u64(const char *text, const char *key, int base, uint64_t *ret);

/* What /proc/PID/status says about a process, as far as the uprobe checks need it. */
struct procfs_status {
	pid_t pid;
	char state;
	uid_t uids[4]; /* real, effective, saved, file system */
	gid_t gids[4];
	uint64_t cap_prm, cap_eff, cap_amb;
	bool no_new_privs;
};

/* Parse the text of /proc/PID/status. -EINVAL if a line the checks need is missing. */
int procfs_status_parse(const char *text, struct procfs_status *ret);

/*
 * Split path ("/a/b/c", modified in place) into its components, at most
 * PROCFS_CGROUP_MAX_DEPTH of them, into comp. -EINVAL for ".", ".." or too many.
 */
int procfs_cgroup_split(char *path, char **comp, size_t *ret_n);
