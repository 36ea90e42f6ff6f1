/* SPDX-License-Identifier: MIT */
/* The load request's params described field by field (PROTOCOL.md), decoded and encoded by
 * params.c. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"
#include "method.h"
#include "proto.h"

/* Names of maps, programs, users, ... in load's arrays: 1..PROTO_MAX_NAME characters. */
#define NAME_RULE "have 1 to " PROTO_STR(PROTO_MAX_NAME) " characters"
#define NAME(s, k, req, ...) PROTO_STRING(s, k, req, PROTO_MAX_NAME, .rule = NAME_RULE, __VA_ARGS__)
/* libbpf's names of types and attach types, and the object's name. */
#define TYPE_NAME(s, k, req) PROTO_STRING(s, k, req, 64, .rule = "have 1 to 64 characters")
#define ITEMS(s, k, t) PROTO_ARRAY(s, k, n_##k, t, PROTO_MAX_CONFIG_ITEMS)

static const struct proto_field global_fields[] = {
	NAME(struct proto_global, name, true),
	/* No bound of its own: the variable's size is checked against the object's. */
	PROTO_HEX(struct proto_global, value, value, size, true, 1, PROTO_MAX_REQUEST_BYTES,
		  .rule = "be an even number of hex digits"),
};
static PROTO_TABLE(global_table, "global", struct proto_global, global_fields);

static const struct proto_field map_size_fields[] = {
	NAME(struct proto_map_size, name, true),
	PROTO_INT(struct proto_map_size, max_entries, true, 1, UINT32_MAX, 0),
};
static PROTO_TABLE(map_size_table, "map size", struct proto_map_size, map_size_fields);

static const struct proto_field program_fields[] = {
	NAME(struct proto_program_select, name, true),
	TYPE_NAME(struct proto_program_select, type, false),
	TYPE_NAME(struct proto_program_select, attach_type, false),
};
static PROTO_TABLE(program_table, "program", struct proto_program_select, program_fields);

/* "freeze": [{"name": MAP}, ...], objects like the other arrays, so each can grow keys. */
struct freeze_item {
	char *name;
};
_Static_assert(sizeof(struct freeze_item) == sizeof(char *), "freeze is an array of names");
static const struct proto_field freeze_fields[] = {
	NAME(struct freeze_item, name, true),
};
static PROTO_TABLE(freeze_table, "freeze", struct freeze_item, freeze_fields);

/* Either size or both; 0 is a size (a ring buffer's), so each says whether it was given. */
static int map_def_check(const void *p, char **error)
{
	const struct proto_map_def *d = p;

	if (!d->set_key_size && !d->set_value_size)
		return error_setf(error, -EINVAL,
				  "a map def sets \"key_size\", \"value_size\" or both");
	return 0;
}

static const struct proto_field map_def_fields[] = {
	NAME(struct proto_map_def, name, true),
	PROTO_INT(struct proto_map_def, key_size, false, 0, PROTO_MAX_MAP_KEY_SIZE, 0,
		  .has_present = true,
		  .present_offset = offsetof(struct proto_map_def, set_key_size)),
	PROTO_INT(struct proto_map_def, value_size, false, 0, PROTO_MAX_MAP_VALUE_SIZE, 0,
		  .has_present = true,
		  .present_offset = offsetof(struct proto_map_def, set_value_size)),
};
static PROTO_TABLE(map_def_table, "map def", struct proto_map_def, map_def_fields,
		   .check = map_def_check);

static const struct proto_field inner_map_fields[] = {
	NAME(struct proto_inner_map, outer, true),
	TYPE_NAME(struct proto_inner_map, type, true),
	PROTO_INT(struct proto_inner_map, key_size, true, 0, PROTO_MAX_MAP_KEY_SIZE, 0),
	PROTO_INT(struct proto_inner_map, value_size, true, 0, PROTO_MAX_MAP_VALUE_SIZE, 0),
	PROTO_INT(struct proto_inner_map, max_entries, true, 1, UINT32_MAX, 0),
	PROTO_INT(struct proto_inner_map, map_flags, false, 0, PROTO_MAX_INNER_MAP_FLAGS, 0),
};
static PROTO_TABLE(inner_map_table, "inner map", struct proto_inner_map, inner_map_fields);

static const struct proto_field attach_target_fields[] = {
	NAME(struct proto_attach_target, program, true),
	NAME(struct proto_attach_target, target, true, .valid = proto_attach_target_is_valid,
	     .valid_rule = "be 1 to " PROTO_STR(PROTO_MAX_ATTACH_TARGET) " of [A-Za-z0-9_.]"),
};
static PROTO_TABLE(attach_target_table, "attach target", struct proto_attach_target,
		   attach_target_fields);

