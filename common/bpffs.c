/* SPDX-License-Identifier: MIT */
#include "bpffs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "macro.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * Some principal other than root may create entries in a directory: others
 * or the group (any group: group root may have members who are not root), or
 * its owner if that is not root (an owner can chmod, whatever the mode).
 * With a POSIX ACL the group bits are its mask, so named entries count too.
 */
static bool writable_by_others(const struct stat *st)
{
	return st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH));
}

/* ... or pass through it to what is below. */
static bool traversable_by_others(const struct stat *st)
{
	return st->st_uid != 0 || (st->st_mode & (S_IXGRP | S_IXOTH));
}

struct walk {
	struct bpffs_budget *budget;
	struct bpffs_mount *m;
	dev_t dev; /* the mount's: other mounts are checked on their own (or hold no pins) */
	char path[PATH_MAX]; /* of the directory being read, for messages */
};

/* A path for messages: shortened, visibly, if it does not fit. */
static void copy_path(char *dst, size_t size, const char *src)
{
	if (snprintf(dst, size, "%s", src) >= (int)size && size > 4)
		memcpy(dst + size - 4, "...", 4);
}

static void problem(struct walk *w, enum bpffs_problem p, const struct stat *st, int err)
{
	struct bpffs_mount *m = w->m;

	m->problem = p;
	copy_path(m->at, sizeof(m->at), p == BPFFS_TOO_LARGE ? m->path : w->path);
	if (st) {
		m->at_mode = st->st_mode & 07777;
		m->at_uid = st->st_uid;
		m->at_gid = st->st_gid;
	}
	m->at_errno = err;
}

/*
 * Walk the directory dfd (at w->path, its first len bytes), which others can
 * traverse; it is taken. Every subdirectory others can write is a problem;
 * every one they can traverse is walked in turn. The walk is bounded, and
 * running out of budget is a problem (unsafe), as is a directory others can
 * traverse that we cannot read (root without CAP_DAC_OVERRIDE, as workers run,
 * cannot read a root directory of mode 0311). true when a problem was found.
 */
static bool walk_dir(struct walk *w, int dfd, size_t len)
{
	DIR *d;

	if (w->budget->depth == 0) {
		close(dfd);
		problem(w, BPFFS_TOO_LARGE, NULL, 0);
		return true;
	}
	d = fdopendir(dfd);
	if (!d) {
		problem(w, BPFFS_UNREADABLE, NULL, errno);
		close(dfd);
		return true;
	}
	w->budget->depth--;
	for (;;) {
		struct dirent *e;
		struct stat st;
		size_t sublen;
		int sub, n;

		errno = 0;
		e = readdir(d);
		if (!e) {
			w->path[len] = '\0';
			if (errno != 0)
				problem(w, BPFFS_UNREADABLE, NULL, errno);
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (w->budget->entries == 0) {
			problem(w, BPFFS_TOO_LARGE, NULL, 0);
			break;
		}
		w->budget->entries--;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue; /* pins and links: only directories take new pins */
		n = snprintf(w->path + len, sizeof(w->path) - len, "/%s", e->d_name);
		sublen = n < 0				     ? len
			 : len + (size_t)n < sizeof(w->path) ? len + (size_t)n
							     : sizeof(w->path) - 1;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile */
			problem(w, BPFFS_UNREADABLE, NULL, errno);
			break;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
			continue;
		if (writable_by_others(&st)) {
			problem(w, BPFFS_WRITABLE, &st, 0);
			break;
		}
		if (!traversable_by_others(&st))
			continue; /* nothing below is reachable by others: not walked */
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			problem(w, BPFFS_UNREADABLE, &st, errno);
			break;
		}
		if (walk_dir(w, sub, sublen))
			break;
	}
	w->budget->depth++;
	closedir(d);
	return w->m->problem != BPFFS_OK;
}

/* The tree at path; bpffs: only if path is (still) a bpffs, else it is hidden. */
static void check(const char *path, bool bpffs, struct bpffs_budget *budget, struct bpffs_mount *m)
{
	struct walk w = {.budget = budget, .m = m};
	struct statfs sfs;
	struct stat st;
	int dfd;

	*m = (struct bpffs_mount){};
	copy_path(m->path, sizeof(m->path), path);
	copy_path(w.path, sizeof(w.path), path);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (bpffs && (statfs(path, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC))) {
		/* Hidden under another mount, or gone: what is below cannot be seen. Unsafe. */
		problem(&w, BPFFS_HIDDEN, NULL, errno);
	} else {
		m->mode = st.st_mode & 07777;
		m->uid = st.st_uid;
		m->gid = st.st_gid;
		w.dev = st.st_dev;
		if (writable_by_others(&st)) {
			problem(&w, BPFFS_WRITABLE, &st, 0);
		} else if (traversable_by_others(&st)) {
			dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0)
				problem(&w, BPFFS_UNREADABLE, &st, errno);
			else
				walk_dir(&w, dfd, strlen(w.path));
		}
	}
}

