/* SPDX-License-Identifier: MIT */
/*
 * Numbers, users and groups as people and clients write them: strict decimal
 * numbers, and user and group names looked up in the user database with the
 * reentrant getpwnam_r/getgrnam_r/getpwuid_r (workers and tests may look up
 * from several threads; nothing here keeps static state).
 *
 * A string of decimal digits is always a number, never a name (as systemd and
 * shadow refuse all-digit user names). Anything else is a name, and must look
 * like one before it is passed to the user database (parse_name_is_valid()).
 *
 * And the names of the broker's objects, as the protocol and the policy take them.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest user or group name looked up (LOGIN_NAME_MAX without the NUL). */
#define PARSE_NAME_MAX 255

/*
 * s as a decimal number: digits only (no sign, no space, no "0x"; leading
 * zeros are fine). -EINVAL if s is not that (NULL or empty included),
 * -ERANGE if it is a number over max.
 */
int parse_u64(const char *s, uint64_t max, uint64_t *ret);

/*
 * A uid as a decimal number (0 to 4294967294), or a user name looked up with
 * getpwnam_r. -EINVAL: neither a number nor a valid name; -ERANGE: a number
 * over 4294967294, or a user whose uid is (uid_t)-1, which means "no uid" to
 * the kernel and is never returned; -ENOENT: no such user; other negative
 * errnos when the lookup itself fails (-ENOMEM, -EIO, -ENOBUFS for an entry
 * too large to read).
 */
int parse_uid(const char *s, uid_t *ret);
/* The same for groups, with getgrnam_r. */
int parse_gid(const char *s, gid_t *ret);

/* The name of uid's user (getpwuid_r), malloc'ed in *ret. -ENOENT if there is none. */
int uid_to_name(uid_t uid, char **ret);
/* The same with the user's primary group; either output may be NULL. */
int uid_to_user(uid_t uid, char **ret_name, gid_t *ret_gid);

/*
 * Could s name a user or group? 1 to PARSE_NAME_MAX bytes, not all digits (that
 * is a number), no control characters, ':' or '/' (the passwd and group files'
 * separators, and paths), not starting with '-' or '+' (options, and NIS
 * compat entries in passwd and group files), no space at either end, not "."
 * or "..". Otherwise as liberal as the directories behind NSS (sssd and
 * winbind names hold '@', '\', '.' and inner spaces).
 */
bool parse_name_is_valid(const char *s);

/* The longest name of a named object or a vetted system object. */
#define PARSE_OBJECT_NAME_MAX 64

/*
 * Could s name a named object (NAMED.md) or a vetted system object (POLICY.md)? 1 to
 * PARSE_OBJECT_NAME_MAX of [A-Za-z0-9_-], not starting with '-' (an option): never '/', '.'
 * or "..", so always one path component. NULL is not.
 */
bool parse_object_name_is_valid(const char *s);
