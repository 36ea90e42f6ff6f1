/* SPDX-License-Identifier: MIT */
/*
 * Where a process's cgroup v2 directory is: the cgroup2 mount, and the unified hierarchy's
 * line of /proc/PID/cgroup ("0::/PATH") parsed strictly. The one copy for the daemon, bpfctl,
 * the OCI hook and bpfbroker-user-net.
 *
 * The mount is looked for where systemd puts it (and the paths we join to it, the kernel's
 * and systemd's ControlGroup=, are relative to that whole hierarchy): /sys/fs/cgroup on a
 * unified layout, else /sys/fs/cgroup/unified on a hybrid one, each taken only if statfs says
 * it is cgroup2. Not by scanning /proc/self/mountinfo: a cgroup2 mount found elsewhere may be
 * a bind mount of a subtree, or one a user mounted in a mount namespace of their own, and
 * joining the hierarchy's paths to it would name other directories. A runtime's private mount
 * namespace with cgroup2 mounted over /sys/fs/cgroup (as crun on a hybrid host needs) is found
 * first, as a scan would find it; a host with cgroup2 only somewhere else is not served.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A "0::PATH" line of /proc/PID/cgroup is shorter than this, in bytes. */
#define CGROUPFS_LINE_MAX 4096

/*
 * "/sys/fs/cgroup" or "/sys/fs/cgroup/unified", whichever statfs says is cgroup2 (in that
 * order), or NULL for neither. Looked up once per process: our mounts do not move under us.
 */
const char *cgroupfs_mount(void);

/*
 * Is path one the kernel gives for a cgroup in our cgroup namespace: "/", or '/'-separated
 * components, none empty, "." or "..", no newline (the kernel refuses one in a cgroup's name),
 * and shorter than CGROUPFS_LINE_MAX - 3 ("/.." is how a cgroup outside our namespace shows).
 */
bool cgroupfs_path_is_valid(const char *path);

/*
 * The unified hierarchy's path ("/a/b" from the line "0::/a/b") in the text of
 * /proc/PID/cgroup, malloc'ed. The first "0::" line decides: -ENAMETOOLONG if it is
 * CGROUPFS_LINE_MAX bytes or more, -EINVAL if its path is not valid
 * (cgroupfs_path_is_valid()), -ENOENT if there is no such line, -ENOMEM.
 */
int cgroupfs_parse(const char *text, char **ret);

/*
 * The same from the /proc/PID/cgroup open at fd, read whole from its start (so the same fd
 * reads again the process's cgroup now): cgroupfs_parse()'s errors, or procfs_read()'s.
 */
int cgroupfs_read(int fd, char **ret);

/*
 * mount joined with path (valid, cgroupfs_path_is_valid()) into buf of size bytes: "/" is
 * the mount itself. -ENODEV without a cgroup2 mount, -EINVAL for a path that is not valid,
 * -ENAMETOOLONG if it does not fit (buf is then not written).
 */
int cgroupfs_join(const char *path, char *buf, size_t size);

/* pid's cgroup v2 directory (pid 0: this process's) into buf: cgroupfs_read(), then _join(). */
int cgroupfs_pid_dir(pid_t pid, char *buf, size_t size);

/*
 * Write text into the cgroup interface file dir/file ("cgroup.procs", "cgroup.kill"): 0, or
 * -errno; a short write is -EIO, never a success.
 */
int cgroupfs_write(const char *dir, const char *file, const char *text);
