// SPDX-License-Identifier: MIT
/*
 * Reading the policy directory: its "*.json" drop-ins in name order, each
 * opened only if root's (trust.h), bounded in size, kept as one snapshot (for
 * the exec'd worker spawner, which parses the same text) and parsed into one
 * policy.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "internal.h"
#include "policy.h"
#include "trust.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct policy *, policy_free);

static int read_policy_file(const char *dir, const char *name, char **ret, char **error)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct stat st;

	/* Only root's file, through root's directories and links (trust.h). */
	fd = trust_open_file(dir, name, error);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return error_setf(error, negative_errno(), "%s: cannot stat: %s", name,
				  strerror(errno));
	if (st.st_size > POLICY_MAX_FILE_BYTES)
		return error_setf(error, -EFBIG, "%s: file is larger than %d bytes", name,
				  POLICY_MAX_FILE_BYTES);

	/* The size may change under us: read at most one byte more than allowed. */
	buf = malloc(POLICY_MAX_FILE_BYTES + 2);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + len, POLICY_MAX_FILE_BYTES + 1 - len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return error_setf(error, negative_errno(), "%s: cannot read: %s", name,
					  strerror(errno));
		}
		if (k == 0)
			break;
		len += (size_t)k;
		if (len > POLICY_MAX_FILE_BYTES)
			return error_setf(error, -EFBIG, "%s: file is larger than %d bytes", name,
					  POLICY_MAX_FILE_BYTES);
	}
	if (memchr(buf, '\0', len))
		return error_setf(error, -EINVAL, "%s: not valid JSON: file contains a NUL byte",
				  name);
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Sorted names of the "*.json" entries of dfd (hidden files excluded, like the shell glob). */
static int list_json_files(int dfd, const char *dir, char ***ret, size_t *ret_n, char **error)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, allocated = 0;
	struct dirent *de;
	int fd;

	fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return error_setf(error, negative_errno(), "%s: cannot read: %s", dir,
				  strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		int r = error_setf(error, negative_errno(), "%s: cannot read: %s", dir,
				   strerror(errno));

		safe_close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno != 0) {
				int r = error_setf(error, negative_errno(), "%s: cannot read: %s",
						   dir, strerror(errno));
				free_names(names, n);
				return r;
			}
			break;
		}
		if (fnmatch("*.json", de->d_name, FNM_PERIOD) != 0)
			continue;
		if (n == allocated) {
			size_t want = allocated ? allocated * 2 : 16;
			char **grown = reallocarray(names, want, sizeof(*names));

			if (!grown)
				goto oom;
			names = grown;
			allocated = want;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), strcmp_ptr);
	*ret = names;
	*ret_n = n;
	return 0;
oom:
	free_names(names, n);
	return -ENOMEM;
}

int policy_load_dir(const char *dir, policy_warn_fn warn, void *userdata, struct policy **ret,
		    char **error)
{
	_cleanup_free_ char *snap = NULL;
	size_t size = 0;
	int r;

	if (!dir || !ret)
		return -EINVAL;
	/* One way of reading the files: the daemon's spawner parses a snapshot too. */
	r = policy_snapshot_dir(dir, warn, userdata, &snap, &size, error);
	if (r < 0)
		return r;
	return policy_load_snapshot(snap, size, warn, userdata, ret, error);
}

/* ---- Snapshots ---- */

/*
 * A snapshot is "NAME\0TEXT\0" for each file, in load order: files have no
 * NUL bytes (read_policy_file() refuses them) and names none either.
 */
static int snapshot_append(char **buf, size_t *size, const char *name, const char *text)
{
	size_t nl = strlen(name) + 1, tl = strlen(text) + 1;
	char *grown = realloc(*buf, *size + nl + tl);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + *size, name, nl);
	memcpy(grown + *size + nl, text, tl);
	*buf = grown;
	*size += nl + tl;
	return 0;
}

int policy_snapshot_dir(const char *dir, policy_warn_fn warn, void *userdata, char **ret,
			size_t *ret_size, char **error)
{
	_cleanup_close_ int dfd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	char **names = NULL;
	size_t n_names = 0, size = 0;
	int r = 0;

	if (!dir || !ret || !ret_size)
		return -EINVAL;
	/* Root's directory, as every directory above it (trust.h). */
	dfd = trust_open_dir(dir, error);
	if (dfd == -ENOENT) {
		if (error) {
			free(*error);
			*error = NULL;
		}
		if (warn) {
			_cleanup_free_ char *m = NULL;

			if (asprintf(&m,
				     "%s: policy directory does not exist; the broker allows "
				     "nothing",
				     dir) < 0)
				return -ENOMEM;
			warn(userdata, m);
		}
		*ret = NULL;
		*ret_size = 0;
		return 0;
	}
	if (dfd < 0)
		return dfd;
	r = list_json_files(dfd, dir, &names, &n_names, error);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_names && r >= 0; i++) {
		_cleanup_free_ char *text = NULL;

		r = read_policy_file(dir, names[i], &text, error);
		if (r >= 0)
			r = snapshot_append(&buf, &size, names[i], text);
	}
	free_names(names, n_names);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int policy_load_snapshot(const char *buf, size_t size, policy_warn_fn warn, void *userdata,
			 struct policy **ret, char **error)
{
	_cleanup_(policy_freep) struct policy *p = policy_new();
	size_t off = 0;
	int r;

	if (!p)
		return -ENOMEM;
	while (off < size) {
		const char *name = buf + off, *text, *end;

		end = memchr(name, '\0', size - off);
		if (!end || (size_t)(end + 1 - buf) >= size)
			return error_setf(error, -EINVAL, "policy snapshot: truncated");
		text = end + 1;
		end = memchr(text, '\0', size - (size_t)(text - buf));
		if (!end)
			return error_setf(error, -EINVAL, "policy snapshot: truncated");
		r = policy_load_string(p, name, text, warn, userdata, error);
		if (r < 0)
			return r;
		off = (size_t)(end + 1 - buf);
	}
	*ret = TAKE_PTR(p);
	return 0;
}
