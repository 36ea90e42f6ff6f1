/* SPDX-License-Identifier: MIT */
/*
 * Strict decimal numbers, users and groups by name or number through the reentrant NSS calls,
 * and the names of the broker's objects.
 */
#include "parse.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* uid_t and gid_t are 32 bits; all ones means "no id" (setresuid(-1), chown(-1)). */
#define PARSE_ID_MAX (UINT32_MAX - 1)
/* getpw*_r/getgr*_r buffers grow up to this (groups with many members are large). */
#define PARSE_LOOKUP_BUF_MAX (16u * 1024 * 1024)

int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	bool over = false;

	if (!s || !*s)
		return -EINVAL;
	/* Not strtoull: it takes a sign, leading space and (base 0) "0x"; and wraps "-1". */
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		/* Read on past an overflow: "99...9x" is not a number, not one out of range. */
		if (over || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			over = true;
	}
	if (over || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

bool parse_name_is_valid(const char *s)
{
	size_t len = s ? strlen(s) : 0;
	uint64_t ignored;

	if (len == 0 || len > PARSE_NAME_MAX)
		return false;
	if (parse_u64(s, UINT64_MAX, &ignored) != -EINVAL)
		return false; /* all digits: a number */
	if (s[0] == '-' || s[0] == '+' || s[0] == ' ' || s[len - 1] == ' ')
		return false;
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ':' || *p == '/')
			return false;
	return true;
}

enum lookup {
	LOOKUP_USER_BY_NAME,
	LOOKUP_GROUP_BY_NAME,
	LOOKUP_USER_BY_UID,
};

/*
 * One NSS lookup with a buffer sized by sysconf() and doubled on ERANGE.
 * The user's or group's id in *ret_id; for LOOKUP_USER_BY_UID the name
 * (malloc'ed) in *ret_name and the primary group in *ret_id.
 */
static int lookup(enum lookup what, const char *name, uid_t uid, uint32_t *ret_id, char **ret_name)
{
	long hint =
		sysconf(what == LOOKUP_GROUP_BY_NAME ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 1024;

	for (;;) {
		_cleanup_free_ char *buf = malloc(size);
		struct passwd pw, *pwr = NULL;
		struct group gr, *grr = NULL;
		int r;

		if (!buf)
			return -ENOMEM;
		errno = 0;
		if (what == LOOKUP_GROUP_BY_NAME)
			r = getgrnam_r(name, &gr, buf, size, &grr);
		else if (what == LOOKUP_USER_BY_NAME)
			r = getpwnam_r(name, &pw, buf, size, &pwr);
		else
			r = getpwuid_r(uid, &pw, buf, size, &pwr);
		if (r == 0) {
			char *n = NULL;

			if (what == LOOKUP_GROUP_BY_NAME ? !grr : !pwr)
				return -ENOENT;
			if (what == LOOKUP_GROUP_BY_NAME) {
				*ret_id = grr->gr_gid;
				return 0;
			}
			if (what == LOOKUP_USER_BY_NAME) {
				*ret_id = pwr->pw_uid;
				return 0;
			}
			if (ret_name) {
				n = strdup(pwr->pw_name);
				if (!n)
					return -ENOMEM;
				*ret_name = n;
			}
			*ret_id = pwr->pw_gid;
			return 0;
		}
		/* Some NSS modules report "not found" as an error. */
		if (r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
			return -ENOENT;
		if (r != ERANGE)
			return r > 0 ? -r : -EIO;
		/* Not -ERANGE: that means an id out of range to callers. */
		if (size >= PARSE_LOOKUP_BUF_MAX)
			return -ENOBUFS;
		size *= 2;
	}
}

static int parse_id(const char *s, bool group, uint32_t *ret)
{
	uint64_t v;
	uint32_t id = 0;
	int r;

	r = parse_u64(s, PARSE_ID_MAX, &v);
	if (r == 0) {
		*ret = (uint32_t)v;
		return 0;
	}
	if (r != -EINVAL)
		return r;
	if (!parse_name_is_valid(s))
		return -EINVAL;
	r = lookup(group ? LOOKUP_GROUP_BY_NAME : LOOKUP_USER_BY_NAME, s, 0, &id, NULL);
	if (r < 0)
		return r;
	/* An entry with id -1 would be "no id" to the kernel: never handed out. */
	if (id > PARSE_ID_MAX)
		return -ERANGE;
	*ret = id;
	return 0;
}

int parse_uid(const char *s, uid_t *ret)
{
	uint32_t id = 0;
	int r = parse_id(s, false, &id);

	if (r < 0)
		return r;
	*ret = (uid_t)id;
	return 0;
}

int parse_gid(const char *s, gid_t *ret)
{
	uint32_t id = 0;
	int r = parse_id(s, true, &id);

	if (r < 0)
		return r;
	*ret = (gid_t)id;
	return 0;
}

int uid_to_user(uid_t uid, char **ret_name, gid_t *ret_gid)
{
	uint32_t gid;
	int r;

	if (uid > PARSE_ID_MAX)
		return -ENOENT; /* no user is (uid_t)-1 */
	r = lookup(LOOKUP_USER_BY_UID, NULL, uid, &gid, ret_name);
	if (r < 0)
		return r;
	if (ret_gid)
		*ret_gid = (gid_t)gid;
	return 0;
}

int uid_to_name(uid_t uid, char **ret)
{
	return uid_to_user(uid, ret, NULL);
}

bool parse_object_name_is_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > PARSE_OBJECT_NAME_MAX || s[0] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}
