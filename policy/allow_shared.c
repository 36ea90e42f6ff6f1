// SPDX-License-Identifier: MIT
/* Parsing "allow.shared": maps of other users' named objects the rule's principals may use. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int get_pattern(struct parse_ctx *c, const char *path, json_object *o, const char *key,
		       char **ret)
{
	char kpath[JPATH_MAX];
	json_object *v;
	int r;

	path_key(kpath, path, key);
	if (!json_object_object_get_ex(o, key, &v))
		return parse_fail(c, path, "missing key \"%s\"", key);
	r = expect_type(c, kpath, v, json_type_string);
	if (r < 0)
		return r;
	if (!*json_object_get_string(v))
		return parse_fail(c, kpath, "empty pattern");
	*ret = strdup(json_object_get_string(v));
	return *ret ? 0 : -ENOMEM;
}

/*
 * "shared": [{"owner": USER-or-UID, "object": GLOB, "map": GLOB, "access": MODE}].
 * An owner that doesn't exist never matches (warning), as in "match".
 */
int parse_shared(struct parse_ctx *c, const char *path, json_object *arr, struct policy_rule *out)
{
	static const char *const keys[] = {"owner", "object", "map", "access"};
	size_t n = json_object_array_length(arr);
	char epath[JPATH_MAX], kpath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	int r;

	if (n == 0)
		return 0;
	out->shared = calloc(n, sizeof(*out->shared));
	if (!out->shared)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e, *v;
		struct policy_share_rule *sr = &out->shared[out->n_shared];
		const char *owner;
		uint32_t uid;

		r = get_element(c, path, arr, i, json_type_object, epath, &e);
		if (r < 0)
			return r;
		r = expect_object(c, epath, e, keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
		path_key(kpath, epath, "owner");
		if (!json_object_object_get_ex(e, "owner", &v))
			return parse_fail(c, epath, "missing key \"owner\"");
		r = expect_type(c, kpath, v, json_type_string);
		if (r < 0)
			return r;
		owner = json_object_get_string(v);
		if (parse_id(owner, strlen(owner), &uid) < 0) {
			r = parse_name_entry(c, kpath, kpath, v, false, &uid);
			if (r < 0)
				return r;
			if (r == 0)
				continue; /* never matches */
		}
		path_key(kpath, epath, "access");
		if (!json_object_object_get_ex(e, "access", &v))
			return parse_fail(c, epath, "missing key \"access\"");
		r = expect_type(c, kpath, v, json_type_string);
		if (r < 0)
			return r;
		if (map_access_from_string(json_object_get_string(v), &sr->access) < 0)
			return parse_fail(c, kpath,
					  "unknown access \"%s\" (expected rw, ro, wo or none)",
					  printable(pbuf, json_object_get_string(v)));
		/* Consuming takes the records from every other consumer, the owner's too. */
		if (sr->access & MAP_ACCESS_CONSUME)
			return parse_fail(c, kpath,
					  "\"consume\" cannot be shared: consuming a ring buffer "
					  "takes its records from every other consumer, so ring "
					  "buffers go to their owner only");
		sr->owner = uid;
		r = get_pattern(c, epath, e, "object", &sr->object);
		if (r >= 0)
			r = get_pattern(c, epath, e, "map", &sr->map);
		if (r < 0) {
			free(sr->object);
			free(sr->map);
			*sr = (struct policy_share_rule){};
			return r;
		}
		out->n_shared++;
	}
	return 0;
}
