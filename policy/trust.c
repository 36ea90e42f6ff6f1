// SPDX-License-Identifier: MIT
/*
 * The broker's configuration is root's: see trust.h. The path is walked from
 * "/" one component at a time, each opened with O_PATH|O_NOFOLLOW relative to
 * the directory before it and checked with fstat() on what was opened, so
 * what is checked is what is used: nobody but root can change a directory
 * that passed (or, in a sticky one, the root-owned entry we took from it)
 * between the check and the next step. Symbolic links are read and their
 * targets walked the same way, so a link into a user's directory is refused
 * for the directory, whoever owns the file.
 */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/macro.h"

/* Directories deep; more is refused, not cut off. */
#define TRUST_MAX_DEPTH 64
/* Symbolic links followed for one path, as the kernel's MAXSYMLINKS. */
#define TRUST_MAX_LINKS 40

static const char why[] = "the broker reads only root's configuration";

struct walk {
	const char *label; /* what messages name: the policy file or directory as given */
	char **error;
	int fds[TRUST_MAX_DEPTH]; /* the directories walked into; fds[0] is "/" */
	size_t lens[TRUST_MAX_DEPTH]; /* strlen(path) before each was appended */
	size_t depth;
	char path[PATH_MAX]; /* the real path of fds[depth - 1] */
	unsigned links;
	bool direct; /* no link followed: the end of the walk is the label itself */
};

static void walk_done(struct walk *w)
{
	for (size_t i = 0; i < w->depth; i++)
		safe_close(w->fds[i]);
	w->depth = 0;
}

/*
 * Root is trusted; so is the user the process runs as (the daemon is root,
 * but a test or an administrator's --check-config may run as someone else,
 * who trusts their own files as much as the process itself).
 */
static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static const char *writers(mode_t m)
{
	if ((m & S_IWGRP) && (m & S_IWOTH))
		return "group and others";
	return (m & S_IWGRP) ? "group" : "others";
}

/* path joined with name, in buf; false if it does not fit. */
static bool path_join(char buf[static PATH_MAX], const char *path, const char *name)
{
	int n = snprintf(buf, PATH_MAX, "%s%s%s", path, strcmp(path, "/") == 0 ? "" : "/", name);

	return n >= 0 && n < PATH_MAX;
}

enum role {
	ROLE_ON_THE_WAY, /* a directory or link passed through */
	ROLE_END, /* the file or directory the label names */
};

/*
 * Is st, at path, one of root's that nobody else can change? Group write
 * counts whatever the group (gid 0 included: group root may have members who
 * are not root), and with a POSIX ACL the group bits are the ACL's mask, so
 * any named user or group allowed to write shows there too.
 */
static int check(struct walk *w, const struct stat *st, const char *path, enum role role)
{
	const char *kind = S_ISLNK(st->st_mode) ? "a symbolic link on its way"
			   : role == ROLE_END ? (S_ISDIR(st->st_mode) ? "the directory it links to"
								      : "the file it links to")
					      : "a directory on its way";
	bool self = role == ROLE_END && w->direct;
	char reason[128];

	if (!owner_trusted(st->st_uid)) {
		if (geteuid() == 0)
			snprintf(reason, sizeof(reason), "owned by uid %u, not root",
				 (unsigned)st->st_uid);
		else
			snprintf(reason, sizeof(reason), "owned by uid %u, neither root nor uid %u",
				 (unsigned)st->st_uid, (unsigned)geteuid());
	} else if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		/*
		 * A sticky directory (/tmp, 1777) on the way is writable by others
		 * only for entries of their own: nobody but root (and the owner of
		 * the directory, which must be root) can rename or remove root's
		 * entry in it, and every entry we take is checked to be root's. The
		 * policy directory itself is read whole, so nobody may add to it.
		 */
		if (role == ROLE_ON_THE_WAY && S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
			return 0;
		snprintf(reason, sizeof(reason), "writable by %s (mode %04o)", writers(st->st_mode),
			 (unsigned)(st->st_mode & 07777));
	} else {
		return 0;
	}
	if (self)
		return error_setf(w->error, -EPERM, "%s: %s: %s", w->label, reason, why);
	return error_setf(w->error, -EPERM, "%s: %s (%s) is %s: %s", w->label, path, kind, reason,
			  why);
}

