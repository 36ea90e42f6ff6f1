/* SPDX-License-Identifier: MIT */
/* The methods answering with JSON text: policy, list (page by page, as the broker wrote them) and
 * show. */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/parse.h"
#include "libbpfbroker-internal.h"
#include "proto/jsonscan.h"

int bpfbroker_policy(struct bpfbroker *b, char **ret_json, struct bpfbroker_error **err)
{
	return request_json(b, PROTO_METHOD_POLICY, NULL, ret_json, err);
}

/* Objects of every page so far, as the broker wrote them, comma separated. */
struct list_text {
	char *buf;
	size_t len, size;
};

static int list_text_add(struct list_text *t, const char *s, size_t len)
{
	if (t->size - t->len <= len) {
		size_t size = t->size * 2 > t->len + len + 64 ? t->size * 2 : t->len + len + 64;
		char *grown = realloc(t->buf, size);

		if (!grown)
			return -ENOMEM;
		t->buf = grown;
		t->size = size;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
	return 0;
}

/* A reply's "id", written as the broker writes it (digits), is id. */
static bool span_is_id(struct json_span v, int64_t id)
{
	char want[24];
	int n = snprintf(want, sizeof(want), "%lld", (long long)id);

	return n > 0 && v.len == (size_t)n && memcmp(v.s, want, v.len) == 0;
}

/*
 * A page's reply, scanned rather than parsed into a tree (for 1,000 objects
 * json-c's tree cost the client more than the broker's whole answer): the
 * objects are appended to t as the broker wrote them, *ret_next is the next
 * page's cursor or NULL. Returns 1 if the reply was a result of this shape,
 * 0 if it is something else (an error) for the common path to read, or < 0
 * if it is not JSON.
 */
static int list_page_scan(const struct proto_raw *raw, int64_t id, struct list_text *t,
			  char **ret_next)
{
	struct json_span top, key, v, result = {}, objects = {}, next = {};
	struct json_iter it;
	bool id_ok = false, error = false;
	int k;

	k = json_scan_object_text(raw->buf, raw->len, &top);
	if (k < 0)
		return -EPROTO;
	json_iter_init(&it, top, 1);
	while ((k = json_iter_next(&it, &key, &v)) > 0) {
		if (json_key_is(key, "id"))
			id_ok = span_is_id(v, id);
		else if (json_key_is(key, "error"))
			error = true;
		else if (json_key_is(key, "result"))
			result = v;
	}
	if (k < 0 || error || !id_ok || !json_span_is_object(result))
		return 0;
	json_iter_init(&it, result, 2);
	while ((k = json_iter_next(&it, &key, &v)) > 0) {
		if (json_key_is(key, "objects"))
			objects = v;
		else if (json_key_is(key, "next"))
			next = v;
	}
	/* "next" is UID/NAME: a string without escapes. */
	if (k < 0 || !json_span_is_array(objects) ||
	    (next.s && (!json_span_is_string(next) || memchr(next.s, '\\', next.len))))
		return -EPROTO;
	/* The array's elements, without its brackets and outer whitespace. */
	objects.s++;
	objects.len -= 2;
	while (objects.len && strchr(" \t\r\n", objects.s[0]))
		objects.s++, objects.len--;
	while (objects.len && strchr(" \t\r\n", objects.s[objects.len - 1]))
		objects.len--;
	/* After the head's "[" no comma; after an object one. */
	if (objects.len && ((t->buf[t->len - 1] != '[' && list_text_add(t, ",", 1) < 0) ||
			    list_text_add(t, objects.s, objects.len) < 0))
		return -ENOMEM;
	*ret_next = NULL;
	if (next.s && !(*ret_next = strndup(next.s + 1, next.len - 2)))
		return -ENOMEM;
	return 1;
}

/* One page: 0 and its objects added to t, *ret_next its "next" (NULL: the last). */
static int list_page(struct bpfbroker *b, const struct bpfbroker_list_opts *opts,
		     const char *cursor, struct list_text *t, char **ret_next,
		     struct bpfbroker_error **err)
{
	/* Borrowed strings: the encoder copies them. */
	struct proto_list_params p = {.cursor = (char *)cursor,
				      .all = opts->all,
				      .shared = opts->shared,
				      .user = (char *)opts->user,
				      .limit = PROTO_MAX_LIST_LIMIT};
	const struct proto_method *lm = &proto_methods[PROTO_METHOD_LIST];
	json_object *params = proto_method_encode(lm, &p), *req;
	int64_t id = b->next_id++;
	struct proto_raw raw = {};
	struct proto_msg m = {};
	int k;

	req = params ? proto_request_new(id, lm->name, params) : NULL;
	if (!req)
		return -ENOMEM;
	k = call_raw(b, req, NULL, 0, lm->reply_fds, &raw);
	json_object_put(req);
	if (k < 0)
		return k;
	k = list_page_scan(&raw, id, t, ret_next);
	if (k != 0) {
		proto_raw_done(&raw);
		return k < 0 ? k : 0;
	}
	/* Not a result: an error (or not an answer to this request) for the common path. */
	k = reply_parse(&raw, id, &m);
	if (k < 0)
		return k;
	k = error_from_reply(m.json, err);
	if (k < 0)
		m.json = NULL; /* taken by the error */
	proto_msg_done(&m);
	return k < 0 ? k : -EPROTO;
}

/*
 * Whether cursor b ("UID/NAME") comes after a in the broker's order (uid, then
 * name by strcmp): each page must start further on, or a broker answering
 * 1/a, 1/b, 1/a, ... would keep the caller listing for ever.
 */
static bool list_cursor_after(const char *a, const char *b)
{
	const char *sa = strchr(a, '/'), *sb = strchr(b, '/');
	char ua[16] = "", ub[16] = "";
	uint64_t na, nb;

	if (!sa || !sb || (size_t)(sa - a) >= sizeof(ua) || (size_t)(sb - b) >= sizeof(ub))
		return false;
	memcpy(ua, a, (size_t)(sa - a));
	memcpy(ub, b, (size_t)(sb - b));
	if (parse_u64(ua, UINT32_MAX, &na) < 0 || parse_u64(ub, UINT32_MAX, &nb) < 0)
		return false;
	return nb > na || (nb == na && strcmp(sb + 1, sa + 1) > 0);
}

/*
 * Every page: the broker answers a list in pages of at most about 1 MiB,
 * each saying with "next" where the following one starts; the caller gets
 * them as one result, the objects as the broker wrote them.
 */
int bpfbroker_list(struct bpfbroker *b, const struct bpfbroker_list_opts *theirs, char **ret_json,
		   struct bpfbroker_error **err)
{
	static const char head[] = "{\"objects\":[", tail[] = "]}";
	struct bpfbroker_list_opts opts = {};
	_cleanup_free_ char *cursor = NULL;
	struct list_text t = {};
	int k = 0;

	if (theirs) {
		k = opts_copy(&opts, sizeof(opts), theirs, theirs->sz, sizeof(size_t));
		if (k < 0)
			return k;
	}
	k = list_text_add(&t, head, strlen(head));
	while (k >= 0) {
		char *next = NULL;

		k = list_page(b, &opts, cursor, &t, &next, err);
		/* A next page must start further on, or this would never end. */
		if (k >= 0 && next && cursor && !list_cursor_after(cursor, next))
			k = -EPROTO;
		free(cursor);
		cursor = next;
		if (!cursor)
			break;
	}
	if (k >= 0)
		k = list_text_add(&t, tail, strlen(tail));
	if (k < 0) {
		free(t.buf);
		return k;
	}
	*ret_json = t.buf;
	return 0;
}

int bpfbroker_show(struct bpfbroker *b, const char *object, char **ret_json,
		   struct bpfbroker_error **err)
{
	if (!object)
		return -EINVAL;
	return request_json(b, PROTO_METHOD_SHOW, OBJECT_PARAMS(object), ret_json, err);
}