/* Exactly one of user and group; an access a share can give. */
static int share_check(const void *p, char **error)
{
	const struct proto_share *s = p;

	if (!s->user == !s->group)
		return error_setf(error, -EINVAL,
				  "a share names exactly one of \"user\" and \"group\"");
	/* A ring buffer is not shared: consuming takes its records from every other consumer. */
	if (strcmp(s->access, "consume") == 0)
		return error_setf(
			error, -EINVAL,
			"\"access\" \"consume\" cannot be shared: consuming a ring buffer "
			"takes its records from every other consumer");
	if (strcmp(s->access, "ro") != 0 && strcmp(s->access, "wo") != 0 &&
	    strcmp(s->access, "rw") != 0)
		return error_setf(error, -EINVAL, "\"access\" must be \"ro\", \"wo\" or \"rw\"");
	return 0;
}

static const struct proto_field share_fields[] = {
	NAME(struct proto_share, map, true),
	NAME(struct proto_share, user, false),
	NAME(struct proto_share, group, false),
	NAME(struct proto_share, access, true),
};
static PROTO_TABLE(share_table, "share", struct proto_share, share_fields, .check = share_check);

#define BOTH_OBJECTS "a load names its object by \"object_fd\" or by \"system_object\", not both"

static int load_check(const void *p, char **error)
{
	const struct proto_load_request *r = p;

	if (r->object_fd != PROTO_NO_OBJECT_FD && r->system_object)
		return error_setf(error, -EINVAL, BOTH_OBJECTS);
	if (r->object_fd == PROTO_NO_OBJECT_FD && !r->system_object)
		return error_setf(error, -EINVAL, "missing \"object_fd\"");
	if (r->n_shares && !r->name)
		return error_setf(error, -EINVAL,
				  "\"shares\" needs \"name\": only named objects are shared");
	return 0;
}

typedef struct proto_load_request load_t;

/* In the order they are sent (and checked: the fd first, before anything a worker reads). */
static const struct proto_field load_fields[] = {
	/* Absent, it is PROTO_NO_OBJECT_FD (-1 stored as size_t), and not sent. */
	PROTO_INT(load_t, object_fd, false, 0, PROTO_MAX_REQUEST_FDS - 1, -1, .fd_index = true),
	/* An installed object by name, read by the broker itself: one path component at most. */
	PROTO_STRING(load_t, system_object, false, PROTO_MAX_OBJECT_NAME,
		     .valid = parse_object_name_is_valid,
		     .valid_rule = "be 1 to " PROTO_STR(
			     PROTO_MAX_OBJECT_NAME) " letters, digits, '_' or '-', not starting "
						    "with '-'"),
	TYPE_NAME(load_t, object_name, false),
	PROTO_BOOL(load_t, check_only),
	PROTO_BOOL(load_t, libbpf_log),
	NAME(load_t, name, false, .valid = parse_object_name_is_valid,
	     .valid_rule = "be 1 to " PROTO_STR(
		     PROTO_MAX_OBJECT_NAME) " letters, digits, '_' or '-', not starting with '-'"),
	PROTO_ARRAY(load_t, shares, n_shares, share_table, PROTO_MAX_SHARES),
	ITEMS(load_t, globals, global_table),
	ITEMS(load_t, map_sizes, map_size_table),
	ITEMS(load_t, programs, program_table),
	ITEMS(load_t, freeze, freeze_table),
	ITEMS(load_t, map_defs, map_def_table),
	ITEMS(load_t, inner_maps, inner_map_table),
	ITEMS(load_t, attach_targets, attach_target_table),
};
PROTO_TABLE(proto_load_fields, "load", load_t, load_fields, .check = load_check,
	    .needs_params = true);

int proto_load_request_decode(json_object *params, size_t n_fds, struct proto_load_request *ret,
			      char **error)
{
	struct proto_load_request req;
	json_object *fd, *name;
	int r;

	/*
	 * Both keys contradict each other whatever the fds: invalid-request, the same with
	 * an fd as without, before the table's fd index check would answer bad-fds.
	 */
	if (json_object_is_type(params, json_type_object) &&
	    json_object_object_get_ex(params, "object_fd", &fd) &&
	    !json_object_is_type(fd, json_type_null) &&
	    json_object_object_get_ex(params, "system_object", &name) &&
	    !json_object_is_type(name, json_type_null))
		return error_setf(error, -EINVAL, BOTH_OBJECTS);
	r = proto_fields_decode(&proto_load_fields, params, n_fds, &req, error);
	if (r < 0)
		return r;
	/* The table's check sees no fds: a system object's load carries none. */
	if (req.system_object && n_fds > 0) {
		proto_fields_done(&proto_load_fields, &req);
		return error_setf(
			error, -EBADF,
			"a load of a system object carries no fd; the message carries %zu", n_fds);
	}
	*ret = req;
	return 0;
}

json_object *proto_load_request_encode(const struct proto_load_request *r)
{
	return proto_fields_encode(&proto_load_fields, r);
}

void proto_load_request_done(struct proto_load_request *r)
{
	proto_fields_done(&proto_load_fields, r);
}
