/* SPDX-License-Identifier: MIT */
/* The directories the broker keeps pins and state in, made and checked to be root's alone at
 * startup. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "common/macro.h"
#include "daemon.h"
#include "daemon/shared/log.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int dir_secure(const char *path);

/* Where users' pins live: a directory on bpffs that only root can enter. */
void pin_root_prepare(const char *pin_root)
{
	_cleanup_free_ char *parent = strdup(pin_root);
	char *slash = parent ? strrchr(parent, '/') : NULL;
	struct statfs sfs;

	if (slash && slash != parent)
		*slash = '\0';
	if (!parent || statfs(parent, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC) {
		log_warning("%s is not on bpffs; objects that pin maps by name will be refused "
			    "(mount -t bpf -o mode=0700 bpf /sys/fs/bpf)",
			    parent ? parent : pin_root);
		return;
	}
	if (mkdir(pin_root, 0700) < 0 && errno != EEXIST)
		log_warning("cannot create %s: %m; pinning by name will fail", pin_root);
	dir_secure(pin_root);
}

/*
 * A directory the broker keeps its pins or state in must be root's and 0700,
 * also when it existed before: a user who owned it could reach every pin.
 */
static int dir_secure(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
		log_error("%s is not a directory owned by root: refusing to keep pins or state "
			  "there",
			  path);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
		return log_error_errno(-errno, "cannot restrict %s to mode 0700: %m", path);
	return 0;
}

/* Where named objects' metadata lives: root's, closed to users. */
int state_dir_prepare(const char *state_dir)
{
	_cleanup_free_ char *parent = strdup(state_dir);
	char *slash = parent ? strrchr(parent, '/') : NULL;

	if (!parent)
		return -ENOMEM;
	if (slash && slash != parent) {
		*slash = '\0';
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return log_error_errno(-errno, "cannot create %s: %m", parent);
	}
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "cannot create %s: %m", state_dir);
	return dir_secure(state_dir);
}
