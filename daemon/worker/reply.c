/* SPDX-License-Identifier: MIT */
#include "reply.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void reply_done(struct reply *r)
{
	json_object_put(r->body);
	r->body = NULL;
	close_many(r->fds, r->n_fds);
	r->n_fds = 0;
}

int reply_error(struct reply *r, const char *code, int err, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	json_object *body;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);

	/* libbpf's own error codes (4000 and up) are not errno values. */
	if (err <= 0 || err >= 4000)
		err = EINVAL;
	body = proto_error_new(0, code, err, msg);
	if (!body)
		return -ENOMEM;
	/* The worker doesn't know the request id; the event loop stamps it. */
	json_object_object_del(body, "id");
	json_object_object_del(body, PROTO_VERSION_KEY);
	reply_done(r);
	r->body = body;
	return 0;
}

json_object *reply_error_obj(struct reply *r)
{
	json_object *e = NULL;

	if (r->body)
		json_object_object_get_ex(r->body, "error", &e);
	return e;
}

int reply_error_add(struct reply *r, const char *key, json_object *val)
{
	json_object *e = reply_error_obj(r);

	if (!e || !val || json_object_object_add(e, key, val) < 0) {
		json_object_put(val);
		return e ? -ENOMEM : -EINVAL;
	}
	return 0;
}

int reply_result(struct reply *r, json_object *result)
{
	json_object *body = json_object_new_object();

	if (!body || !result || json_object_object_add(body, "result", result) < 0) {
		json_object_put(body);
		json_object_put(result);
		return -ENOMEM;
	}
	json_object_put(r->body);
	r->body = body;
	return 0;
}

int reply_add_fd(struct reply *r, int fd)
{
	if (r->n_fds >= ARRAY_SIZE(r->fds)) {
		safe_close(fd);
		return -ETOOMANYREFS;
	}
	r->fds[r->n_fds] = fd;
	return (int)r->n_fds++;
}

int reply_add_fd_dup(struct reply *r, int fd)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (dup < 0)
		return -errno;
	return reply_add_fd(r, dup);
}

int reply_limit_fds(struct reply *r, const struct proto_method *m)
{
	if (r->n_fds <= m->reply_fds)
		return 0;
	return reply_error(
		r, PROTO_E_INTERNAL, EPROTO,
		"the broker made a %s reply with %zu fds, the method hands out at most %u", m->name,
		r->n_fds, m->reply_fds);
}

int reply_fail(struct reply *r, int k)
{
	if (k >= 0)
		return k;
	return reply_error(r, PROTO_E_INTERNAL, -k, "the broker failed: %s", strerror(-k));
}

int reply_finish(struct reply *r, int k, json_object **ret_body, int **ret_fds, size_t *ret_n_fds)
{
	int *fds;

	if (k < 0 &&
	    reply_error(r, PROTO_E_INTERNAL, -k, "the broker failed: %s", strerror(-k)) < 0) {
		reply_done(r);
		return -ENOMEM;
	}
	if (!r->body) {
		reply_done(r);
		return -ENOMEM;
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

static const char *error_field(struct reply *r, const char *key)
{
	json_object *e = reply_error_obj(r), *v;

	if (!e || !json_object_object_get_ex(e, key, &v))
		return NULL;
	return json_object_get_string(v);
}

const char *reply_error_code(struct reply *r)
{
	return error_field(r, "code");
}

const char *reply_error_message(struct reply *r)
{
	return error_field(r, "message");
}
