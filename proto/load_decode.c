/* SPDX-License-Identifier: MIT */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/macro.h"

/* Close and free a message's fds that were not taken out. */
static void fds_release(int **fds, size_t *n)
{
	if (*fds)
		close_many(*fds, *n);
	free(*fds);
	*fds = NULL;
	*n = 0;
}

void proto_msg_done(struct proto_msg *m)
{
	if (!m)
		return;
	fds_release(&m->fds, &m->n_fds);
	json_object_put(m->json);
	m->json = NULL;
}

int proto_msg_take_fd(struct proto_msg *m, size_t idx)
{
	if (idx >= m->n_fds || m->fds[idx] < 0)
		return -EBADF;
	return TAKE_FD(m->fds[idx]);
}

void proto_raw_done(struct proto_raw *m)
{
	if (!m)
		return;
	fds_release(&m->fds, &m->n_fds);
	free(m->buf);
	m->buf = NULL;
	m->len = 0;
}

int proto_send_raw(int sock, const char *buf, size_t len, const int *fds, size_t n_fds)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	char control[CMSG_SPACE(sizeof(int) * PROTO_MAX_REPLY_FDS)];
	ssize_t n;

	if (n_fds > PROTO_MAX_REPLY_FDS)
		return -ETOOMANYREFS;
	if (n_fds > 0) {
		struct cmsghdr *cmsg;

		memset(control, 0, CMSG_SPACE(sizeof(int) * n_fds));
		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}

	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != len)
		return -EIO; /* SOCK_SEQPACKET sends whole packets; anything else is a bug */
	return 0;
}

int proto_send(int sock, json_object *msg, const int *fds, size_t n_fds, size_t max_bytes)
{
	size_t len;
	const char *text = json_object_to_json_string_length(msg, PROTO_JSON_FLAGS, &len);

	if (!text)
		return -ENOMEM;
	if (len > max_bytes)
		return -EMSGSIZE;
	return proto_send_raw(sock, text, len, fds, n_fds);
}

/* Collect the fds of every SCM_RIGHTS header, so none leaks whatever else is wrong. */
static int collect_fds(struct msghdr *mh, int **ret, size_t *ret_n)
{
	size_t n = 0;
	int *fds = NULL;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k;
		int *grown;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		grown = realloc(fds, (n + k) * sizeof(int) + 1);
		if (!grown) {
			/* Still close what we can't keep. */
			int tmp;

			for (size_t i = 0; i < k; i++) {
				memcpy(&tmp, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				safe_close(tmp);
			}
			continue;
		}
		fds = grown;
		memcpy(fds + n, CMSG_DATA(c), k * sizeof(int));
		n += k;
	}
	*ret = fds;
	*ret_n = n;
	return 0;
}

int proto_recv_raw(int sock, size_t max_bytes, size_t max_fds, struct proto_raw *ret, char **error)
{
	/* Room for one fd more than allowed, so surplus fds show up without MSG_CTRUNC. */
	size_t control_len = CMSG_SPACE(sizeof(int) * (max_fds + 1));
	_cleanup_free_ void *control = calloc(1, control_len);
	struct iovec iov = {};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = control_len,
	};
	struct proto_raw m = {};
	ssize_t n;
	int r;

	if (!control)
		return -ENOMEM;
	/*
	 * The packet's real length first (MSG_PEEK | MSG_TRUNC, nothing copied,
	 * no fds taken), so the buffer fits it: allocating the maximum (1 MiB for
	 * replies) would cost an mmap, page faults and an munmap per message.
	 * One byte more than allowed still shows an oversized packet as MSG_TRUNC.
	 */
	do
		n = recv(sock, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
	iov.iov_len = (size_t)n > max_bytes ? max_bytes + 1 : (size_t)n + 1;
	m.buf = malloc(iov.iov_len);
	if (!m.buf)
		return -ENOMEM;
	iov.iov_base = m.buf;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r = errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
		goto fail;
	}

	collect_fds(&mh, &m.fds, &m.n_fds);

	if (n == 0 && m.n_fds == 0 && !(mh.msg_flags & MSG_CTRUNC)) {
		proto_raw_done(&m);
		return 0;
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		r = error_setf(error, -ETOOMANYREFS,
			       "control message truncated: more than %zu fds, or not SCM_RIGHTS",
			       max_fds);
		goto fail;
	}
	if (m.n_fds > max_fds) {
		r = error_setf(error, -ETOOMANYREFS, "message carries %zu fds, at most %zu allowed",
			       m.n_fds, max_fds);
		goto fail;
	}
	if ((mh.msg_flags & MSG_TRUNC) || (size_t)n > max_bytes) {
		r = error_setf(error, -EMSGSIZE,
			       "message of %zd bytes exceeds the limit of %zu bytes", n, max_bytes);
		goto fail;
	}
	m.len = (size_t)n;
	*ret = m;
	return 1;