static int walk_push(struct walk *w, int fd, const char *name)
{
	char next[PATH_MAX];

	if (w->depth == TRUST_MAX_DEPTH) {
		safe_close(fd);
		return error_setf(w->error, -ELOOP, "%s: more than %d directories deep", w->label,
				  TRUST_MAX_DEPTH);
	}
	if (!path_join(next, w->path, name)) {
		safe_close(fd);
		return error_setf(w->error, -ENAMETOOLONG, "%s: path too long", w->label);
	}
	w->lens[w->depth] = strlen(w->path);
	w->fds[w->depth++] = fd;
	snprintf(w->path, sizeof(w->path), "%s", next);
	return 0;
}

static void walk_pop(struct walk *w)
{
	if (w->depth <= 1)
		return; /* "/.." is "/" */
	w->depth--;
	safe_close(w->fds[w->depth]);
	w->path[w->lens[w->depth]] = '\0';
	if (!w->path[0])
		snprintf(w->path, sizeof(w->path), "/");
}

static int walk_start(struct walk *w)
{
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		int k = error_setf(w->error, negative_errno(), "%s: cannot open /: %s", w->label,
				   strerror(errno));

		safe_close(fd);
		return k;
	}
	w->fds[0] = fd;
	w->depth = 1;
	snprintf(w->path, sizeof(w->path), "/");
	return check(w, &st, "/", ROLE_ON_THE_WAY);
}

