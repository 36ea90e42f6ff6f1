/* SPDX-License-Identifier: MIT */
/* The load request's params decoded from JSON, each field checked against hostile input. */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/error.h"
#include "common/hex.h"

static int get_name(json_object *o, const char *key, char **ret, char **error)
{
	const char *s;
	int r = proto_get_string(o, key, true, &s, error);

	if (r < 0)
		return r;
	if (s[0] == '\0' || strlen(s) > PROTO_MAX_NAME)
		return error_setf(error, -EINVAL, "\"%s\" must have 1 to %d characters", key,
				  PROTO_MAX_NAME);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int get_array(json_object *params, const char *key, json_object **ret, size_t *ret_n,
		     char **error)
{
	json_object *a;
	size_t n;

	*ret = NULL;
	*ret_n = 0;
	if (!json_object_object_get_ex(params, key, &a) || json_object_is_type(a, json_type_null))
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return error_setf(error, -EINVAL, "\"%s\" must be an array", key);
	n = json_object_array_length(a);
	if (n > PROTO_MAX_CONFIG_ITEMS)
		return error_setf(error, -E2BIG, "\"%s\" has %zu items, at most %d allowed", key, n,
				  PROTO_MAX_CONFIG_ITEMS);
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_object))
			return error_setf(error, -EINVAL, "%s[%zu] must be an object", key, i);
	*ret = a;
	*ret_n = n;
	return 0;
}

/* Prefix an item-level error with where it happened. */
static int item_error(char **error, const char *key, size_t i, int r)
{
	if (error && *error) {
		char *inner = *error;

		*error = NULL;
		error_setf(error, 0, "%s[%zu]: %s", key, i, inner);
		free(inner);
	}
	return r;
}

static int decode_globals(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"name", "value", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "globals", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->globals = calloc(n, sizeof(*req->globals));
	if (!req->globals)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(a, i);
		struct proto_global *out = &req->globals[i];
		const char *hex;

		r = proto_check_keys(g, "global", keys, error);
		if (r >= 0)
			r = get_name(g, "name", &out->name, error);
		req->n_globals = i + 1;
		if (r >= 0)
			r = proto_get_string(g, "value", true, &hex, error);
		if (r >= 0) {
			size_t len = strlen(hex);

			r = len ? hex_decode(hex, len, &out->value, &out->size) : -EINVAL;
			if (r < 0)
				error_setf(error, 0,
					   "\"value\" must be an even number of hex digits");
		}
		if (r < 0)
			return item_error(error, "globals", i, r);
	}
	return 0;
}

static int decode_map_sizes(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"name", "max_entries", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "map_sizes", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->map_sizes = calloc(n, sizeof(*req->map_sizes));
	if (!req->map_sizes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(a, i);
		int64_t entries = 0;

		r = proto_check_keys(m, "map size", keys, error);
		if (r >= 0)
			r = get_name(m, "name", &req->map_sizes[i].name, error);
		req->n_map_sizes = i + 1;
		if (r >= 0)
			r = proto_get_int(m, "max_entries", true, 1, UINT32_MAX, &entries, error);
		if (r < 0)
			return item_error(error, "map_sizes", i, r);
		req->map_sizes[i].max_entries = (uint32_t)entries;
	}
	return 0;
}

/* "freeze": [{"name": MAP}, ...], objects like the other arrays, so each can grow keys. */
static int decode_freeze(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"name", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "freeze", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->freeze = calloc(n, sizeof(*req->freeze));
	if (!req->freeze)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(a, i);

		r = proto_check_keys(m, "freeze", keys, error);
		if (r >= 0)
			r = get_name(m, "name", &req->freeze[i], error);
		req->n_freeze = i + 1;
		if (r < 0)
			return item_error(error, "freeze", i, r);
	}
	return 0;
}

/* Is key there with a value (null counts as absent)? */
static bool has_value(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null);
}

/* "map_defs": [{"name": MAP, "key_size": N, "value_size": N}], either size or both. */
static int decode_map_defs(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"name", "key_size", "value_size", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "map_defs", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->map_defs = calloc(n, sizeof(*req->map_defs));
	if (!req->map_defs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(a, i);
		struct proto_map_def *out = &req->map_defs[i];
		int64_t key = 0, value = 0;

		r = proto_check_keys(m, "map def", keys, error);
		if (r >= 0)
			r = get_name(m, "name", &out->name, error);
		req->n_map_defs = i + 1;
		out->set_key_size = has_value(m, "key_size");
		out->set_value_size = has_value(m, "value_size");
		if (r >= 0 && !out->set_key_size && !out->set_value_size) {
			r = error_setf(error, -EINVAL,
				       "a map def sets \"key_size\", \"value_size\" or both");
		}
		if (r >= 0 && out->set_key_size)
			r = proto_get_int(m, "key_size", true, 0, PROTO_MAX_MAP_KEY_SIZE, &key,
					  error);
		if (r >= 0 && out->set_value_size)
			r = proto_get_int(m, "value_size", true, 0, PROTO_MAX_MAP_VALUE_SIZE,
					  &value, error);
		if (r < 0)
			return item_error(error, "map_defs", i, r);
		out->key_size = (uint32_t)key;
		out->value_size = (uint32_t)value;
	}
	return 0;
}

