/* SPDX-License-Identifier: MIT */
#include "peer_unit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-login.h>

#include "common/cgroupfs.h"
#include "common/macro.h"
#include "daemon/shared/log.h"
#include "daemon/shared/procfs.h"

/* Nobody but root can write it: no new children, no processes moved in or out. */
static bool root_only(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, name[0] ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH) < 0)
		return false;
	return st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * How many directories from the hierarchy's root down along comp only root
 * can change (creating children needs the directory, moving a process needs
 * cgroup.procs or cgroup.threads of the common ancestor): 0 for none, at
 * most n_check. Component i was named by root if i < the result.
 */
static size_t count_root_only_dirs(char *const *comp, size_t n_check)
{
	const char *mount = cgroupfs_mount();
	_cleanup_close_ int fd = -EBADF;
	size_t depth = 0;

	if (!mount)
		return 0;
	fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
	while (fd >= 0 && depth < n_check) {
		int child;

		if (!root_only(fd, "") || !root_only(fd, "cgroup.procs") ||
		    !root_only(fd, "cgroup.threads"))
			break;
		depth++;
		if (depth == n_check)
			break;
		child = openat(fd, comp[depth - 1], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		safe_close(fd);
		fd = child;
	}
	return depth;
}

static bool is_slice(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && strcmp(name + n - 6, ".slice") == 0;
}

/* systemd escapes a unit's cgroup name that could clash with kernel files with a leading '_'. */
static const char *cgroup_unescape(const char *name)
{
	return name[0] == '_' ? name + 1 : name;
}

static bool streq_ptr(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool pidfd_alive(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	/* A pidfd turns readable when its process exits. */
	return poll(&pfd, 1, 0) == 0;
}

/*
 * /proc/PID/cgroup of the peer, opened only with its pidfd: without one,
 * /proc/PID may be another process by now. Each read of the fd from its
 * start (cgroupfs_read()) is the kernel's answer at that time, for the
 * process the file was opened for (a reused pid is another process, whose
 * file this is not). -ESRCH without a pidfd, or open's errno.
 */
static int peer_cgroup_open(pid_t pid, int pidfd)
{
	char file[64];
	int fd;

	if (pidfd < 0)
		return -ESRCH;
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

/*
 * The cgroup path read from fd (peer_cgroup_open()), kept only if the
 * process is still alive after the read: then the pid was the connecting
 * process's all along. -ESRCH once it exited, or the read's error.
 */
static int peer_cgroup_read_fd(int fd, int pidfd, char **ret)
{
	_cleanup_free_ char *path = NULL;
	int r;

	r = cgroupfs_read(fd, &path);
	if (r < 0)
		return r;
	if (!pidfd_alive(pidfd))
		return -ESRCH;
	*ret = TAKE_PTR(path);
	return 0;
}

/*
 * From the path's components, keep what libsystemd reported and we can
 * vouch for. libsystemd decides the names; the components tell where in the
 * tree each name sits, and so who could have chosen it. Where the two
 * disagree nothing is kept.
 */
static int peer_unit_trust(struct peer_unit *u, char *const *comp, size_t n, uid_t uid,
			   const char *unit, const char *user_unit, const char *slice,
			   const char *user_slice)
{
	char manager[64];
	size_t k = 0, trusted, m;
	int r;

	while (k < n && is_slice(comp[k]))
		k++;
	/* The slices, and the unit's directory if there is one, must be root's to name. */
	trusted = count_root_only_dirs(comp, k < n ? k + 1 : k);
	if (k > 0 && !streq_ptr(slice, cgroup_unescape(comp[k - 1])))
		return 0;
	for (size_t i = 0; i < k && i < trusted; i++) {
		r = peer_unit_strv_push(&u->slices, &u->n_slices, cgroup_unescape(comp[i]));
		if (r < 0)
			return r;
	}
	if (k == n || k >= trusted || !streq_ptr(unit, cgroup_unescape(comp[k])))
		return 0;
	u->unit = strdup(unit);
	if (!u->unit)
		return -ENOMEM;

	/* Below the caller's own user manager the caller names everything. */
	snprintf(manager, sizeof(manager), "user@%u.service", (unsigned)uid);
	if (strcmp(unit, manager) != 0)
		return 0;
	for (m = k + 1; m < n && is_slice(comp[m]); m++) {
		r = peer_unit_strv_push(&u->user_slices, &u->n_user_slices,
					cgroup_unescape(comp[m]));
		if (r < 0)
			return r;
	}
	if (m > k + 1 && !streq_ptr(user_slice, cgroup_unescape(comp[m - 1]))) {
		peer_unit_strv_free(u->user_slices, u->n_user_slices);
		u->user_slices = NULL;
		u->n_user_slices = 0;
		return 0;
	}
	if (m < n && streq_ptr(user_unit, cgroup_unescape(comp[m]))) {
		u->user_unit = strdup(user_unit);
		if (!u->user_unit)
			return -ENOMEM;
	}
	return 0;
}

int peer_unit_read(int sock, pid_t pid, uid_t uid, int pidfd, struct peer_unit *ret)
{
	_cleanup_free_ char *before = NULL, *after = NULL, *shifted = NULL, *unit = NULL,
			    *user_unit = NULL, *slice = NULL, *user_slice = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct peer_unit u = {};
	char *comp[PROCFS_CGROUP_MAX_DEPTH];
	size_t n = 0;
	int r;

	/* Opened once; read before and after libsystemd's reads. */
	fd = peer_cgroup_open(pid, pidfd);
	if (fd < 0 || cgroupfs_read(fd, &before) < 0) {
		*ret = u;
		return 0;
	}
	if (sd_peer_get_cgroup(sock, &shifted) < 0)
		shifted = NULL;
	if (sd_peer_get_unit(sock, &unit) < 0)
		unit = NULL;
	if (sd_peer_get_user_unit(sock, &user_unit) < 0)
		user_unit = NULL;
	if (sd_peer_get_slice(sock, &slice) < 0)
		slice = NULL;
	if (sd_peer_get_user_slice(sock, &user_slice) < 0)
		user_slice = NULL;
	/*
	 * One answer: the process was in the same cgroup before and after
	 * libsystemd read it (each call reads again), and it is still the
	 * process that connected (so the pid was not reused meanwhile).
	 * libsystemd's path must be the hierarchy's own (no shift for a
	 * container's root), since we check directories along it.
	 */
	if (peer_cgroup_read_fd(fd, pidfd, &after) < 0) {
		*ret = u;
		return 0;
	}
	u.cgroup = strdup(before);
	if (!u.cgroup)
		return -ENOMEM;
	if (strcmp(before, after) != 0 || !streq_ptr(shifted, before) ||
	    procfs_cgroup_split(after, comp, &n) < 0) {
		log_debug("pid %d: cgroup %s changed or is not usable; no unit identity", (int)pid,
			  before);
		*ret = u;
		return 0;
	}
	r = peer_unit_trust(&u, comp, n, uid, unit, user_unit, slice, user_slice);
	if (r < 0) {
		peer_unit_done(&u);
		return r;
	}
	*ret = u;
	return 0;
}

int peer_cgroup_read(pid_t pid, int pidfd, char **ret)
{
	_cleanup_close_ int fd = peer_cgroup_open(pid, pidfd);

	if (fd < 0)
		return fd;
	return peer_cgroup_read_fd(fd, pidfd, ret);
}
