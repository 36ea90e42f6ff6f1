/* SPDX-License-Identifier: MIT */
/*
 * bpffs mounts as this process sees them (/proc/self/mountinfo), and whether
 * someone other than root could pin there. A pin is the one way around a
 * map fd's mode: whoever holds a read-only map fd and can write a bpffs
 * directory pins it there and gets it back read-write with BPF_OBJ_GET. So
 * while such a mount exists, read-only and write-only fds protect nothing.
 * Shared by the daemon (its guard) and bpfctl doctor.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bpffs_mount {
	char path[512]; /* mount point, octal escapes of mountinfo decoded */
	mode_t mode; /* of the mount's root directory */
	uid_t uid;
	gid_t gid;
	bool writable_by_others; /* anyone but root could create a pin there */
};

/*
 * Every bpffs mount, into an array of at most max; returns how many there
 * are (which may exceed max: only max are filled), or a negative errno.
 */
int bpffs_mounts(struct bpffs_mount *mounts, size_t max);

/*
 * The first bpffs mount writable by someone other than root: 1 and *ret, or
 * 0 when there is none, or a negative errno (mountinfo unreadable: callers
 * treat that as unsafe).
 */
int bpffs_find_writable(struct bpffs_mount *ret);
