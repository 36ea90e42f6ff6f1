/* SPDX-License-Identifier: MIT */
/* The method table (method.h): every method of the protocol, what it takes and what it changes. */
#include "method.h"

#include <errno.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "proto.h"

#define NAMED(n, i, fds, out, state, rate, f, s)                                                   \
	[i] = {.name = n,                                                                          \
	       .id = i,                                                                            \
	       .fds_max = fds,                                                                     \
	       .reply_fds = out,                                                                   \
	       .in_worker = true,                                                                  \
	       .changes_state = state,                                                             \
	       .rate_limited = rate,                                                               \
	       .flat_errno = true,                                                                 \
	       .params_size = s,                                                                   \
	       .fields = &f}

/* In the order hello's "methods" lists them. */
const struct proto_method proto_methods[PROTO_METHOD_COUNT] = {
	[PROTO_METHOD_HELLO] = {.name = "hello", .id = PROTO_METHOD_HELLO},
	/* The object's fd, or none for a system object (decoded: never both). */
	[PROTO_METHOD_LOAD] = {.name = "load",
			       .id = PROTO_METHOD_LOAD,
			       .fds_min = 0,
			       .fds_max = 1,
			       .reply_fds = PROTO_MAX_REPLY_FDS,
			       .in_worker = true,
			       .checked_by_loop = true,
			       .changes_state = PROTO_UNLESS_CHECK_ONLY,
			       .rate_limited = PROTO_UNLESS_CHECK_ONLY,
			       .params_size = sizeof(struct proto_load_request),
			       .fields = &proto_load_fields},
	NAMED("list", PROTO_METHOD_LIST, 0, 0, PROTO_NEVER, PROTO_NEVER, proto_list_fields,
	      sizeof(struct proto_list_params)),
	NAMED("show", PROTO_METHOD_SHOW, 0, 0, PROTO_NEVER, PROTO_NEVER, proto_object_fields_show,
	      sizeof(struct proto_object_params)),
	NAMED("unload", PROTO_METHOD_UNLOAD, 0, 0, PROTO_ALWAYS, PROTO_NEVER,
	      proto_object_fields_unload, sizeof(struct proto_object_params)),
	NAMED("fds", PROTO_METHOD_FDS, 0, PROTO_MAX_REPLY_FDS, PROTO_NEVER, PROTO_NEVER,
	      proto_object_fields_fds, sizeof(struct proto_object_params)),
	/* A cgroup's directory, or a uprobe's binary and pidfd; the link's fd back unless pinned.
	 */
	NAMED("attach", PROTO_METHOD_ATTACH, 2, 1, PROTO_ALWAYS, PROTO_ALWAYS, proto_attach_fields,
	      sizeof(struct proto_attach_params)),
	NAMED("detach", PROTO_METHOD_DETACH, 0, 0, PROTO_ALWAYS, PROTO_NEVER, proto_detach_fields,
	      sizeof(struct proto_detach_params)),
	NAMED("test_run", PROTO_METHOD_TEST_RUN, 0, 0, PROTO_NEVER, PROTO_NEVER,
	      proto_test_run_fields, sizeof(struct proto_test_run_params)),
	NAMED("map_insert", PROTO_METHOD_MAP_INSERT, 1, 0, PROTO_ALWAYS, PROTO_NEVER,
	      proto_map_insert_fields, sizeof(struct proto_map_insert_params)),
	[PROTO_METHOD_LOAD_INSNS] = {.name = "load_insns",
				     .id = PROTO_METHOD_LOAD_INSNS,
				     .fds_min = 1,
				     .fds_max = 1,
				     .reply_fds = 1,
				     .in_worker = true,
				     .checked_by_loop = true,
				     .changes_state = PROTO_UNLESS_CHECK_ONLY,
				     .rate_limited = PROTO_UNLESS_CHECK_ONLY,
				     .params_size = sizeof(struct proto_insns_request),
				     .fields = &proto_insns_fields},
	[PROTO_METHOD_MAP] = {.name = "map",
			      .id = PROTO_METHOD_MAP,
			      .in_worker = true,
			      .changes_state = PROTO_IF_MAP_WRITES,
			      .params_size = sizeof(struct proto_map_request),
			      .fields = &proto_map_fields},
	/* The effective policy and usage: counting kernel objects needs a worker's capabilities. */
	NAMED("policy", PROTO_METHOD_POLICY, 0, 0, PROTO_NEVER, PROTO_NEVER, proto_policy_fields,
	      0),
};

const struct proto_method *proto_method_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(proto_methods); i++)
		if (strcmp(proto_methods[i].name, name) == 0)
			return &proto_methods[i];
	return NULL;
}

bool proto_method_when(enum proto_when w, json_object *params)
{
	const char *op = NULL;
	bool check_only = false;

	switch (w) {
	case PROTO_NEVER:
		return false;
	case PROTO_ALWAYS:
		return true;
	case PROTO_UNLESS_CHECK_ONLY:
		(void)proto_get_bool(params, "check_only", false, &check_only, NULL);
		return !check_only;
	case PROTO_IF_MAP_WRITES:
		(void)proto_get_string(params, "op", false, &op, NULL);
		return proto_map_op_name_writes(op);
	}
	return true;
}

int proto_method_decode(const struct proto_method *m, json_object *params, size_t n_fds, void *ret,
			char **error)
{
	/* load's fds are checked beyond its table too (a system object carries none). */
	if (m->id == PROTO_METHOD_LOAD)
		return proto_load_request_decode(params, n_fds, ret, error);
	if (m->fields)
		return proto_fields_decode(m->fields, params, n_fds, ret, error);
	return 0; /* hello: params are ignored */
}

json_object *proto_method_encode(const struct proto_method *m, const void *p)
{
	if (m->fields)
		return proto_fields_encode(m->fields, p);
	return json_object_new_object();
}

void proto_method_done(const struct proto_method *m, void *p)
{
	if (m->fields)
		proto_fields_done(m->fields, p);
}
