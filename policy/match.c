// SPDX-License-Identifier: MIT
/*
 * Parsing a rule's "match": uids and uid ranges, users and groups (looked up
 * when the policy is loaded), and systemd unit and slice patterns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/parse.h"
#include "internal.h"

/* systemd's UNIT_NAME_MAX is 256 with the NUL. */
#define UNIT_NAME_MAX 255

/* Decimal digits only, 0..POLICY_MAX_ID, in the first len bytes of s. */
int parse_id(const char *s, size_t len, uint32_t *ret)
{
	char buf[11]; /* 4294967294 and the NUL */
	uint64_t v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_u64(buf, POLICY_MAX_ID, &v) < 0)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

static int parse_uid_entry(struct parse_ctx *c, const char *path, json_object *o,
			   struct uid_range *ret)
{
	char pbuf[PRINTABLE_BUF];
	const char *s, *dash;
	uint32_t first, last;

	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (v < 0 || v > (int64_t)POLICY_MAX_ID)
			return parse_fail(c, path, "uid %s out of range (0 to %u)",
					  json_object_to_json_string(o), POLICY_MAX_ID);
		ret->first = ret->last = (uid_t)v;
		return 0;
	}
	if (!json_object_is_type(o, json_type_string))
		return parse_fail(c, path, "expected a string or an integer, got %s",
				  json_type_phrase(json_object_get_type(o)));

	s = json_object_get_string(o);
	dash = strchr(s, '-');
	if (!dash) {
		if (parse_id(s, strlen(s), &first) < 0)
			goto bad;
		ret->first = ret->last = first;
		return 0;
	}
	if (parse_id(s, (size_t)(dash - s), &first) < 0 ||
	    parse_id(dash + 1, strlen(dash + 1), &last) < 0)
		goto bad;
	if (first > last)
		return parse_fail(c, path, "bad uid range \"%s\" (start %u is greater than end %u)",
				  printable(pbuf, s), first, last);
	ret->first = first;
	ret->last = last;
	return 0;
bad:
	return parse_fail(c, path, "bad uid \"%s\" (expected \"N\" or \"A-B\", decimal, 0 to %u)",
			  printable(pbuf, s), POLICY_MAX_ID);
}

/*
 * Resolve one user or group entry. 1 and *ret when found; 0 (after a warning)
 * when the entry never matches; negative errno on errors. Errors name the
 * entry's path, warnings the list's (the name identifies the entry).
 */
int parse_name_entry(struct parse_ctx *c, const char *list_path, const char *path, json_object *o,
		     bool group, uint32_t *ret)
{
	const char *what = group ? "group" : "user";
	char pbuf[PRINTABLE_BUF];
	const char *name;
	uint64_t number;
	uid_t uid;
	gid_t gid;
	int r, k;

	r = expect_type(c, path, o, json_type_string);
	if (r < 0)
		return r;
	name = json_object_get_string(o);
	if (!*name)
		return parse_fail(c, path, "empty %s name", what);
	/*
	 * Digits are a number to parse_uid() and parse_gid(), never a name: here,
	 * where a name is expected, they would be a uid or gid the administrator
	 * did not mean to grant to (or a user named so, who cannot be told apart).
	 */
	k = parse_u64(name, POLICY_MAX_ID, &number);
	if (k != -EINVAL) {
		if (group)
			return parse_fail(c, path,
					  "\"%s\" is a number, not a group name (groups are "
					  "matched by name)",
					  printable(pbuf, name));
		/* Too many digits for parse_id() (which "shared"'s owner tried first). */
		if (k < 0 || strlen(name) > 10)
			return parse_fail(c, path, "bad uid \"%s\" (decimal, 0 to %u)",
					  printable(pbuf, name), POLICY_MAX_ID);
		return parse_fail(c, path, "\"%s\" is a uid, not a user name (uids go in \"uids\")",
				  printable(pbuf, name));
	}
	if (!parse_name_is_valid(name))
		return parse_fail(
			c, path,
			"\"%s\" is not a valid %s name (1 to %d characters, no control "
			"characters, ':' or '/', not starting with '-' or '+', no space at "
			"either end)",
			printable(pbuf, name), what, PARSE_NAME_MAX);

	r = group ? parse_gid(name, &gid) : parse_uid(name, &uid);
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT) {
		r = parse_warn(c, list_path, "no %s \"%s\"; this entry never matches", what,
			       printable(pbuf, name));
		return r < 0 ? r : 0;
	}
	/* The user database gave id -1, which means "no id" to the kernel. */
	if (r == -ERANGE) {
		r = parse_warn(c, list_path,
			       "%s \"%s\" has id 4294967295, which is no id; this entry never "
			       "matches",
			       what, printable(pbuf, name));
		return r < 0 ? r : 0;
	}
	if (r < 0) {
		r = parse_warn(c, list_path,
			       "cannot look up %s \"%s\": %s; this entry never matches", what,
			       printable(pbuf, name), strerror(-r));
		return r < 0 ? r : 0;
	}
	*ret = group ? (uint32_t)gid : (uint32_t)uid;
	return 1;
}

static bool ends_with_slice(const char *s)
{
	size_t n = strlen(s);

	return n >= 6 && streq(s + n - 6, ".slice");
}

/*
 * systemd unit names: letters, digits, ':', '-', '_', '.', '\' and '@' (for
 * instances), at most UNIT_NAME_MAX; patterns may also use '*', '?', '[', ']'
 * and '!' (matched with FNM_NOESCAPE, so '\' is literal, as in "\x2d").
 */
