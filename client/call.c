/* SPDX-License-Identifier: MIT */
/* The connection to the broker, and one call on it: a request sent, its reply received and checked,
 * its error or result taken out. */
#include "libbpfbroker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "proto/proto.h"
#include "reply.h"

int bpfbroker_connect(const char *path, struct bpfbroker **ret)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -EBADF;
	struct bpfbroker *b;

	if (!path)
		path = getenv(PROTO_SOCKET_ENV);
	if (!path || !*path)
		path = PROTO_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->fd = TAKE_FD(fd);
	b->next_id = 1;
	*ret = b;
	return 0;
}

void bpfbroker_close(struct bpfbroker *b)
{
	if (!b)
		return;
	safe_close(b->fd);
	free(b);
}

/* Send one request and wait for its reply (at most max_fds fds), as it came off the socket. */
int call_raw(struct bpfbroker *b, json_object *req, const int *fds, size_t n_fds, size_t max_fds,
	     struct proto_raw *ret)
{
	int k;

	k = proto_send(b->fd, req, fds, n_fds, PROTO_MAX_REQUEST_BYTES);
	if (k < 0)
		return k;
	for (;;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};

		k = poll(&p, 1, -1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negative_errno();
		k = proto_recv_raw(b->fd, PROTO_MAX_REPLY_BYTES, max_fds, ret, NULL);
		if (k == -EAGAIN)
			continue;
		if (k == 0)
			return -ECONNRESET;
		return k < 0 ? k : 0;
	}
}

static void free_text(json_object *o, void *text)
{
	(void)o;
	free(text);
}

/*
 * Parse a reply (its fds go with it) and check that it answers request id.
 * The text goes with the parsed reply as its userdata (reply_text()): a
 * result's JSON is the reply as received, not serialized again from the tree.
 */
int reply_parse(struct proto_raw *raw, int64_t id, struct proto_msg *ret)
{
	struct proto_msg m = {};
	int64_t got = -1;
	char *text;
	int k;

	k = proto_parse(raw->buf, raw->len, &m.json, NULL);
	if (k < 0) {
		proto_raw_done(raw);
		return k;
	}
	/* proto_parse() refused any NUL in it, so with one at its end the text is a string. */
	text = realloc(raw->buf, raw->len + 1);
	if (text) {
		raw->buf = NULL;
		text[raw->len] = '\0';
		json_object_set_userdata(m.json, text, free_text);
	}
	m.fds = TAKE_PTR(raw->fds);
	m.n_fds = raw->n_fds;
	raw->n_fds = 0;
	proto_raw_done(raw);
	/*
	 * An error with id 0 is the broker's answer to the connection rather than
	 * the request (busy, too many groups, an unreadable packet): it is ours.
	 */
	if (proto_get_int(m.json, "id", true, 0, INT64_MAX, &got, NULL) < 0 ||
	    (got != id && !(got == 0 && json_object_object_get_ex(m.json, "error", NULL)))) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	*ret = m;
	return 0;
}

/* Send one request and wait for its reply, which may carry at most max_fds fds. */
static int call(struct bpfbroker *b, json_object *req, int64_t id, const int *fds, size_t n_fds,
		size_t max_fds, struct proto_msg *ret)
{
	struct proto_raw raw = {};
	int k = call_raw(b, req, fds, n_fds, max_fds, &raw);

	return k < 0 ? k : reply_parse(&raw, id, ret);
}

int bpfbroker_call_raw(struct bpfbroker *b, const char *request_json, const int *fds, size_t n_fds,
		       char **ret_reply_json, int **ret_fds, size_t *ret_n_fds)
{
	json_object *req = NULL;
	struct proto_msg m = {};
	int64_t id = -1;
	char *text;
	int k;

	k = proto_parse(request_json, strlen(request_json), &req, NULL);
	if (k < 0)
		return k;
	(void)proto_get_int(req, "id", false, 0, INT64_MAX, &id, NULL);
	k = call(b, req, id, fds, n_fds, PROTO_MAX_REPLY_FDS, &m);
	json_object_put(req);
	if (k == -EPROTO && id < 0)
		k = -EPROTO;
	if (k < 0)
		return k;
	text = strdup(reply_text(m.json));
	if (!text) {
		proto_msg_done(&m);
		return -ENOMEM;
	}
	*ret_reply_json = text;
	*ret_fds = TAKE_PTR(m.fds);
	*ret_n_fds = m.n_fds;
	m.n_fds = 0;
	proto_msg_done(&m);
	return 0;
}

int bpfbroker_request(struct bpfbroker *b, enum proto_method_id method, const void *params,
		      const int *fds, size_t n_fds, struct proto_msg *ret, json_object **ret_result,
		      struct bpfbroker_error **err)
{
	const struct proto_method *m = &proto_methods[method];
	struct proto_msg reply = {};
	json_object *p = NULL, *msg, *result;
	int64_t id;
	int k;

	if (n_fds < m->fds_min || n_fds > m->fds_max)
		return -EINVAL;
	/* A load carries its object's fd, or none for a system object (the broker reads it). */
	if (method == PROTO_METHOD_LOAD &&
	    n_fds != (((const struct proto_load_request *)params)->system_object ? 0u : 1u))
		return -EINVAL;
	/* A method that takes no params (policy) is sent without any. */
	if (m->params_size && !(p = proto_method_encode(m, params)))
		return -ENOMEM;
	id = b->next_id++;
	msg = proto_request_new(id, m->name, p);
	if (!msg)
		return -ENOMEM;
	k = call(b, msg, id, fds, n_fds, m->reply_fds, &reply);
	json_object_put(msg);
	if (k < 0)
		return k;
	k = error_from_reply(reply.json, err);
	if (k < 0) {
		reply.json = NULL; /* taken by the error */
		proto_msg_done(&reply);
		return k;
	}
	if (!json_object_object_get_ex(reply.json, "result", &result) ||
	    !json_object_is_type(result, json_type_object)) {
		proto_msg_done(&reply);
		return -EPROTO;
	}
	*ret = reply;
	*ret_result = result;
	return 0;
}

/* bpfbroker_request(), for a method whose answer is only that it succeeded. */
int request_done(struct bpfbroker *b, enum proto_method_id method, const void *params,
		 const int *fds, size_t n_fds, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	int k;

	k = bpfbroker_request(b, method, params, fds, n_fds, &m, &result, err);
	if (k < 0)
		return k;
	proto_msg_done(&m);
	return 0;
}

/* bpfbroker_request(), for methods whose answer is the result as JSON text. */
int request_json(struct bpfbroker *b, enum proto_method_id method, const void *params,
		 char **ret_json, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	char *text;
	int k;

	k = bpfbroker_request(b, method, params, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	text = strdup(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_SPACED));
	proto_msg_done(&m);
	if (!text)
		return -ENOMEM;
	*ret_json = text;
	return 0;
}
