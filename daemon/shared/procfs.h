/* SPDX-License-Identifier: MIT */
/*
 * Text files under /proc read whole, and parsed by pure functions over that text (no files
 * opened, so tests/fuzz links them alone): /proc/PID/status for the uprobe process checks and
 * our own capabilities, /proc/PID/cgroup for the unit identity at accept.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A status with a very long Groups: line still fits; what the checks need comes anyway. */
#define PROCFS_MAX_BYTES (1024u * 1024)
/* Components of a cgroup path we look at (slices, the unit, user slices, the user unit). */
#define PROCFS_CGROUP_MAX_DEPTH 64
/* The longest "0::/PATH" line taken, in bytes. */
#define PROCFS_CGROUP_MAX 4096

/*
 * The text of the file open at fd from its start (fresh text at every read: a /proc file
 * reread through the same fd shows the state now), NUL-terminated, malloc'ed. -EFBIG over
 * PROCFS_MAX_BYTES, -ENOMEM, or read's errno (ESRCH once a /proc/PID file's process is gone).
 */
int procfs_read(int fd, char **ret);

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
 * The unified hierarchy's path ("/a/b" from the line "0::/a/b") in the text of
 * /proc/PID/cgroup, malloc'ed. -ENOENT if there is no such line (or only one over
 * PROCFS_CGROUP_MAX bytes), -ENOMEM.
 */
int procfs_cgroup_path(const char *text, char **ret);
/*
 * Split path ("/a/b/c", modified in place) into its components, at most
 * PROCFS_CGROUP_MAX_DEPTH of them, into comp. -EINVAL for ".", ".." or too many.
 */
int procfs_cgroup_split(char *path, char **comp, size_t *ret_n);
