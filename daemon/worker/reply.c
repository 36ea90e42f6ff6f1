/* SPDX-License-Identifier: MIT */
/* A worker's reply: built, refused anything once it holds an error, settled into one answer. */
#include "reply.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

void reply_done(struct reply *r)
{
	json_object_put(r->body);
	r->body = NULL;
	close_many(r->fds, r->n_fds);
	r->n_fds = 0;
}

int reply_error(struct reply *r, enum proto_error code, int err, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	json_object *body;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);

	if (!proto_error_code(code))
		code = PROTO_ERR_INTERNAL;
	/* libbpf's own error codes (4000 and up) are not errno values. */
	if (err <= 0 || err >= 4000)
		err = EINVAL;
	/* What was built goes even if the error can't be built: none of it may go out now. */
	reply_done(r);
	r->error = code;
	body = proto_error_new(0, proto_error_code(code), err, msg);
	if (!body)
		return -ENOMEM;
	/* The worker doesn't know the request id; the event loop stamps it. */
	json_object_object_del(body, "id");
	json_object_object_del(body, PROTO_VERSION_KEY);
	r->body = body;
	return code;
}

json_object *reply_error_obj(struct reply *r)
{
	json_object *e = NULL;

	if (r->error && r->body)
		json_object_object_get_ex(r->body, "error", &e);
	return e;
}

int reply_error_add(struct reply *r, const char *key, json_object *val)
{
	json_object *e = reply_error_obj(r);

	if (!e) {
		json_object_put(val);
		return -EINVAL;
	}
	return json_add(e, key, val);
}

int reply_result(struct reply *r, json_object *result)
{
	json_object *body;

	if (r->error) {
		json_object_put(result);
		return r->error;
	}
	body = json_object_new_object();
	if (json_add(body, "result", result) < 0) {
		json_object_put(body);
		return -ENOMEM;
	}
	json_object_put(r->body);
	r->body = body;
	return 0;
}

int reply_add_fd(struct reply *r, int fd, int *ret_index)
{
	if (r->error) {
		safe_close(fd);
		return r->error;
	}
	if (r->n_fds >= ARRAY_SIZE(r->fds)) {
		safe_close(fd);
		return -ETOOMANYREFS;
	}
	*ret_index = (int)r->n_fds;
	r->fds[r->n_fds++] = fd;
	return 0;
}

int reply_add_fd_dup(struct reply *r, int fd, int *ret_index)
{
	int dup;

	if (r->error)
		return r->error;
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return -errno;
	return reply_add_fd(r, dup, ret_index);
}

static int reply_internal(struct reply *r, int err)
{
	return reply_error(r, PROTO_ERR_INTERNAL, err, "the broker failed: %s", strerror(err));
}

int reply_limit_fds(struct reply *r, const struct proto_method *m)
{
	if (r->n_fds <= m->reply_fds)
		return 0;
	return reply_error(
		r, PROTO_ERR_INTERNAL, EPROTO,
		"the broker made a %s reply with %zu fds, the method hands out at most %u", m->name,
		r->n_fds, m->reply_fds);
}

int reply_fail(struct reply *r, int k)
{
	if (k < 0)
		return reply_internal(r, -k);
	if (r->error)
		/* Answered (whatever k says: an error sticks), or its error could not be built. */
		return r->body ? (int)r->error : reply_internal(r, ENOMEM);
	/* A code with no error recorded, or no reply made at all: a bug, never a result. */
	if (k > 0 || !r->body)
		return reply_internal(r, EINVAL);
	return 0;
}

int reply_finish(struct reply *r, int k, json_object **ret_body, int **ret_fds, size_t *ret_n_fds)
{
	int *fds;

	k = reply_fail(r, k);
	if (k < 0) {
		reply_done(r);
		return k;
	}
	/* Names and messages may carry bytes from the client's ELF: keep the reply UTF-8. */
	if (proto_json_sanitize_utf8(r->body) < 0) {
		reply_done(r);
		return -ENOMEM;
	}
	fds = malloc(sizeof(int) * (r->n_fds + 1));
	if (!fds) {
		reply_done(r);
		return -ENOMEM;
	}
	memcpy(fds, r->fds, sizeof(int) * r->n_fds);
	*ret_fds = fds;
	*ret_n_fds = r->n_fds;
	*ret_body = r->body;
	*r = (struct reply){};
	return 0;
}

enum proto_error reply_error_code(const struct reply *r)
{
	return r->error;
}

const char *reply_error_message(struct reply *r)
{
	json_object *e = reply_error_obj(r), *v;

	if (!e || !json_object_object_get_ex(e, "message", &v))
		return NULL;
	return json_object_get_string(v);
}