static int dup_optional(json_object *o, const char *key, char **ret, char **error)
{
	const char *s;
	int r = proto_get_string(o, key, false, &s, error);

	if (r < 0 || !s)
		return r;
	if (s[0] == '\0' || strlen(s) > 64)
		return error_setf(error, -EINVAL, "\"%s\" must have 1 to 64 characters", key);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int decode_programs(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"name", "type", "attach_type", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "programs", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->programs = calloc(n, sizeof(*req->programs));
	if (!req->programs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(a, i);
		struct proto_program_select *out = &req->programs[i];

		r = proto_check_keys(p, "program", keys, error);
		if (r >= 0)
			r = get_name(p, "name", &out->name, error);
		req->n_programs = i + 1;
		if (r >= 0)
			r = dup_optional(p, "type", &out->type, error);
		if (r >= 0)
			r = dup_optional(p, "attach_type", &out->attach_type, error);
		if (r < 0)
			return item_error(error, "programs", i, r);
	}
	return 0;
}

/*
 * "inner_maps": [{"outer": MAP, "type": T, "key_size": N, "value_size": N, "max_entries": N,
 * "map_flags": N (optional)}].
 */
static int decode_inner_maps(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"outer",	  "type",      "key_size", "value_size",
					   "max_entries", "map_flags", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "inner_maps", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->inner_maps = calloc(n, sizeof(*req->inner_maps));
	if (!req->inner_maps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(a, i);
		struct proto_inner_map *out = &req->inner_maps[i];
		int64_t key = 0, value = 0, entries = 0, flags = 0;

		r = proto_check_keys(m, "inner map", keys, error);
		if (r >= 0)
			r = get_name(m, "outer", &out->outer, error);
		req->n_inner_maps = i + 1;
		if (r >= 0) {
			r = dup_optional(m, "type", &out->type, error);
			if (r >= 0 && !out->type) {
				r = error_setf(error, -EINVAL, "missing \"type\"");
			}
		}
		if (r >= 0)
			r = proto_get_int(m, "key_size", true, 0, PROTO_MAX_MAP_KEY_SIZE, &key,
					  error);
		if (r >= 0)
			r = proto_get_int(m, "value_size", true, 0, PROTO_MAX_MAP_VALUE_SIZE,
					  &value, error);
		if (r >= 0)
			r = proto_get_int(m, "max_entries", true, 1, UINT32_MAX, &entries, error);
		if (r >= 0)
			r = proto_get_int(m, "map_flags", false, 0, PROTO_MAX_INNER_MAP_FLAGS,
					  &flags, error);
		if (r < 0)
			return item_error(error, "inner_maps", i, r);
		out->key_size = (uint32_t)key;
		out->value_size = (uint32_t)value;
		out->max_entries = (uint32_t)entries;
		out->map_flags = (uint32_t)flags;
	}
	return 0;
}

/* "attach_targets": [{"program": PROG, "target": NAME}]. */
static int decode_attach_targets(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"program", "target", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "attach_targets", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	req->attach_targets = calloc(n, sizeof(*req->attach_targets));
	if (!req->attach_targets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(a, i);
		struct proto_attach_target *out = &req->attach_targets[i];

		r = proto_check_keys(t, "attach target", keys, error);
		if (r >= 0)
			r = get_name(t, "program", &out->program, error);
		req->n_attach_targets = i + 1;
		if (r >= 0)
			r = get_name(t, "target", &out->target, error);
		if (r >= 0 && !proto_attach_target_is_valid(out->target)) {
			r = error_setf(error, -EINVAL,
				       "\"target\" must be 1 to %d of [A-Za-z0-9_.]",
				       PROTO_MAX_ATTACH_TARGET);
		}
		if (r < 0)
			return item_error(error, "attach_targets", i, r);
	}
	return 0;
}

static int decode_shares(json_object *params, struct proto_load_request *req, char **error)
{
	static const char *const keys[] = {"map", "user", "group", "access", NULL};
	json_object *a;
	size_t n;
	int r = get_array(params, "shares", &a, &n, error);

	if (r < 0 || n == 0)
		return r;
	if (n > PROTO_MAX_SHARES)
		return error_setf(error, -E2BIG, "\"shares\" has %zu entries, more than %d", n,
				  PROTO_MAX_SHARES);
	req->shares = calloc(n, sizeof(*req->shares));
	if (!req->shares)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(a, i);
		struct proto_share *out = &req->shares[i];
		bool has_user = json_object_object_get_ex(o, "user", NULL);
		bool has_group = json_object_object_get_ex(o, "group", NULL);

		req->n_shares = i + 1;
		r = proto_check_keys(o, "share", keys, error);
		if (r >= 0)
			r = get_name(o, "map", &out->map, error);
		if (r >= 0 && has_user == has_group) {
			r = error_setf(error, -EINVAL,
				       "a share names exactly one of \"user\" and \"group\"");
		}
		if (r >= 0)
			r = get_name(o, has_user ? "user" : "group",
				     has_user ? &out->user : &out->group, error);
		if (r >= 0)
			r = get_name(o, "access", &out->access, error);
		/*
		 * A ring buffer is not shared: consuming takes its records from
		 * every other consumer, the owner's included.
		 */
		if (r >= 0 && strcmp(out->access, "consume") == 0) {
			r = error_setf(error, -EINVAL,
				       "\"access\" \"consume\" cannot be shared: consuming a ring "
				       "buffer takes its records from every other consumer");
		} else if (r >= 0 && strcmp(out->access, "ro") != 0 &&
			   strcmp(out->access, "wo") != 0 && strcmp(out->access, "rw") != 0) {
			r = error_setf(error, -EINVAL,
				       "\"access\" must be \"ro\", \"wo\" or \"rw\"");
		}
		if (r < 0)
			return item_error(error, "shares", i, r);
	}
	return 0;
}