fail:
	proto_raw_done(&m);
	return r;
}

int proto_recv(int sock, size_t max_bytes, size_t max_fds, struct proto_msg *ret, char **error)
{
	struct proto_raw raw = {};
	json_object *json = NULL;
	int r = proto_recv_raw(sock, max_bytes, max_fds, &raw, error);

	if (r <= 0)
		return r;
	r = proto_parse(raw.buf, raw.len, &json, error);
	if (r < 0) {
		proto_raw_done(&raw);
		return r;
	}
	free(raw.buf);
	*ret = (struct proto_msg){.json = json, .fds = raw.fds, .n_fds = raw.n_fds};
	return 1;
}

/*
 * json-c accepts NaN and Infinity even with JSON_TOKENER_STRICT; RFC 8259 has
 * neither. The tokenizer already bounded the depth, so recursion is bounded.
 */
static bool json_is_finite(json_object *o, unsigned depth)
{
	if (depth > PROTO_MAX_JSON_DEPTH)
		return false;
	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_object: {
		/* Braces: the macro declares variables, which a case label can't precede in C. */
		json_object_object_foreach (o, key, v) {
			(void)key;
			if (!json_is_finite(v, depth + 1))
				return false;
		}
		return true;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (!json_is_finite(json_object_array_get_idx(o, i), depth + 1))
				return false;
		return true;
	default:
		return true;
	}
}

int proto_parse(const char *buf, size_t len, json_object **ret, char **error)
{
	struct json_tokener *tok;
	json_object *o;
	enum json_tokener_error jerr;

	if (len == 0)
		return error_setf(error, -EBADMSG, "empty message");
	if (len > PROTO_MAX_REPLY_BYTES || len > INT32_MAX)
		return error_setf(error, -EMSGSIZE, "message of %zu bytes is too large", len);
	/* json-c would stop at a NUL and ignore the rest: refuse instead of guessing. */
	if (memchr(buf, '\0', len))
		return error_setf(error, -EBADMSG, "message contains a NUL byte");
	/*
	 * json-c counts the top-level value as one level and refuses a value at
	 * the depth it was given, so PROTO_MAX_JSON_DEPTH nested containers need
	 * one more.
	 */
	tok = json_tokener_new_ex(PROTO_MAX_JSON_DEPTH + 1);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
		if (jerr == json_tokener_success)
			error_setf(error, 0, "message is not one complete JSON value");
		else
			error_setf(error, 0, "message is not valid JSON: %s",
				   json_tokener_error_desc(jerr));
		json_object_put(o);
		json_tokener_free(tok);
		return -EBADMSG;
	}
	json_tokener_free(tok);
	if (!json_is_finite(o, 0)) {
		json_object_put(o);
		return error_setf(error, -EBADMSG,
				  "message is not valid JSON: NaN and Infinity are not numbers");
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_setf(error, -EBADMSG, "message is not a JSON object");
	}
	*ret = o;
	return 0;
}

int proto_get_string(json_object *o, const char *key, bool required, const char **ret, char **error)
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		*ret = NULL;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return error_setf(error, -EINVAL, "\"%s\" must be a string", key);
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return error_setf(error, -EINVAL, "\"%s\" contains a NUL character", key);
	*ret = s;
	return 0;
}

int proto_get_int(json_object *o, const char *key, bool required, int64_t min, int64_t max,
		  int64_t *ret, char **error)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		return 0; /* *ret keeps its default */
	}
	if (!json_object_is_type(v, json_type_int))
		return error_setf(error, -EINVAL, "\"%s\" must be an integer", key);
	errno = 0;
	x = json_object_get_int64(v);
	/*
	 * json-c clamps out-of-range values to INT64_MIN/MAX; a value above
	 * INT64_MAX is kept as a uint64 and clamped without setting errno.
	 */
	if (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
		errno = ERANGE;
	if (errno != 0 || x < min || x > max)
		return error_setf(error, -ERANGE, "\"%s\" must be between %" PRId64 " and %" PRId64,
				  key, min, max);
	*ret = x;
	return 0;
}

int proto_get_bool(json_object *o, const char *key, bool required, bool *ret, char **error)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_boolean))
		return error_setf(error, -EINVAL, "\"%s\" must be true or false", key);
	*ret = json_object_get_boolean(v);
	return 0;
}

int proto_check_keys(json_object *o, const char *what, const char *const *allowed, char **error)
{
	json_object_object_foreach (o, key, val) {
		bool known = false;

		(void)val;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				known = true;
		if (!known)
			return error_setf(error, -EINVAL, "%s: unknown key \"%.64s\"", what, key);
	}
	return 0;
}

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

