/* SPDX-License-Identifier: MIT */
/*
 * The cgroup v2 hierarchy as the broker sees it (its own mount and cgroup
 * namespace, the same in which it reads /proc/PID/cgroup): whether a cgroup
 * path lies at or below a cgroup given by its kernel id. Where it is mounted
 * is common/cgroupfs.h's cgroupfs_mount().
 */
#pragma once

#include <stdint.h>

#include "common/cgroupfs.h"

/*
 * Is the cgroup at path ("/a/b/c", as /proc/PID/cgroup's "0::" line gives it)
 * the cgroup with kernel id cgroup_id or one below it? Walks the path from the
 * hierarchy's root and compares each directory's inode number (a cgroup's
 * id) with cgroup_id: a match is decided per whole component, never by a
 * string prefix, and a cgroup renamed or moved since it was named keeps its
 * id. 1 inside, 0 not; -ENOENT when a directory along the path is gone (it
 * changed since path was read), -ENODEV without a cgroup2 mount, -EINVAL for
 * a path that is not one, or open's errno. Callers that decide security
 * take every error as "inside".
 */
int cgroupfs_path_within(const char *path, uint64_t cgroup_id);
