/* SPDX-License-Identifier: MIT */
/*
 * bpffs mounts as this process sees them (/proc/self/mountinfo), and whether
 * someone other than root could pin there. A pin is the one way around a
 * map fd's mode: whoever holds a read-only map fd and can write a bpffs
 * directory pins it there and gets it back read-write with BPF_OBJ_GET. So
 * while such a directory exists, read-only and write-only fds protect nothing.
 * Shared by the daemon (its guard) and bpfctl doctor.
 *
 * "Someone other than root" is any principal but uid 0: the group class
 * counts whatever the group (group root may have members who are not root),
 * and a directory owned by another user is writable by that user, who can
 * chmod it. Every directory some such principal can traverse (group or other
 * x, or a non-root owner) is walked, without a depth cut-off; the walk is
 * bounded (entries read, directories open at once), and over its bound, or
 * at a directory others can traverse that it cannot read, the answer is
 * "unsafe", never "safe".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Entries the walk reads, over every mount, before it gives up (unsafe). */
#define BPFFS_WALK_MAX_ENTRIES 8192
/* Directories open at once: how deep the walk goes before it gives up (unsafe). */
#define BPFFS_WALK_MAX_DEPTH 64

enum bpffs_problem {
	BPFFS_OK,
	BPFFS_WRITABLE, /* at is a directory someone other than root can write */
	BPFFS_UNREADABLE, /* at is a directory others can traverse but the walk cannot read */
	BPFFS_TOO_LARGE, /* more entries, or deeper, than the walk's bound */
	BPFFS_HIDDEN, /* the mount point is hidden under another mount, or gone */
};

struct bpffs_mount {
	char path[512]; /* mount point, octal escapes of mountinfo decoded */
	mode_t mode; /* of the mount's root directory */
	uid_t uid;
	gid_t gid;
	/* Not BPFFS_OK: anyone but root could create a pin there, or we cannot tell. */
	enum bpffs_problem problem;
	char at[512]; /* the directory the problem is at: path or one below it */
	mode_t at_mode; /* its mode, owner and group (BPFFS_WRITABLE) */
	uid_t at_uid;
	gid_t at_gid;
	int at_errno; /* BPFFS_UNREADABLE: why */
};

/* What a walk may still read: entries, and directories open at once. */
struct bpffs_budget {
	size_t entries;
	size_t depth;
};

/*
 * Every bpffs mount, into an array of at most max; returns how many there
 * are (which may exceed max: only max are filled), or a negative errno. The
 * mounts filled are checked within one budget of BPFFS_WALK_MAX_ENTRIES
 * entries and BPFFS_WALK_MAX_DEPTH levels.
 */
int bpffs_mounts(struct bpffs_mount *mounts, size_t max);

/*
 * Check the tree at path (any directory; the walk stays on its file system)
 * as bpffs_mounts() checks a mount, within budget (which it uses up): fills
 * m (path, the root's mode and owner, the problem). For tests and tools.
 */
void bpffs_check_tree(const char *path, struct bpffs_budget *budget, struct bpffs_mount *m);

/*
 * What is wrong with m, for messages: what (a clause: "the directory X on
 * the bpffs at Y is writable by users other than root (mode 0770, owner 0,
 * group 4410)") and fix (what makes it right: "it is root's and closed to
 * others (chown root, chmod go-w) or the bpffs is remounted with mode=0700
 * (...)"). Nothing when m has no problem.
 */
void bpffs_describe(const struct bpffs_mount *m, char *what, size_t what_size, char *fix,
		    size_t fix_size);

/*
 * The first bpffs mount writable by someone other than root (or that cannot
 * be checked): 1 and *ret, or 0 when there is none, or a negative errno
 * (mountinfo unreadable, or more than 64 mounts: callers treat that as unsafe).
 */
int bpffs_find_writable(struct bpffs_mount *ret);