static bool unit_name_pattern_is_valid(const char *s, bool pattern)
{
	if (!s || !*s || strlen(s) > UNIT_NAME_MAX)
		return false;
	for (const char *p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr(":-_.\\@", *p))
			continue;
		if (pattern && strchr("*?[]!", *p))
			continue;
		return false;
	}
	return true;
}

/*
 * "units", "user_units" (unit patterns that are not slices) or "slices",
 * "user_slices" (patterns of slices): absent, or an array of patterns.
 */
static int parse_unit_patterns(struct parse_ctx *c, const char *parent, json_object *m,
			       const char *key, bool slices, char ***ret, size_t *ret_n)
{
	char path[JPATH_MAX], epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *arr;
	int r;

	r = get_array(c, parent, m, key, &arr, path);
	if (r < 0 || !arr)
		return r;
	r = parse_name_patterns(c, path, arr, unit_name_pattern_is_valid,
				slices ? "slice name" : "unit name", ret, ret_n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < *ret_n; i++) {
		path_index(epath, path, i);
		if (slices && !ends_with_slice((*ret)[i]))
			return parse_fail(c, epath,
					  "\"%s\" is not a slice (slice names end in \".slice\")",
					  printable(pbuf, (*ret)[i]));
		if (!slices && ends_with_slice((*ret)[i]))
			return parse_fail(c, epath, "\"%s\" is a slice; match slices with \"%s\"",
					  printable(pbuf, (*ret)[i]),
					  streq(key, "units") ? "slices" : "user_slices");
	}
	return 0;
}

/*
 * A match's "users" (as uid ranges of one) or "groups" (arr, or NULL when
 * absent), added to out's uids or gids, for which room was made; names
 * that do not exist never match (a warning each).
 */
static int parse_names(struct parse_ctx *c, const char *path, json_object *arr, bool group,
		       struct policy_rule *out)
{
	char epath[JPATH_MAX];
	uint32_t id;
	int r;

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		path_index(epath, path, i);
		r = parse_name_entry(c, path, epath, json_object_array_get_idx(arr, i), group, &id);
		if (r < 0)
			return r;
		if (r == 0)
			continue; /* never matches */
		if (group) {
			out->gids[out->n_gids++] = (gid_t)id;
		} else {
			out->uids[out->n_uids].first = out->uids[out->n_uids].last = (uid_t)id;
			out->n_uids++;
		}
	}
	return 0;
}

int parse_match(struct parse_ctx *c, const char *parent, json_object *rule, struct policy_rule *out)
{
	static const char *const keys[] = {"uids",	 "users",  "groups",	 "units",
					   "user_units", "slices", "user_slices"};
	char path[JPATH_MAX], upath[JPATH_MAX], npath[JPATH_MAX], gpath[JPATH_MAX],
		epath[JPATH_MAX];
	json_object *m, *uids, *users, *groups;
	size_t n_uids, n_users, n_groups;
	int r;

	path_key(path, parent, "match");
	if (!json_object_object_get_ex(rule, "match", &m))
		return parse_warn(c, parent, "no \"match\"; this rule matches nobody");
	r = expect_object(c, path, m, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	r = get_array(c, path, m, "uids", &uids, upath);
	if (r < 0)
		return r;
	r = get_array(c, path, m, "users", &users, npath);
	if (r < 0)
		return r;
	r = get_array(c, path, m, "groups", &groups, gpath);
	if (r < 0)
		return r;

	r = parse_unit_patterns(c, path, m, "units", false, &out->units, &out->n_units);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "user_units", false, &out->user_units,
					&out->n_user_units);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "slices", true, &out->slices, &out->n_slices);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "user_slices", true, &out->user_slices,
					&out->n_user_slices);
	if (r < 0)
		return r;

	n_uids = uids ? json_object_array_length(uids) : 0;
	n_users = users ? json_object_array_length(users) : 0;
	n_groups = groups ? json_object_array_length(groups) : 0;
	out->has_principal = n_uids + n_users + n_groups > 0;
	/* A user names the units of their own manager as they like: alone, that proves nothing. */
	if (!out->has_principal && out->n_user_units + out->n_user_slices > 0) {
		path_key(epath, path, out->n_user_units ? "user_units" : "user_slices");
		return parse_fail(c, epath,
				  "needs \"uids\", \"users\" or \"groups\" in the same match: "
				  "users name their own units and slices, so these identify "
				  "nobody by themselves");
	}
	if (!out->has_principal && out->n_units + out->n_slices == 0)
		return parse_warn(c, path,
				  "no uids, users, groups, units or slices; this rule matches "
				  "nobody");

	if (n_uids + n_users > 0) {
		out->uids = calloc(n_uids + n_users, sizeof(*out->uids));
		if (!out->uids)
			return -ENOMEM;
	}
	if (n_groups > 0) {
		out->gids = calloc(n_groups, sizeof(*out->gids));
		if (!out->gids)
			return -ENOMEM;
	}

	for (size_t i = 0; i < n_uids; i++) {
		path_index(epath, upath, i);
		r = parse_uid_entry(c, epath, json_object_array_get_idx(uids, i),
				    &out->uids[out->n_uids]);
		if (r < 0)
			return r;
		out->n_uids++;
	}
	r = parse_names(c, npath, users, false, out);
	if (r < 0)
		return r;
	return parse_names(c, gpath, groups, true, out);
}