/* ---- load ---- */

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

bool proto_attach_target_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROTO_MAX_ATTACH_TARGET)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.'))
			return false;
	return true;
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

bool proto_object_name_is_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > PROTO_MAX_OBJECT_NAME || name[0] == '-')
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return false;
	return true;
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

int proto_load_request_decode(json_object *params, size_t n_fds, struct proto_load_request *ret,
			      char **error)
{
	static const char *const keys[] = {
		"object_fd",  "object_name",	"check_only", "globals", "map_sizes",
		"programs",   "name",		"shares",     "freeze",	 "map_defs",
		"inner_maps", "attach_targets", "libbpf_log", NULL};
	struct proto_load_request req = {};
	int64_t fd_index = -1;
	int r;

	if (!params)
		return error_setf(error, -EINVAL, "load needs \"params\"");
	r = proto_check_keys(params, "load", keys, error);
	if (r < 0)
		return r;
	r = proto_get_int(params, "object_fd", true, 0, PROTO_MAX_REQUEST_FDS - 1, &fd_index,
			  error);
	if (r < 0)
		return r;
	if ((size_t)fd_index >= n_fds)
		return error_setf(error, -EBADF,
				  "\"object_fd\" refers to fd %" PRId64
				  " but the message carries %zu",
				  fd_index, n_fds);
	req.object_fd = (size_t)fd_index;
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

json_object *proto_load_request_encode(const struct proto_load_request *r)
{
	json_object *o = json_object_new_object();
	json_object *a;

	if (!o)
		return NULL;
	json_object_object_add(o, "object_fd", json_object_new_int((int)r->object_fd));
	if (r->object_name)
		json_object_object_add(o, "object_name", json_object_new_string(r->object_name));
	if (r->check_only)
		json_object_object_add(o, "check_only", json_object_new_boolean(true));
	if (r->libbpf_log)
		json_object_object_add(o, "libbpf_log", json_object_new_boolean(true));
	if (r->name)
		json_object_object_add(o, "name", json_object_new_string(r->name));
	if (r->n_shares) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_shares; i++) {
			const struct proto_share *sh = &r->shares[i];
			json_object *e = json_object_new_object();

			json_object_object_add(e, "map", json_object_new_string(sh->map));
			if (sh->user)
				json_object_object_add(e, "user", json_object_new_string(sh->user));
			if (sh->group)
				json_object_object_add(e, "group",
						       json_object_new_string(sh->group));
			json_object_object_add(e, "access", json_object_new_string(sh->access));
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "shares", a);
	}
	if (r->n_globals) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_globals; i++) {
			json_object *g = json_object_new_object();
			_cleanup_free_ char *hex =
				hex_encode(r->globals[i].value, r->globals[i].size);

			json_object_object_add(g, "name",
					       json_object_new_string(r->globals[i].name));
			json_object_object_add(g, "value", json_object_new_string(hex ? hex : ""));
			json_object_array_add(a, g);
		}
		json_object_object_add(o, "globals", a);
	}
	if (r->n_map_sizes) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_map_sizes; i++) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "name",
					       json_object_new_string(r->map_sizes[i].name));
			json_object_object_add(m, "max_entries",
					       json_object_new_int64(r->map_sizes[i].max_entries));
			json_object_array_add(a, m);
		}
		json_object_object_add(o, "map_sizes", a);
	}
	if (r->n_programs) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_programs; i++) {
			json_object *p = json_object_new_object();

			json_object_object_add(p, "name",
					       json_object_new_string(r->programs[i].name));
			if (r->programs[i].type)
				json_object_object_add(p, "type",
						       json_object_new_string(r->programs[i].type));
			if (r->programs[i].attach_type)
				json_object_object_add(
					p, "attach_type",
					json_object_new_string(r->programs[i].attach_type));
			json_object_array_add(a, p);
		}
		json_object_object_add(o, "programs", a);
	}
	if (r->n_freeze) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_freeze; i++) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "name", json_object_new_string(r->freeze[i]));
			json_object_array_add(a, m);
		}
		json_object_object_add(o, "freeze", a);
	}
	if (r->n_map_defs) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_map_defs; i++) {
			const struct proto_map_def *d = &r->map_defs[i];
			json_object *m = json_object_new_object();

			json_object_object_add(m, "name", json_object_new_string(d->name));
			if (d->set_key_size)
				json_object_object_add(m, "key_size",
						       json_object_new_int64(d->key_size));
			if (d->set_value_size)
				json_object_object_add(m, "value_size",
						       json_object_new_int64(d->value_size));
			json_object_array_add(a, m);
		}
		json_object_object_add(o, "map_defs", a);
	}
	if (r->n_inner_maps) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_inner_maps; i++) {
			const struct proto_inner_map *im = &r->inner_maps[i];
			json_object *m = json_object_new_object();

			json_object_object_add(m, "outer", json_object_new_string(im->outer));
			json_object_object_add(m, "type", json_object_new_string(im->type));
			json_object_object_add(m, "key_size", json_object_new_int64(im->key_size));
			json_object_object_add(m, "value_size",
					       json_object_new_int64(im->value_size));
			json_object_object_add(m, "max_entries",
					       json_object_new_int64(im->max_entries));
			if (im->map_flags)
				json_object_object_add(m, "map_flags",
						       json_object_new_int64(im->map_flags));
			json_object_array_add(a, m);
		}
		json_object_object_add(o, "inner_maps", a);
	}
	if (r->n_attach_targets) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_attach_targets; i++) {
			json_object *t = json_object_new_object();

			json_object_object_add(
				t, "program", json_object_new_string(r->attach_targets[i].program));
			json_object_object_add(t, "target",
					       json_object_new_string(r->attach_targets[i].target));
			json_object_array_add(a, t);
		}
		json_object_object_add(o, "attach_targets", a);
	}
	return o;
}

