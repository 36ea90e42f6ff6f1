/* SPDX-License-Identifier: MIT */
/*
 * Params of method "load_insns" (PROTOCOL.md): one program from raw
 * instructions, as rootless container runtimes generate their cgroup device
 * programs. Decoded by the event loop (so bad requests never cost a worker)
 * and again by the worker; strict like "load": unknown keys are errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "common/macro.h"
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

/* An optional string key checked by valid(); copied into *ret when present. */
static int get_checked(json_object *params, const char *key, bool required,
		       bool (*valid)(const char *), const char *rule, char **ret, char **error)
{
	const char *s;
	int r = proto_get_string(params, key, required, &s, error);

	if (r < 0 || !s)
		return r;
	if (!valid(s))
		return error_setf(error, -EINVAL, "\"%s\" must be %s", key, rule);
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static bool type_name_is_valid(const char *s)
{
	return s[0] && strlen(s) <= INSNS_MAX_TYPE_NAME;
}

int proto_insns_request_decode(json_object *params, size_t n_fds, struct proto_insns_request *ret,
			       char **error)
{
	static const char *const keys[] = {"insns_fd",	"type", "attach_type", "license",
					   "prog_name", "name", "check_only",  NULL};
	struct proto_insns_request req = {};
	int64_t fd_index = -1;
	int r;

	if (!params)
		return error_setf(error, -EINVAL, "load_insns needs \"params\"");
	r = proto_check_keys(params, "load_insns", keys, error);
	if (r < 0)
		return r;
	r = proto_get_int(params, "insns_fd", true, 0, PROTO_MAX_REQUEST_FDS - 1, &fd_index, error);
	if (r < 0)
		return r;
	if ((size_t)fd_index >= n_fds) {
		error_setf(error, -EINVAL,
			   "\"insns_fd\" refers to fd %" PRId64 " but the message carries %zu",
			   fd_index, n_fds);
		return -EBADF;
	}
	req.insns_fd = (size_t)fd_index;
	r = proto_get_bool(params, "check_only", false, &req.check_only, error);
	if (r >= 0)
		r = get_checked(params, "type", true, type_name_is_valid, "1 to 64 characters",
				&req.type, error);
	if (r >= 0)
		r = get_checked(params, "attach_type", false, type_name_is_valid,
				"1 to 64 characters", &req.attach_type, error);
	if (r >= 0)
		r = get_checked(params, "license", true, license_is_valid,
				"1 to 127 printable ASCII characters", &req.license, error);
	if (r >= 0)
		r = get_checked(params, "prog_name", false, proto_prog_name_is_valid,
				"1 to 15 letters, digits, '_' or '.'", &req.prog_name, error);
	if (r >= 0)
		r = get_checked(params, "name", false, proto_object_name_is_valid,
				"1 to 64 letters, digits, '_' or '-', not starting with '-'",
				&req.name, error);
	if (r < 0) {
		proto_insns_request_done(&req);
		return r;
	}
	*ret = req;
	return 0;
}

json_object *proto_insns_request_encode(const struct proto_insns_request *r)
{
	int failed = 0; /* any member not added: the request is not sent short of it */
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	failed |= json_add(o, "insns_fd", json_object_new_int((int)r->insns_fd));
	failed |= json_add(o, "type", json_object_new_string(r->type ? r->type : ""));
	if (r->attach_type)
		failed |= json_add(o, "attach_type", json_object_new_string(r->attach_type));
	failed |= json_add(o, "license", json_object_new_string(r->license ? r->license : ""));
	if (r->prog_name)
		failed |= json_add(o, "prog_name", json_object_new_string(r->prog_name));
	if (r->name)
		failed |= json_add(o, "name", json_object_new_string(r->name));
	if (r->check_only)
		failed |= json_add(o, "check_only", json_object_new_boolean(true));
	if (failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void proto_insns_request_done(struct proto_insns_request *r)
{
	free(r->type);
	free(r->attach_type);
	free(r->license);
	free(r->prog_name);
	free(r->name);
	*r = (struct proto_insns_request){};
}
