/* SPDX-License-Identifier: MIT */
#include "bpffs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* Root may write anything; this is about everyone else. */
static bool writable_by_others(const struct stat *st)
{
	return (st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != 0) ||
	       ((st->st_mode & S_IWUSR) && st->st_uid != 0);
}

/*
 * A directory under a mount root others can traverse may itself be open to
 * them (someone ran chmod 1777 on it): look a few levels down. bpffs trees
 * are small; the walk is bounded anyway.
 */
static bool subtree_writable_by_others(int dfd, int depth, unsigned *budget)
{
	DIR *d;
	struct dirent *e;
	bool found = false;

	if (depth == 0)
		return false;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return false;
	}
	while (!found && (e = readdir(d)) && (*budget)-- > 0) {
		struct stat st;
		int sub;

		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (writable_by_others(&st)) {
			found = true;
			break;
		}
		if (!(st.st_mode & S_IXOTH))
			continue; /* others can't go further down */
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sub >= 0)
			found = subtree_writable_by_others(sub, depth - 1, budget);
	}
	closedir(d);
	return found;
}

int bpffs_mounts(struct bpffs_mount *mounts, size_t max)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	size_t n = 0;

	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *save = NULL, *mountpoint = NULL, *fstype = NULL, *t;
		int field = 0;
		bool after_sep = false;
		struct stat st;

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
			struct bpffs_mount *m = &mounts[n];

			snprintf(m->path, sizeof(m->path), "%s", mountpoint);
			unescape(m->path);
			if (stat(m->path, &st) < 0) {
				/* Hidden under another mount, or gone: judge it unsafe. */
				*m = (struct bpffs_mount){.writable_by_others = true};
				snprintf(m->path, sizeof(m->path), "%s", mountpoint);
			} else {
				m->mode = st.st_mode & 07777;
				m->uid = st.st_uid;
				m->gid = st.st_gid;
				m->writable_by_others = writable_by_others(&st);
				if (!m->writable_by_others && (st.st_mode & S_IXOTH)) {
					unsigned budget = 1024;
					int dfd = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

					if (dfd >= 0)
						m->writable_by_others =
							subtree_writable_by_others(dfd, 4, &budget);
				}
			}
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
		if (mounts[i].writable_by_others) {
			*ret = mounts[i];
			return 1;
		}
	return 0;
}