void proto_load_request_done(struct proto_load_request *r)
{
	for (size_t i = 0; i < r->n_globals; i++) {
		free(r->globals[i].name);
		free(r->globals[i].value);
	}
	free(r->globals);
	for (size_t i = 0; i < r->n_map_sizes; i++)
		free(r->map_sizes[i].name);
	free(r->map_sizes);
	for (size_t i = 0; i < r->n_programs; i++) {
		free(r->programs[i].name);
		free(r->programs[i].type);
		free(r->programs[i].attach_type);
	}
	free(r->programs);
	for (size_t i = 0; i < r->n_freeze; i++)
		free(r->freeze[i]);
	free(r->freeze);
	for (size_t i = 0; i < r->n_map_defs; i++)
		free(r->map_defs[i].name);
	free(r->map_defs);
	for (size_t i = 0; i < r->n_inner_maps; i++) {
		free(r->inner_maps[i].outer);
		free(r->inner_maps[i].type);
	}
	free(r->inner_maps);
	for (size_t i = 0; i < r->n_attach_targets; i++) {
		free(r->attach_targets[i].program);
		free(r->attach_targets[i].target);
	}
	free(r->attach_targets);
	for (size_t i = 0; i < r->n_shares; i++) {
		free(r->shares[i].map);
		free(r->shares[i].user);
		free(r->shares[i].group);
		free(r->shares[i].access);
	}
	free(r->shares);
	free(r->name);
	free(r->object_name);
	*r = (struct proto_load_request){};
}

int proto_json_add_hex(json_object *o, const char *key, const void *buf, size_t size)
{
	char *hex = hex_encode(buf, size);
	json_object *s = hex ? json_object_new_string(hex) : NULL;

	free(hex);
	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

size_t proto_utf8_sequence(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int sanitize_string(json_object *o)
{
	const unsigned char *s = (const unsigned char *)json_object_get_string(o);
	size_t len = (size_t)json_object_get_string_len(o), out = 0;
	bool valid = true;
	char *buf;

	for (size_t i = 0; i < len;) {
		size_t n = s[i] ? proto_utf8_sequence(s + i, len - i) : 0;

		if (n == 0) {
			valid = false;
			break;
		}
		i += n;
	}
	if (valid)
		return 0;
	buf = malloc(len * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len;) {
		size_t n = s[i] ? proto_utf8_sequence(s + i, len - i) : 0;

		if (n == 0) {
			memcpy(buf + out, "\xef\xbf\xbd", 3); /* U+FFFD */
			out += 3;
			i++;
		} else {
			memcpy(buf + out, s + i, n);
			out += n;
			i += n;
		}
	}
	buf[out] = '\0';
	json_object_set_string_len(o, buf, (int)out);
	free(buf);
	return 0;
}

static int sanitize(json_object *o, unsigned depth)
{
	int k = 0;

	if (depth > PROTO_MAX_JSON_DEPTH + 1)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_string:
		return sanitize_string(o);
	case json_type_object: {
		json_object_object_foreach (o, key, v) {
			(void)key;
			if ((k = sanitize(v, depth + 1)) < 0)
				return k;
		}
		return 0;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if ((k = sanitize(json_object_array_get_idx(o, i), depth + 1)) < 0)
				return k;
		return 0;
	default:
		return 0;
	}
}

int proto_json_sanitize_utf8(json_object *o)
{
	return o ? sanitize(o, 0) : 0;
}
