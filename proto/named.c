/* SPDX-License-Identifier: MIT */
/* The params of the named-object methods (NAMED.md) as tables of fields, decoded by params.c. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "method.h"
#include "proto.h"

/*
 * Strings are bounded like load's names: references, program, map and user
 * names 1..PROTO_MAX_NAME characters; type names 1..TYPE_NAME_MAX.
 */
#define TYPE_NAME_MAX 64
#define STRING(s, k, req, ...) PROTO_STRING(s, k, req, PROTO_MAX_NAME, __VA_ARGS__)
#define BOOL(s, k) PROTO_BOOL(s, k)
#define INT(s, k, req, lo, hi, d) PROTO_INT(s, k, req, lo, hi, d)
#define HEX(s, k, req, hi) PROTO_HEX(s, k, k.data, k.size, req, 0, hi)
#define FIELDS(name, w, s, f) PROTO_TABLE(name, w, s, f)

/* ---- show, unload, fds ---- */

static const struct proto_field object_fields[] = {
	STRING(struct proto_object_params, object, true),
};
FIELDS(proto_object_fields_show, "show", struct proto_object_params, object_fields);
FIELDS(proto_object_fields_unload, "unload", struct proto_object_params, object_fields);
FIELDS(proto_object_fields_fds, "fds", struct proto_object_params, object_fields);

/* ---- list ---- */

static const struct proto_field list_fields[] = {
	STRING(struct proto_list_params, cursor, false),
	BOOL(struct proto_list_params, all),
	BOOL(struct proto_list_params, shared),
	STRING(struct proto_list_params, user, false),
	INT(struct proto_list_params, limit, false, 1, PROTO_MAX_LIST_LIMIT, PROTO_MAX_LIST_LIMIT),
};
FIELDS(proto_list_fields, "list", struct proto_list_params, list_fields);

/* ---- attach: the target's keys depend on its type ---- */

typedef struct proto_link_target target_t;

static const struct proto_field target_fields[] = {
	PROTO_STRING(target_t, type, true, TYPE_NAME_MAX),
	STRING(target_t, name, false),
	PROTO_STRING(target_t, attach_type, false, TYPE_NAME_MAX),
	INT(target_t, fd, false, 0, PROTO_MAX_REQUEST_FDS - 1, -1),
};
static FIELDS(target_table, "target", target_t, target_fields);

/* What a uprobe target's fields say together. */
static int uprobe_check(const void *p, char **error)
{
	const target_t *t = p;

	if (!t->name && t->offset < 0)
		return error_setf(error, -EINVAL,
				  "a uprobe target needs a function (\"name\") or a file offset "
				  "(\"offset\")");
	if (t->semaphore && t->semaphore_offset)
		return error_setf(error, -EINVAL,
				  "give the semaphore by symbol (\"semaphore\") or by file offset "
				  "(\"semaphore_offset\"), not both");
	return 0;
}

/* A uprobe's (NAMED.md): its binary and process by fd, a place in the binary, a semaphore. */
#define SYMBOL_RULE "be a symbol of 1 to " PROTO_STR(PROTO_MAX_UPROBE_SYMBOL) " characters"
static const struct proto_field uprobe_fields[] = {
	PROTO_STRING(target_t, type, true, TYPE_NAME_MAX),
	INT(target_t, fd, true, 0, PROTO_MAX_REQUEST_FDS - 1, -1),
	INT(target_t, pidfd, true, 0, PROTO_MAX_REQUEST_FDS - 1, -1),
	PROTO_STRING(target_t, name, false, PROTO_MAX_UPROBE_SYMBOL, .rule = SYMBOL_RULE),
	INT(target_t, offset, false, 0, INT64_MAX, -1),
	BOOL(target_t, retprobe),
	PROTO_STRING(target_t, semaphore, false, PROTO_MAX_UPROBE_SYMBOL, .rule = SYMBOL_RULE),
	/* The kernel takes the semaphore's offset in the upper 32 bits of config. */
	INT(target_t, semaphore_offset, false, 1, UINT32_MAX, 0),
};
static PROTO_TABLE(uprobe_table, "target", target_t, uprobe_fields, .check = uprobe_check);

static bool target_is_uprobe(json_object *v)
{
	json_object *type;

	return json_object_object_get_ex(v, "type", &type) &&
	       json_object_is_type(type, json_type_string) &&
	       strcmp(json_object_get_string(type), "uprobe") == 0;
}

static void target_done(void *p)
{
	target_t *t = p;

	free(t->type);
	free(t->name);
	free(t->attach_type);
	free(t->semaphore);
	*t = (target_t){};
}

static int target_decode(json_object *v, void *ret, char **error)
{
	const char *type;
	int r;

	if (!v || !json_object_is_type(v, json_type_object))
		return error_setf(error, -EINVAL, "\"target\" must be an object");
	/* The type first: it says which keys the target takes. */
	r = proto_get_string(v, "type", true, &type, error);
	if (r < 0)
		return r;
	return proto_fields_decode(target_is_uprobe(v) ? &uprobe_table : &target_table, v, 0, ret,
				   error);
}

static json_object *target_encode(const void *p)
{
	const target_t *t = p;

	if (!t->type)
		return NULL;
	return proto_fields_encode(strcmp(t->type, "uprobe") == 0 ? &uprobe_table : &target_table,
				   t);
}

static const struct proto_custom target_custom = {
	.decode = target_decode,
	.encode = target_encode,
	.done = target_done,
};

static const struct proto_field attach_fields[] = {
	STRING(struct proto_attach_params, program, true),
	BOOL(struct proto_attach_params, pin),
	BOOL(struct proto_attach_params, protect),
	{.key = "target",
	 .kind = PROTO_FIELD_CUSTOM,
	 .required = true,
	 .offset = offsetof(struct proto_attach_params, target),
	 .custom = &target_custom},
	STRING(struct proto_attach_params, object, true),
	INT(struct proto_attach_params, program_id, false, 1, UINT32_MAX, 0),
};
FIELDS(proto_attach_fields, "attach", struct proto_attach_params, attach_fields);

/* ---- detach, test_run, map_insert, policy ---- */

static const struct proto_field detach_fields[] = {
	STRING(struct proto_detach_params, object, true),
	STRING(struct proto_detach_params, program, true),
	INT(struct proto_detach_params, link, false, 1, UINT32_MAX, 0),
};
FIELDS(proto_detach_fields, "detach", struct proto_detach_params, detach_fields);

static const struct proto_field test_run_fields[] = {
	STRING(struct proto_test_run_params, object, true),
	STRING(struct proto_test_run_params, program, true),
	HEX(struct proto_test_run_params, data_in, false, PROTO_TEST_RUN_MAX_DATA),
	HEX(struct proto_test_run_params, ctx_in, false, PROTO_TEST_RUN_MAX_CTX),
	INT(struct proto_test_run_params, repeat, false, 1, PROTO_TEST_RUN_MAX_REPEAT, 0),
};
FIELDS(proto_test_run_fields, "test_run", struct proto_test_run_params, test_run_fields);

static const struct proto_field map_insert_fields[] = {
	STRING(struct proto_map_insert_params, object, true),
	STRING(struct proto_map_insert_params, map, true),
	HEX(struct proto_map_insert_params, key, true, PROTO_MAP_MAX_KEY),
	INT(struct proto_map_insert_params, fd, true, 0, PROTO_MAX_REQUEST_FDS - 1, -1),
};
FIELDS(proto_map_insert_fields, "map_insert", struct proto_map_insert_params, map_insert_fields);

/* No params at all: any key is unknown. */
const struct proto_fields proto_policy_fields = {.what = "policy"};
