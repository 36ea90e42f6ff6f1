/* SPDX-License-Identifier: MIT */
#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"

/* User namespaces nest at most 32 deep (the kernel's limit); one more for ours. */
#define USERNS_MAX_DEPTH 33

static bool same_ns(int fd, const struct stat *st)
{
	struct stat s;

	return fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

int netns_owned_by(int netns_fd, uid_t uid)
{
	_cleanup_close_ int ours = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int ns = -EBADF;
	struct stat ours_st;

	if (ours < 0 || fstat(ours, &ours_st) < 0)
		return -errno;
	/* The owning user namespace; the kernel answers for any below ours. */
	ns = ioctl(netns_fd, NS_GET_USERNS);
	if (ns < 0)
		return -errno;
	for (int depth = 0; depth < USERNS_MAX_DEPTH; depth++) {
		uid_t owner;
		int parent;

		/* Ours (the initial one: the host's) belongs to no client, root included. */
		if (same_ns(ns, &ours_st))
			return 0;
		/* Its creator's uid, as our user namespace sees it. */
		if (ioctl(ns, NS_GET_OWNER_UID, &owner) < 0)
			return -errno;
		if (owner == uid)
			return 1;
		parent = ioctl(ns, NS_GET_PARENT);
		if (parent < 0)
			/* EPERM: its parent is not below ours (nor ours), so not the client's. */
			return errno == EPERM ? 0 : -errno;
		safe_close(ns);
		ns = parent;
	}
	return 0;
}
