/* SPDX-License-Identifier: MIT */
/*
 * Params of method "map" (NAMED.md): one operation on a map of a named
 * object, done by the broker for a caller who cannot use bpf() on the fd
 * (kernels before 6.5 with kernel.unprivileged_bpf_disabled set, seccomp
 * profiles that deny bpf()), described field by field for params.c.
 * Decoded by the worker; strict like "load":
 * params the op does not take are errors, so a client never believes a
 * param had an effect it didn't.
 */
#include <stdint.h>
#include <string.h>

#include "common/macro.h"
#include "method.h"
#include "proto.h"

/* The ops by their wire names, in enum proto_map_op's order. */
static const char *const map_op_names[] = {
	[PROTO_MAP_INFO] = "info",	   [PROTO_MAP_LOOKUP] = "lookup",
	[PROTO_MAP_UPDATE] = "update",	   [PROTO_MAP_DELETE] = "delete",
	[PROTO_MAP_NEXT_KEY] = "next_key", [PROTO_MAP_DUMP] = "dump",
	[PROTO_MAP_BTF] = "btf",	   NULL,
};

const char *proto_map_op_to_string(enum proto_map_op op)
{
	return (size_t)op < ARRAY_SIZE(map_op_names) - 1 ? map_op_names[op] : "?";
}

bool proto_map_op_writes(enum proto_map_op op)
{
	return op == PROTO_MAP_UPDATE || op == PROTO_MAP_DELETE;
}

bool proto_map_op_name_writes(const char *name)
{
	for (size_t i = 0; name && map_op_names[i]; i++)
		if (strcmp(name, map_op_names[i]) == 0)
			return proto_map_op_writes((enum proto_map_op)i);
	return false;
}

#define OP(o) (UINT32_C(1) << PROTO_MAP_##o)
#define KEY_RULE "be 1 to " PROTO_STR(PROTO_MAP_MAX_KEY) " bytes as an even number of hex digits"

typedef struct proto_map_request map_t;

/*
 * Each op takes only its own params besides object, map and op (the
 * selector), in the order they are checked and sent. A reference is
 * OWNER/NAME: a user name and an object name, both bounded.
 */
static const struct proto_field map_fields[] = {
	PROTO_STRING(map_t, object, true, PROTO_MAX_NAME),
	PROTO_STRING(map_t, map, true, PROTO_MAX_NAME),
	PROTO_ENUM(map_t, op, true, map_op_names),
	PROTO_HEX(map_t, key, key, key_size, false, 1, PROTO_MAP_MAX_KEY, .rule = KEY_RULE,
		  .only_for = OP(LOOKUP) | OP(UPDATE) | OP(DELETE) | OP(NEXT_KEY),
		  .needed_for = OP(LOOKUP) | OP(UPDATE) | OP(DELETE)),
	/* A dump's cursor is a key, the last of the page before. */
	PROTO_HEX(map_t, cursor, key, key_size, false, 1, PROTO_MAP_MAX_KEY, .rule = KEY_RULE,
		  .only_for = OP(DUMP)),
	PROTO_HEX(map_t, value, value, value_size, false, 1, PROTO_MAP_MAX_VALUE,
		  .rule = "be 1 to " PROTO_STR(
			  PROTO_MAP_MAX_VALUE) " bytes as an even number of hex digits",
		  .only_for = OP(UPDATE), .needed_for = OP(UPDATE)),
	PROTO_INT(map_t, flags, false, 0, PROTO_MAP_MAX_FLAGS, 0, .only_for = OP(UPDATE)),
	PROTO_INT(map_t, count, false, 1, PROTO_MAP_MAX_DUMP_ENTRIES,
		  PROTO_MAP_DEFAULT_DUMP_ENTRIES, .only_for = OP(DUMP)),
};
PROTO_TABLE(proto_map_fields, "map", map_t, map_fields, .selector = "op", .needs_params = true);

int proto_map_request_decode(json_object *params, struct proto_map_request *ret, char **error)
{
	return proto_fields_decode(&proto_map_fields, params, 0, ret, error);
}

json_object *proto_map_request_encode(const struct proto_map_request *r)
{
	return proto_fields_encode(&proto_map_fields, r);
}

void proto_map_request_done(struct proto_map_request *r)
{
	proto_fields_done(&proto_map_fields, r);
}
