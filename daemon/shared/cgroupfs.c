/* SPDX-License-Identifier: MIT */
/* Whether a cgroup lies at or below another, by the kernel's cgroup ids. */
#include "cgroupfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/macro.h"
#include "procfs.h"

/* A cgroup2 directory's inode number is its cgroup id (kernfs, 64-bit ino_t). */
static int cgroupfs_is(int fd, uint64_t cgroup_id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	return (uint64_t)st.st_ino == cgroup_id;
}

int cgroupfs_path_within(const char *path, uint64_t cgroup_id)
{
	_cleanup_free_ char *copy = strdup(path);
	const char *mount = cgroupfs_mount();
	_cleanup_close_ int fd = -EBADF;
	char *comp[PROCFS_CGROUP_MAX_DEPTH];
	size_t n = 0;
	int k;

	if (!copy)
		return -ENOMEM;
	if (!mount)
		return -ENODEV;
	if (path[0] != '/' || procfs_cgroup_split(copy, comp, &n) < 0)
		return -EINVAL;
	fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	k = cgroupfs_is(fd, cgroup_id);
	for (size_t i = 0; k == 0 && i < n; i++) {
		int child = openat(fd, comp[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (child < 0)
			return negative_errno();
		safe_close(fd);
		fd = child;
		k = cgroupfs_is(fd, cgroup_id);
	}
	return k;
}
