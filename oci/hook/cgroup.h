/* SPDX-License-Identifier: MIT */
/* Where a process's cgroup v2 directory is, as the hook (an unprivileged user) can see it. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The cgroup2 mount point of this mount namespace (/proc/self/mountinfo); -ENOENT if none. */
int hook_cgroup2_mount(char *buf, size_t size);
/* pid's cgroup v2 directory (pid 0: this process's), under the cgroup2 mount. */
int hook_cgroup_dir(pid_t pid, char *buf, size_t size);
