/* SPDX-License-Identifier: MIT */
/* The envelopes of requests, replies and errors (id, method, result, error), and the error codes'
 * strings. */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "common/macro.h"

int proto_request_check(json_object *msg, int64_t *ret_id, const char **ret_method,
			json_object **ret_params, char **error)
{
	static const char *const keys[] = {PROTO_VERSION_KEY, "id", "method", "params", NULL};
	int64_t version = 0, id = 0;
	const char *method;
	json_object *params = NULL;
	int r;

	r = proto_get_int(msg, PROTO_VERSION_KEY, true, 0, INT32_MAX, &version, error);
	if (r < 0)
		return r;
	if (version != PROTO_VERSION)
		return error_setf(error, -EPROTONOSUPPORT,
				  "protocol version %" PRId64
				  " is not supported (this broker speaks %d)",
				  version, PROTO_VERSION);
	r = proto_check_keys(msg, "request", keys, error);
	if (r < 0)
		return r;
	r = proto_get_int(msg, "id", true, 0, INT64_MAX, &id, error);
	if (r < 0)
		return r;
	r = proto_get_string(msg, "method", true, &method, error);
	if (r < 0)
		return r;
	if (json_object_object_get_ex(msg, "params", &params) &&
	    !json_object_is_type(params, json_type_object))
		return error_setf(error, -EINVAL, "\"params\" must be an object");
	*ret_id = id;
	*ret_method = method;
	*ret_params = params;
	return 0;
}

static json_object *stamp(json_object *o, int64_t id)
{
	if (!o)
		return NULL;
	if (proto_reply_stamp(o, id) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int proto_reply_stamp(json_object *body, int64_t id)
{
	if (json_object_object_add(body, PROTO_VERSION_KEY, json_object_new_int(PROTO_VERSION)) <
		    0 ||
	    json_object_object_add(body, "id", json_object_new_int64(id)) < 0)
		return -ENOMEM;
	return 0;
}

json_object *proto_request_new(int64_t id, const char *method, json_object *params)
{
	json_object *o = json_object_new_object();

	if (!o || json_object_object_add(o, "method", json_object_new_string(method)) < 0 ||
	    (params && json_object_object_add(o, "params", params) < 0)) {
		json_object_put(o);
		return NULL;
	}
	return stamp(o, id);
}

json_object *proto_reply_new(int64_t id, json_object *result)
{
	json_object *o = json_object_new_object();

	/* result is taken, whatever fails. */
	if (json_add(o, "result", result) < 0) {
		json_object_put(o);
		return NULL;
	}
	return stamp(o, id);
}

json_object *proto_error_new(int64_t id, const char *code, int err, const char *message)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();

	if (!o || !e || json_add(e, "code", json_object_new_string(code)) < 0 ||
	    json_add(e, "errno", json_object_new_int(err < 0 ? -err : err)) < 0 ||
	    json_add(e, "message", json_object_new_string(message ? message : code)) < 0 ||
	    json_add(o, "error", TAKE_PTR(e)) < 0) {
		json_object_put(o);
		json_object_put(e);
		return NULL;
	}
	return stamp(o, id);
}

/* The one table of the wire's error codes. */
static const char *const error_codes[_PROTO_ERR_MAX] = {
	[PROTO_ERR_INVALID] = PROTO_E_INVALID,	 [PROTO_ERR_VERSION] = PROTO_E_VERSION,
	[PROTO_ERR_METHOD] = PROTO_E_METHOD,	 [PROTO_ERR_TOO_LARGE] = PROTO_E_TOO_LARGE,
	[PROTO_ERR_FDS] = PROTO_E_FDS,		 [PROTO_ERR_DENIED] = PROTO_E_DENIED,
	[PROTO_ERR_OBJECT] = PROTO_E_OBJECT,	 [PROTO_ERR_LOAD] = PROTO_E_LOAD,
	[PROTO_ERR_TIMEOUT] = PROTO_E_TIMEOUT,	 [PROTO_ERR_BUSY] = PROTO_E_BUSY,
	[PROTO_ERR_INTERNAL] = PROTO_E_INTERNAL, [PROTO_ERR_NOT_FOUND] = PROTO_E_NOT_FOUND,
	[PROTO_ERR_EXISTS] = PROTO_E_EXISTS,	 [PROTO_ERR_QUOTA] = PROTO_E_QUOTA,
};

const char *proto_error_code(enum proto_error e)
{
	return e > 0 && e < _PROTO_ERR_MAX ? error_codes[e] : NULL;
}
