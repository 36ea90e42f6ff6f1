/* SPDX-License-Identifier: MIT */
/* The cgroup2 mount, /proc/PID/cgroup's unified line parsed strictly, and the two joined. */
#include "cgroupfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "macro.h"
#include "procfs.h"

const char *cgroupfs_mount(void)
{
	static const char *const candidates[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	static const char *mount;
	static bool looked;
	struct statfs sfs;

	/* Looked up once per process, not per accept: our mounts do not move under us. */
	if (looked)
		return mount;
	looked = true;
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
		if (statfs(candidates[i], &sfs) == 0 &&
		    (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC)
			return mount = candidates[i];
	return NULL;
}

bool cgroupfs_path_is_valid(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	if (n == 0 || path[0] != '/' || n >= CGROUPFS_LINE_MAX - 3 || strchr(path, '\n'))
		return false;
	if (n == 1)
		return true;
	for (const char *c = path + 1;; c++) {
		size_t len = strcspn(c, "/");

		/* Empty ("//", a trailing '/') and "." are never the kernel's; ".." escapes. */
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
		if (!*c)
			return true;
	}
}

int cgroupfs_parse(const char *text, char **ret)
{
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n >= 3 && strncmp(line, "0::", 3) == 0) {
			_cleanup_free_ char *p = NULL;

			/* Refused, not cut short: a prefix is another cgroup. */
			if (n >= CGROUPFS_LINE_MAX)
				return -ENAMETOOLONG;
			p = strndup(line + 3, n - 3);
			if (!p)
				return -ENOMEM;
			if (!cgroupfs_path_is_valid(p))
				return -EINVAL;
			*ret = TAKE_PTR(p);
			return 0;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return -ENOENT;
}

int cgroupfs_read(int fd, char **ret)
{
	_cleanup_free_ char *text = NULL;
	int k;

	k = procfs_read(fd, &text);
	if (k < 0)
		return k;
	return cgroupfs_parse(text, ret);
}

int cgroupfs_join(const char *path, char *buf, size_t size)
{
	const char *mount = cgroupfs_mount();
	size_t m, n;

	if (!cgroupfs_path_is_valid(path))
		return -EINVAL;
	if (!mount)
		return -ENODEV;
	if (strcmp(path, "/") == 0)
		path = "";
	m = strlen(mount);
	n = strlen(path);
	if (m + n >= size)
		return -ENAMETOOLONG;
	memcpy(buf, mount, m);
	memcpy(buf + m, path, n + 1);
	return 0;
}

int cgroupfs_pid_dir(pid_t pid, char *buf, size_t size)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -EBADF;
	char file[64];
	int k;

	if (pid > 0)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/cgroup");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	k = cgroupfs_read(fd, &path);
	if (k < 0)
		return k;
	return cgroupfs_join(path, buf, size);
}

int cgroupfs_write(const char *dir, const char *file, const char *text)
{
	_cleanup_close_ int fd = -EBADF;
	char path[PATH_MAX + 32];
	size_t len = strlen(text);
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	n = write(fd, text, len);
	/* A short write leaves errno as it was (maybe 0). */
	if (n < 0)
		return negative_errno();
	return (size_t)n == len ? 0 : -EIO;
}
