/* SPDX-License-Identifier: MIT */
/*
 * Params of method "map" (NAMED.md): one operation on a map of a named
 * object, done by the broker for a caller who cannot use bpf() on the fd
 * (kernels before 6.5 with kernel.unprivileged_bpf_disabled set, seccomp
 * profiles that deny bpf()). Decoded by the worker; strict like "load":
 * params the op does not take are errors, so a client never believes a
 * param had an effect it didn't.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/hex.h"
#include "common/macro.h"
#include "proto.h"

static const struct map_op_desc {
	const char *name;
	/* Which params the op takes besides object, map and op; and which it needs. */
	const char *const keys[4];
	bool key_required;
} map_ops[] = {
	[PROTO_MAP_INFO] = {"info", {NULL}, false},
	[PROTO_MAP_LOOKUP] = {"lookup", {"key", NULL}, true},
	[PROTO_MAP_UPDATE] = {"update", {"key", "value", "flags", NULL}, true},
	[PROTO_MAP_DELETE] = {"delete", {"key", NULL}, true},
	[PROTO_MAP_NEXT_KEY] = {"next_key", {"key", NULL}, false},
	[PROTO_MAP_DUMP] = {"dump", {"cursor", "count", NULL}, false},
	[PROTO_MAP_BTF] = {"btf", {NULL}, false},
};

const char *proto_map_op_to_string(enum proto_map_op op)
{
	return (size_t)op < ARRAY_SIZE(map_ops) ? map_ops[op].name : "?";
}

bool proto_map_op_writes(enum proto_map_op op)
{
	return op == PROTO_MAP_UPDATE || op == PROTO_MAP_DELETE;
}

bool proto_map_op_name_writes(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(map_ops); i++)
		if (strcmp(name, map_ops[i].name) == 0)
			return proto_map_op_writes((enum proto_map_op)i);
	return false;
}

static bool op_takes(enum proto_map_op op, const char *key)
{
	for (const char *const *k = map_ops[op].keys; *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/* Hex bytes under key: 1..max of them; absent leaves *ret NULL. -E2BIG over max. */
static int get_hex(json_object *params, const char *key, size_t max, uint8_t **ret,
		   size_t *ret_size, char **error)
{
	const char *s;
	size_t len;
	int r = proto_get_string(params, key, false, &s, error);

	if (r < 0 || !s)
		return r;
	/* Checked before decoding: a too long string costs no allocation. */
	len = strlen(s);
	if (len > 2 * max)
		return error_setf(error, -E2BIG, "\"%s\" is over %zu bytes", key, max);
	r = len ? hex_decode(s, len, ret, ret_size) : -EINVAL;
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return error_setf(error, -EINVAL,
				  "\"%s\" must be 1 to %zu bytes as an even number of hex digits",
				  key, max);
	return 0;
}

static int get_name(json_object *params, const char *key, size_t max, char **ret, char **error)
{
	const char *s;
	int r = proto_get_string(params, key, true, &s, error);

	if (r < 0)
		return r;
	if (!s[0] || strlen(s) > max)
		return error_setf(error, -EINVAL, "\"%s\" must be 1 to %zu characters", key, max);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int get_op(json_object *params, enum proto_map_op *ret, char **error)
{
	const char *s;
	int r = proto_get_string(params, "op", true, &s, error);

	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(map_ops); i++)
		if (strcmp(s, map_ops[i].name) == 0) {
			*ret = (enum proto_map_op)i;
			return 0;
		}
	return error_setf(error, -EINVAL,
			  "\"op\" must be info, lookup, update, delete, next_key, dump or btf, "
			  "not \"%.32s\"",
			  s);
}

int proto_map_request_decode(json_object *params, struct proto_map_request *ret, char **error)
{
	static const char *const all_keys[] = {"object", "map",	   "op",    "key", "value",
					       "flags",	 "cursor", "count", NULL};
	struct proto_map_request req = {.count = PROTO_MAP_DEFAULT_DUMP_ENTRIES};
	int64_t flags = 0, count = PROTO_MAP_DEFAULT_DUMP_ENTRIES;
	int r;

	if (!params)
		return error_setf(error, -EINVAL, "map needs \"params\"");
	r = proto_check_keys(params, "map", all_keys, error);
	if (r >= 0)
		r = get_op(params, &req.op, error);
	if (r < 0)
		return r;
	/* Each op takes only its own params. */
	json_object_object_foreach (params, key, val) {
		(void)val;
		if (strcmp(key, "object") != 0 && strcmp(key, "map") != 0 &&
		    strcmp(key, "op") != 0 && !op_takes(req.op, key))
			return error_setf(error, -EINVAL, "op %s takes no \"%s\"",
					  map_ops[req.op].name, key);
	}
	/* A reference is OWNER/NAME: a user name and an object name, both bounded. */
	r = get_name(params, "object", PROTO_MAX_NAME, &req.object, error);
	if (r >= 0)
		r = get_name(params, "map", PROTO_MAX_NAME, &req.map, error);
	if (r >= 0)
		r = get_hex(params, req.op == PROTO_MAP_DUMP ? "cursor" : "key", PROTO_MAP_MAX_KEY,
			    &req.key, &req.key_size, error);
	if (r >= 0 && !req.key && map_ops[req.op].key_required)
		r = error_setf(error, -EINVAL, "op %s needs \"key\"", map_ops[req.op].name);
	if (r >= 0 && req.op == PROTO_MAP_UPDATE) {
		r = get_hex(params, "value", PROTO_MAP_MAX_VALUE, &req.value, &req.value_size,
			    error);
		if (r >= 0 && !req.value)
			r = error_setf(error, -EINVAL, "op update needs \"value\"");
		if (r >= 0)
			r = proto_get_int(params, "flags", false, 0, PROTO_MAP_MAX_FLAGS, &flags,
					  error);
		req.flags = (uint32_t)flags;
	}
	if (r >= 0 && req.op == PROTO_MAP_DUMP) {
		r = proto_get_int(params, "count", false, 1, PROTO_MAP_MAX_DUMP_ENTRIES, &count,
				  error);
		req.count = (uint32_t)count;
	}
	if (r < 0) {
		proto_map_request_done(&req);
		return r;
	}
	*ret = req;
	return 0;
}

json_object *proto_map_request_encode(const struct proto_map_request *r)
{
	json_object *o = json_object_new_object();
	int k = 0;

	if (!o || (size_t)r->op >= ARRAY_SIZE(map_ops)) {
		json_object_put(o);
		return NULL;
	}
	json_object_object_add(o, "object", json_object_new_string(r->object ? r->object : ""));
	json_object_object_add(o, "map", json_object_new_string(r->map ? r->map : ""));
	json_object_object_add(o, "op", json_object_new_string(map_ops[r->op].name));
	if (r->key && r->key_size)
		k = proto_json_add_hex(o, r->op == PROTO_MAP_DUMP ? "cursor" : "key", r->key,
				       r->key_size);
	if (k >= 0 && r->op == PROTO_MAP_UPDATE) {
		if (r->value && r->value_size)
			k = proto_json_add_hex(o, "value", r->value, r->value_size);
		if (r->flags)
			json_object_object_add(o, "flags", json_object_new_int((int)r->flags));
	}
	if (k >= 0 && r->op == PROTO_MAP_DUMP && r->count != PROTO_MAP_DEFAULT_DUMP_ENTRIES)
		json_object_object_add(o, "count", json_object_new_int((int)r->count));
	if (k < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void proto_map_request_done(struct proto_map_request *r)
{
	free(r->object);
	free(r->map);
	free(r->key);
	free(r->value);
	*r = (struct proto_map_request){};
}
