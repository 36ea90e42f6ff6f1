/* SPDX-License-Identifier: MIT */
/*
 * The cgroup v2 directory of a process: the first cgroup2 mount of
 * /proc/self/mountinfo that is reachable (on hybrid hosts
 * /sys/fs/cgroup/unified; in a private mount namespace with cgroup2 mounted
 * over /sys/fs/cgroup, that one), joined with the "0::" line of
 * /proc/PID/cgroup.
 */
#include "cgroup.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "common/macro.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int hook_cgroup2_mount(char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	struct statfs fs;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), *mnt = line;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		/* id parent major:minor root MOUNT-POINT ... */
		for (int i = 0; i < 4 && mnt; i++)
			mnt = strchr(mnt, ' ') ? strchr(mnt, ' ') + 1 : NULL;
		if (!mnt || !strchr(mnt, ' '))
			continue;
		*strchr(mnt, ' ') = '\0';
		unescape(mnt);
		/* Another mount may hide it (cgroup2 mounted over a hybrid /sys/fs/cgroup). */
		if (statfs(mnt, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC)
			continue;
		if ((size_t)snprintf(buf, size, "%s", mnt) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}

int hook_cgroup_dir(pid_t pid, char *buf, size_t size)
{
	char path[64], mnt[4096];
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int k = hook_cgroup2_mount(mnt, sizeof(mnt));

	if (k < 0)
		return k;
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		/* Outside this process's cgroup namespace: not reachable from here. */
		if (strstr(line, "/.."))
			return -ENOENT;
		/* "0::/" is the mount itself. */
		if ((size_t)snprintf(buf, size, "%s%s", mnt,
				     strcmp(line + 3, "/") == 0 ? "" : line + 3) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}