void bpffs_check_tree(const char *path, struct bpffs_budget *budget, struct bpffs_mount *m)
{
	check(path, false, budget, m);
}

void bpffs_describe(const struct bpffs_mount *m, char *what, size_t what_size, char *fix,
		    size_t fix_size)
{
	bool at_root = strcmp(m->at, m->path) == 0;

	what[0] = fix[0] = '\0';
	switch (m->problem) {
	case BPFFS_OK:
		return;
	case BPFFS_WRITABLE:
		if (at_root)
			snprintf(what, what_size,
				 "the bpffs at %s is writable by users other than root (mode %04o, "
				 "owner %u)",
				 m->path, (unsigned)m->mode, (unsigned)m->uid);
		else
			snprintf(what, what_size,
				 "the directory %s on the bpffs at %s is writable by users other "
				 "than root (mode %04o, owner %u, group %u)",
				 m->at, m->path, (unsigned)m->at_mode, (unsigned)m->at_uid,
				 (unsigned)m->at_gid);
		break;
	case BPFFS_UNREADABLE:
		snprintf(what, what_size,
			 "the directory %s on the bpffs at %s, which users other than root can "
			 "enter, cannot be read (%s), so nobody can tell whether they could pin "
			 "there",
			 m->at, m->path, strerror(m->at_errno));
		break;
	case BPFFS_TOO_LARGE:
		snprintf(what, what_size,
			 "the bpffs at %s has more than %d entries, or directories more than %d "
			 "deep, that users other than root can reach: more than the broker checks",
			 m->path, BPFFS_WALK_MAX_ENTRIES, BPFFS_WALK_MAX_DEPTH);
		break;
	case BPFFS_HIDDEN:
		snprintf(what, what_size,
			 "the bpffs mounted at %s cannot be checked (its mount point is hidden "
			 "under another mount, or gone)",
			 m->path);
		snprintf(fix, fix_size, "it is unmounted (umount %s)", m->path);
		return;
	}
	if (m->problem == BPFFS_WRITABLE && at_root)
		snprintf(fix, fix_size,
			 "it is remounted with mode=0700 (mount -o remount,mode=0700 %s)", m->path);
	else
		snprintf(fix, fix_size,
			 "every directory on it that users other than root can enter is root's, "
			 "readable by root and writable by nobody else (chown root, chmod "
			 "u+r,go-w), "
			 "or it is remounted with mode=0700 (mount -o remount,mode=0700 %s)",
			 m->path);
}

int bpffs_mounts(struct bpffs_mount *mounts, size_t max)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	struct bpffs_budget budget = {BPFFS_WALK_MAX_ENTRIES, BPFFS_WALK_MAX_DEPTH};
	char line[4096];
	size_t n = 0;

	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *save = NULL, *mountpoint = NULL, *fstype = NULL, *t;
		int field = 0;
		bool after_sep = false;

		for (t = strtok_r(line, " \n", &save); t;
		     t = strtok_r(NULL, " \n", &save), field++) {
			if (field == 4)
				mountpoint = t;
			else if (field > 5 && !after_sep && strcmp(t, "-") == 0)
				after_sep = true;
			else if (after_sep) {
				fstype = t;
				break;
			}
		}
		if (!mountpoint || !fstype || strcmp(fstype, "bpf") != 0)
			continue;
		if (n < max) {
			char path[sizeof(mounts[n].path)];

			snprintf(path, sizeof(path), "%s", mountpoint);
			unescape(path);
			check(path, true, &budget, &mounts[n]);
		}
		n++;
	}
	return n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
}

int bpffs_find_writable(struct bpffs_mount *ret)
{
	struct bpffs_mount mounts[64];
	int n = bpffs_mounts(mounts, 64);

	if (n < 0)
		return n;
	if (n > 64)
		return -E2BIG; /* more than we look at: unsafe */
	for (int i = 0; i < n; i++)
		if (mounts[i].problem != BPFFS_OK) {
			*ret = mounts[i];
			return 1;
		}
	return 0;
}
