/* SPDX-License-Identifier: MIT */
/*
 * Params of method "load_insns" (PROTOCOL.md): one program from raw
 * instructions, as rootless container runtimes generate their cgroup device
 * programs, described field by field for params.c. Decoded by the event loop
 * (so bad requests never cost a worker) and again by the worker; strict like
 * "load": unknown keys are errors.
 */
#include <string.h>

#include "method.h"
#include "proto.h"

/* Names of types and attach types (libbpf's are far shorter). */
#define INSNS_MAX_TYPE_NAME 64

bool proto_prog_name_is_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > PROTO_MAX_PROG_NAME)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.'))
			return false;
	return true;
}

static bool license_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROTO_MAX_LICENSE)
		return false;
	for (const char *c = s; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return false;
	return true;
}

typedef struct proto_insns_request insns_t;

/* In the order they are sent (and checked: the fd first). */
static const struct proto_field insns_fields[] = {
	PROTO_INT(insns_t, insns_fd, true, 0, PROTO_MAX_REQUEST_FDS - 1, 0, .fd_index = true),
	PROTO_STRING(insns_t, type, true, INSNS_MAX_TYPE_NAME),
	PROTO_STRING(insns_t, attach_type, false, INSNS_MAX_TYPE_NAME),
	PROTO_STRING(insns_t, license, true, 0, .valid = license_is_valid,
		     .valid_rule =
			     "be 1 to " PROTO_STR(PROTO_MAX_LICENSE) " printable ASCII characters"),
	PROTO_STRING(insns_t, prog_name, false, 0, .valid = proto_prog_name_is_valid,
		     .valid_rule = "be 1 to " PROTO_STR(
			     PROTO_MAX_PROG_NAME) " letters, digits, '_' or '.'"),
	PROTO_STRING(insns_t, name, false, 0, .valid = parse_object_name_is_valid,
		     .valid_rule = "be 1 to " PROTO_STR(
			     PROTO_MAX_OBJECT_NAME) " letters, digits, '_' or '-', not starting "
						    "with '-'"),
	PROTO_BOOL(insns_t, check_only),
};
PROTO_TABLE(proto_insns_fields, "load_insns", insns_t, insns_fields, .needs_params = true);

int proto_insns_request_decode(json_object *params, size_t n_fds, struct proto_insns_request *ret,
			       char **error)
{
	return proto_fields_decode(&proto_insns_fields, params, n_fds, ret, error);
}

json_object *proto_insns_request_encode(const struct proto_insns_request *r)
{
	return proto_fields_encode(&proto_insns_fields, r);
}

void proto_insns_request_done(struct proto_insns_request *r)
{
	proto_fields_done(&proto_insns_fields, r);
}