/* The end of the walk, a directory: strictly checked, then opened for reading. */
static int walk_end_dir(struct walk *w)
{
	struct stat st;
	int fd, k;

	if (fstat(w->fds[w->depth - 1], &st) < 0)
		return error_setf(w->error, negative_errno(), "%s: cannot stat %s: %s", w->label,
				  w->path, strerror(errno));
	k = check(w, &st, w->path, ROLE_END);
	if (k < 0)
		return k;
	fd = openat(w->fds[w->depth - 1], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_setf(w->error, negative_errno(), "%s: cannot open %s: %s", w->label,
				  w->path, strerror(errno));
	return fd;
}

/* The end of the walk, a regular file in the top directory: opened, and the open file checked. */
static int walk_end_file(struct walk *w, const char *name, const struct stat *seen,
			 const char *path)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	int k;

	/* O_NONBLOCK: had it become a FIFO, open() must not hang the daemon. */
	fd = openat(w->fds[w->depth - 1], name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_setf(w->error, negative_errno(), "%s: cannot open %s: %s", w->label,
				  path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_dev != seen->st_dev || st.st_ino != seen->st_ino)
		return error_setf(w->error, -EAGAIN, "%s: %s changed while it was opened", w->label,
				  path);
	k = check(w, &st, path, ROLE_END);
	if (k < 0)
		return k;
	return TAKE_FD(fd);
}

/* Replace what is left to walk with link's target followed by rest (which may point into todo). */
static int walk_follow(struct walk *w, int link_fd, const char *path, char *todo, size_t todo_size,
		       const char *rest)
{
	char target[PATH_MAX];
	_cleanup_free_ char *copy = strdup(rest);
	ssize_t n;
	int k;

	if (!copy)
		return -ENOMEM;
	if (++w->links > TRUST_MAX_LINKS)
		return error_setf(w->error, -ELOOP, "%s: more than %d symbolic links on its way",
				  w->label, TRUST_MAX_LINKS);
	/* An O_PATH fd of a link is read with an empty name. */
	n = readlinkat(link_fd, "", target, sizeof(target));
	if (n < 0)
		return error_setf(w->error, negative_errno(), "%s: cannot read the link %s: %s",
				  w->label, path, strerror(errno));
	if ((size_t)n >= sizeof(target))
		return error_setf(w->error, -ENAMETOOLONG,
				  "%s: the link %s makes the path too long", w->label, path);
	target[n] = '\0';
	k = snprintf(todo, todo_size, "%s/%s", target, copy);
	if (k < 0 || (size_t)k >= todo_size)
		return error_setf(w->error, -ENAMETOOLONG,
				  "%s: the link %s makes the path too long", w->label, path);
	if (target[0] == '/')
		while (w->depth > 1)
			walk_pop(w);
	w->direct = false;
	return 0;
}

/* Walk path to its end; a directory (want_dir) or a regular file, opened for reading. */
static int walk(struct walk *w, const char *path, bool want_dir)
{
	char todo[2 * PATH_MAX];
	char *p = todo;
	int k, n;

	if (path[0] == '/') {
		n = snprintf(todo, sizeof(todo), "%s", path);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return error_setf(w->error, negative_errno(),
					  "%s: cannot find the current directory", w->label);
		n = snprintf(todo, sizeof(todo), "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= sizeof(todo))
		return error_setf(w->error, -ENAMETOOLONG, "%s: path too long", w->label);
	w->direct = true;
	k = walk_start(w);
	if (k < 0)
		return k;

	for (;;) {
		char name[NAME_MAX + 1], entry[PATH_MAX];
		_cleanup_close_ int fd = -EBADF;
		size_t len;
		struct stat st;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > NAME_MAX)
			return error_setf(w->error, -ENAMETOOLONG,
					  "%s: a name on its way is too long", w->label);
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		last = p[strspn(p, "/")] == '\0';
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			walk_pop(w);
			continue;
		}
		if (!path_join(entry, w->path, name))
			return error_setf(w->error, -ENAMETOOLONG, "%s: path too long", w->label);
		fd = openat(w->fds[w->depth - 1], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (w->direct && last)
				return error_setf(w->error, negative_errno(), "%s: cannot open: %s",
						  w->label, strerror(errno));
			return error_setf(w->error, negative_errno(), "%s: cannot open %s: %s",
					  w->label, entry, strerror(errno));
		}
		if (S_ISLNK(st.st_mode)) {
			k = check(w, &st, entry, ROLE_ON_THE_WAY);
			if (k < 0)
				return k;
			k = walk_follow(w, fd, entry, todo, sizeof(todo), p);
			if (k < 0)
				return k;
			p = todo;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			k = check(w, &st, entry, last && want_dir ? ROLE_END : ROLE_ON_THE_WAY);
			if (k < 0)
				return k;
			k = walk_push(w, TAKE_FD(fd), name);
			if (k < 0)
				return k;
			continue;
		}
		if (!last)
			return error_setf(w->error, -ENOTDIR, "%s: %s is not a directory", w->label,
					  entry);
		if (want_dir)
			return error_setf(w->error, -ENOTDIR, "%s: not a directory", w->label);
		if (!S_ISREG(st.st_mode))
			return error_setf(w->error, -EINVAL, "%s: not a regular file", w->label);
		return walk_end_file(w, name, &st, entry);
	}
	if (!want_dir)
		return error_setf(w->error, -EINVAL, "%s: not a regular file", w->label);
	return walk_end_dir(w);
}

int trust_open_dir(const char *path, char **error)
{
	struct walk w = {.label = path, .error = error};
	int k;

	if (!path || !*path)
		return -EINVAL;
	k = walk(&w, path, true);
	walk_done(&w);
	return k;
}

int trust_open_file(const char *dir, const char *name, char **error)
{
	struct walk w = {.label = name, .error = error};
	char path[PATH_MAX];
	int k;

	if (!dir || !name || !*name || strchr(name, '/'))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return error_setf(error, -ENAMETOOLONG, "%s: path too long", name);
	k = walk(&w, path, false);
	walk_done(&w);
	return k;
}