/*
 * "system_object": an installed object by name, read by the broker itself: no fd, no
 * "object_fd". The name never becomes more than one path component (no '/', no '.').
 */
static int decode_system_object(json_object *params, size_t n_fds, char **ret, char **error)
{
	json_object *v;
	const char *s;
	int r = proto_get_string(params, "system_object", false, &s, error);

	if (r < 0 || !s)
		return r;
	if (!proto_object_name_is_valid(s))
		return error_setf(error, -EINVAL,
				  "\"system_object\" must be 1 to %d letters, digits, '_' or '-', "
				  "not starting with '-'",
				  PROTO_MAX_OBJECT_NAME);
	if (json_object_object_get_ex(params, "object_fd", &v) &&
	    !json_object_is_type(v, json_type_null))
		return error_setf(error, -EINVAL,
				  "a load names its object by \"object_fd\" or by "
				  "\"system_object\", not both");
	if (n_fds)
		return error_setf(
			error, -EBADF,
			"a load of a system object carries no fd; the message carries %zu", n_fds);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

int proto_load_request_decode(json_object *params, size_t n_fds, struct proto_load_request *ret,
			      char **error)
{
	static const char *const keys[] = {
		"object_fd",  "object_name",	"check_only", "globals",       "map_sizes",
		"programs",   "name",		"shares",     "freeze",	       "map_defs",
		"inner_maps", "attach_targets", "libbpf_log", "system_object", NULL};
	struct proto_load_request req = {};
	int64_t fd_index = -1;
	int r;

	if (!params)
		return error_setf(error, -EINVAL, "load needs \"params\"");
	r = proto_check_keys(params, "load", keys, error);
	if (r < 0)
		return r;
	r = decode_system_object(params, n_fds, &req.system_object, error);
	if (r < 0)
		return r;
	if (!req.system_object) {
		r = proto_get_int(params, "object_fd", true, 0, PROTO_MAX_REQUEST_FDS - 1,
				  &fd_index, error);
		if (r < 0)
			return r;
		if ((size_t)fd_index >= n_fds)
			return error_setf(error, -EBADF,
					  "\"object_fd\" refers to fd %" PRId64
					  " but the message carries %zu",
					  fd_index, n_fds);
		req.object_fd = (size_t)fd_index;
	}
	r = proto_get_bool(params, "check_only", false, &req.check_only, error);
	if (r >= 0)
		r = proto_get_bool(params, "libbpf_log", false, &req.libbpf_log, error);
	if (r >= 0 && json_object_object_get_ex(params, "object_name", NULL))
		r = dup_optional(params, "object_name", &req.object_name, error);
	if (r >= 0)
		r = decode_globals(params, &req, error);
	if (r >= 0)
		r = decode_map_sizes(params, &req, error);
	if (r >= 0)
		r = decode_programs(params, &req, error);
	if (r >= 0)
		r = decode_freeze(params, &req, error);
	if (r >= 0)
		r = decode_map_defs(params, &req, error);
	if (r >= 0)
		r = decode_inner_maps(params, &req, error);
	if (r >= 0)
		r = decode_attach_targets(params, &req, error);
	if (r >= 0 && json_object_object_get_ex(params, "name", NULL)) {
		r = get_name(params, "name", &req.name, error);
		if (r >= 0 && !proto_object_name_is_valid(req.name)) {
			r = error_setf(error, -EINVAL,
				       "\"name\" must be 1 to %d letters, digits, '_' or '-', not "
				       "starting with '-'",
				       PROTO_MAX_OBJECT_NAME);
		}
	}
	if (r >= 0)
		r = decode_shares(params, &req, error);
	if (r >= 0 && req.n_shares && !req.name) {
		r = error_setf(error, -EINVAL,
			       "\"shares\" needs \"name\": only named objects are shared");
	}
	if (r < 0) {
		proto_load_request_done(&req);
		return r;
	}
	*ret = req;
	return 0;
}
