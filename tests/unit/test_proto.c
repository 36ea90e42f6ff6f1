// SPDX-License-Identifier: MIT
/*
 * Unit tests for proto/ (frame.c, parse.c, fields.c, envelope.c, load_*.c):
 * parsing hostile input, request envelopes,
 * typed getters and their messages, the "load" parameters in both directions,
 * hex, and framing over a real SOCK_SEQPACKET socketpair (fds passed,
 * rejected messages closing every fd that came with them).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/macro.h"
#include "proto/method.h"
#include "proto/params.h"
#include "proto/proto.h"

/* Test allocations never fail quietly; abort() is known not to return, so
 * the compiler (and -Wformat-overflow) sees the pointer is non-NULL after. */
static void *xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	return p;
}

/* ---- helpers ---- */

/* Parse text that the test knows to be a valid message. */
static json_object *J(const char *text)
{
	json_object *o = NULL;
	char *error = NULL;
	int r = proto_parse(text, strlen(text), &o, &error);

	if (r < 0)
		fail_msg("cannot parse test input %s: %s", text, error ? error : "?");
	assert_non_null(o);
	return o;
}

/* Check that error is set and contains text, then free it. */
static void assert_error(char **error, const char *text)
{
	if (!*error)
		fail_msg("no error message, expected one containing \"%s\"", text);
	if (!strstr(*error, text))
		fail_msg("error \"%s\" does not contain \"%s\"", *error, text);
	free(*error);
	*error = NULL;
}

static int parse_str(const char *text, char **error)
{
	json_object *o = NULL;
	int r = proto_parse(text, strlen(text), &o, error);

	if (r == 0)
		assert_non_null(o);
	json_object_put(o);
	return r;
}

/* Parse text and expect rejection with -EBADMSG and a message containing what. */
static void reject_parse(const char *text, size_t len, const char *what)
{
	json_object *o = NULL;
	char *error = NULL;
	int r = proto_parse(text, len, &o, &error);

	if (r != -EBADMSG)
		fail_msg("proto_parse(%.*s) returned %d, expected -EBADMSG", (int)len, text, r);
	assert_null(o);
	assert_error(&error, what);
}

/* A JSON object nested to exactly depth levels (the outer object is level 1). */
static char *nested(size_t depth, bool arrays)
{
	size_t cap = depth * 8 + 16, n = 0;
	char *s = xmalloc(cap);

	assert_non_null(s);
	n += (size_t)sprintf(s + n, "{\"a\":");
	for (size_t i = 1; i < depth; i++)
		n += (size_t)sprintf(s + n, arrays ? "[" : "{\"a\":");
	s[n++] = '1';
	for (size_t i = 1; i < depth; i++)
		s[n++] = arrays ? ']' : '}';
	s[n++] = '}';
	s[n] = '\0';
	return s;
}

static char *repeat(char c, size_t n)
{
	char *s = xmalloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* A message {"p":"xxx..."} whose plain encoding is exactly size bytes. */
static json_object *message_of_size(size_t size)
{
	static const size_t overhead = sizeof("{\"p\":\"\"}") - 1;
	_cleanup_free_ char *pad = NULL;
	json_object *o;
	size_t len;

	assert_true(size >= overhead);
	pad = repeat('x', size - overhead);
	o = json_object_new_object();
	json_object_object_add(o, "p", json_object_new_string(pad));
	json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	assert_int_equal(len, size);
	return o;
}

/* ---- fd accounting ---- */

#define FD_SCAN 2048

struct fd_snapshot {
	int n_proc;
	bool open[FD_SCAN];
};

static int count_proc_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n; /* includes the directory's own fd, equally in every count */
}

static void fd_snapshot(struct fd_snapshot *s)
{
	for (int fd = 0; fd < FD_SCAN; fd++)
		s->open[fd] = fcntl(fd, F_GETFD) >= 0;
	s->n_proc = count_proc_fds();
}

/* Fail if any fd was opened or closed since before. */
static void assert_fds_unchanged(const struct fd_snapshot *before)
{
	struct fd_snapshot now;

	fd_snapshot(&now);
	for (int fd = 0; fd < FD_SCAN; fd++)
		if (before->open[fd] != now.open[fd])
			fail_msg("fd %d was %s", fd, now.open[fd] ? "leaked" : "closed");
	assert_int_equal(before->n_proc, now.n_proc);
}

static void seqpacket_pair(int sv[2], bool nonblock)
{
	int flags = SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0);

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | flags, 0, sv), 0);
}

static void close_pair(int sv[2])
{
	safe_close(sv[0]);
	safe_close(sv[1]);
}

/* A memfd with a recognisable inode. */
static int new_memfd(void)
{
	int fd = memfd_create("test-proto", MFD_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	assert_int_equal(fstat(a, &sa), 0);
	assert_int_equal(fstat(b, &sb), 0);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* sendmsg() of arbitrary bytes and fds, bypassing proto_send's checks. */
static void send_raw(int sock, const void *data, size_t len, const int *fds, size_t n_fds)
{
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	_cleanup_free_ void *control = NULL;

	if (n_fds > 0) {
		struct cmsghdr *c;

		control = calloc(1, CMSG_SPACE(sizeof(int) * n_fds));
		assert_non_null(control);
		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	assert_int_equal(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

/* Receive and expect nothing to be waiting. */
static void assert_nothing_queued(int sock)
{
	struct proto_msg m = {};

	assert_int_equal(proto_recv(sock, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &m, NULL),
			 -EAGAIN);
}

/* Receive a {"seq":n} message: proves the stream is still in step after a rejected one. */
static void recv_seq(int sock, int64_t n)
{
	struct proto_msg m = {};
	int64_t got = -1;

	assert_int_equal(proto_recv(sock, 1024, 4, &m, NULL), 1);
	assert_int_equal(proto_get_int(m.json, "seq", true, 0, INT64_MAX, &got, NULL), 0);
	assert_int_equal(got, n);
	assert_int_equal(m.n_fds, 0);
	proto_msg_done(&m);
}

static void send_seq(int sock, int64_t n)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "seq", json_object_new_int64(n));
	assert_int_equal(proto_send(sock, o, NULL, 0, 1024), 0);
	json_object_put(o);
}

/* ---- proto_parse ---- */

static void test_parse_valid_object(void **state)
{
	static const char text[] = "{\"a\":1,\"b\":[true,null,\"x\"],\"c\":{\"d\":\"\\u00e9\"}}";
	json_object *o = NULL, *v;
	char *error = NULL;

	assert_int_equal(proto_parse(text, strlen(text), &o, &error), 0);
	assert_null(error);
	assert_true(json_object_is_type(o, json_type_object));
	assert_true(json_object_object_get_ex(o, "a", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(o, "b", &v));
	assert_int_equal(json_object_array_length(v), 3);
	json_object_put(o);

	/* Whitespace around the one object is fine. */
	assert_int_equal(parse_str(" \n{}\t\r\n ", &error), 0);
	assert_int_equal(parse_str("{}", &error), 0);
	assert_null(error);
}

static void test_parse_honours_length(void **state)
{
	/* Not NUL-terminated where the message ends: only len bytes count. */
	static const char text[] = "{\"a\":1}garbage";
	json_object *o = NULL;

	assert_int_equal(proto_parse(text, 7, &o, NULL), 0);
	json_object_put(o);
	reject_parse(text, 6, "not valid JSON");
	reject_parse(text, sizeof(text) - 1, "not valid JSON");
}

static void test_parse_not_object(void **state)
{
	reject_parse("[1,2]", 5, "not a JSON object");
	reject_parse("\"s\"", 3, "not a JSON object");
	/* Bare scalars: json-c wants more input after them, so they are incomplete JSON. */
	reject_parse("1", 1, "JSON");
	reject_parse("1.5 ", 4, "not a JSON object");
	reject_parse("true", 4, "JSON");
	reject_parse("null", 4, "JSON");
	reject_parse("null ", 5, "JSON");
}

static void test_parse_trailing_garbage(void **state)
{
	static const char *const bad[] = {
		"{} x", "{}{}", "{}]", "{\"a\":1},", "{}\n{}", "{} // comment", "{}1",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		reject_parse(bad[i], strlen(bad[i]), "not valid JSON");
}

static void test_parse_embedded_nul(void **state)
{
	static const char trailing[] = "{}\0";
	static const char inside[] = "{\"a\":\"b\0c\"}";
	static const char leading[] = "\0{}";

	reject_parse(trailing, sizeof(trailing) - 1, "NUL byte");
	reject_parse(inside, sizeof(inside) - 1, "NUL byte");
	reject_parse(leading, sizeof(leading) - 1, "NUL byte");
}

static void test_parse_depth(void **state)
{
	for (int arrays = 0; arrays <= 1; arrays++) {
		_cleanup_free_ char *ok = nested(PROTO_MAX_JSON_DEPTH, arrays);
		_cleanup_free_ char *deep = nested(PROTO_MAX_JSON_DEPTH + 1, arrays);
		_cleanup_free_ char *deeper = nested(1000, arrays);
		char *error = NULL;

		if (parse_str(ok, &error) != 0)
			fail_msg("depth %d rejected: %s", PROTO_MAX_JSON_DEPTH, error);
		reject_parse(deep, strlen(deep), "too deep");
		reject_parse(deeper, strlen(deeper), "too deep");
	}
}

static void test_parse_empty(void **state)
{
	reject_parse("", 0, "empty message");
	reject_parse(NULL, 0, "empty message");
	reject_parse(" ", 1, "not valid JSON");
	reject_parse("\n\n", 2, "not valid JSON");
}

static void test_parse_invalid(void **state)
{
	static const char *const bad[] = {
		"{",
		"}",
		"{\"a\":}",
		"{\"a\":1,}",
		"{a:1}",
		"{\"a\" 1}",
		"{\"a\":01}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\xff\"}",
		"{\"a\":\"\xc3\"}",
		"{\"a\":tru}",
		"{\"a\":NaN}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		reject_parse(bad[i], strlen(bad[i]), "not valid JSON");
}

static void test_parse_size_limit(void **state)
{
	size_t max = PROTO_MAX_REPLY_BYTES;
	_cleanup_free_ char *buf = xmalloc(max + 1);
	json_object *o = NULL;
	char *error = NULL;

	assert_non_null(buf);
	memset(buf, ' ', max + 1);
	buf[0] = '{';
	buf[1] = '}';
	/* Exactly the largest message allowed... */
	assert_int_equal(proto_parse(buf, max, &o, &error), 0);
	json_object_put(o);
	o = NULL;
	/* ...and one byte more. */
	assert_int_equal(proto_parse(buf, max + 1, &o, &error), -EMSGSIZE);
	assert_null(o);
	assert_error(&error, "too large");
}

static void test_parse_error_handling(void **state)
{
	json_object *o = NULL;
	char *error = strdup("an earlier error");

	/* A NULL error pointer is allowed, and an earlier message is replaced (not leaked). */
	assert_int_equal(proto_parse("[]", 2, &o, NULL), -EBADMSG);
	assert_int_equal(proto_parse("[]", 2, &o, &error), -EBADMSG);
	assert_error(&error, "not a JSON object");
	assert_null(o);
}

/* ---- proto_request_check ---- */

static int check(const char *text, int64_t *id, const char **method, json_object **params,
		 char **error, json_object **keep)
{
	json_object *o = J(text);
	int r = proto_request_check(o, id, method, params, error);

	if (keep)
		*keep = o;
	else
		json_object_put(o);
	return r;
}

static void reject_request(const char *text, int err, const char *what)
{
	int64_t id = -42;
	const char *method = NULL;
	json_object *params = NULL;
	char *error = NULL;
	int r = check(text, &id, &method, &params, &error, NULL);

	if (r != err)
		fail_msg("%s: proto_request_check returned %d (%s), expected %d", text, r,
			 error ? error : "no message", err);
	/* Nothing is returned from a rejected request. */
	assert_int_equal(id, -42);
	assert_null(method);
	assert_null(params);
	assert_error(&error, what);
}

static void test_request_check_valid(void **state)
{
	json_object *o, *params = NULL, *v;
	const char *method = NULL;
	int64_t id = -1;
	char *error = NULL;

	assert_int_equal(check("{\"bpfbroker\":1,\"id\":7,\"method\":\"hello\"}", &id, &method,
			       &params, &error, &o),
			 0);
	assert_null(error);
	assert_int_equal(id, 7);
	assert_string_equal(method, "hello");
	assert_null(params);
	json_object_put(o);

	params = NULL;
	assert_int_equal(check("{\"params\":{\"x\":true},\"method\":\"load\",\"id\":0,"
			       "\"bpfbroker\":1}",
			       &id, &method, &params, &error, &o),
			 0);
	assert_int_equal(id, 0);
	assert_string_equal(method, "load");
	assert_non_null(params);
	assert_true(json_object_object_get_ex(params, "x", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);

	assert_int_equal(check("{\"bpfbroker\":1,\"id\":9223372036854775807,\"method\":\"\"}", &id,
			       &method, &params, &error, NULL),
			 0);
	assert_int_equal(id, INT64_MAX);
}

static void test_request_check_version(void **state)
{
	reject_request("{\"id\":1,\"method\":\"hello\"}", -EINVAL, "missing \"bpfbroker\"");
	reject_request("{\"bpfbroker\":null,\"id\":1,\"method\":\"hello\"}", -EINVAL,
		       "missing \"bpfbroker\"");
	reject_request("{\"bpfbroker\":\"1\",\"id\":1,\"method\":\"hello\"}", -EINVAL,
		       "\"bpfbroker\" must be an integer");
	reject_request("{\"bpfbroker\":1.0,\"id\":1,\"method\":\"hello\"}", -EINVAL,
		       "\"bpfbroker\" must be an integer");
	reject_request("{\"bpfbroker\":true,\"id\":1,\"method\":\"hello\"}", -EINVAL,
		       "\"bpfbroker\" must be an integer");
	reject_request("{\"bpfbroker\":2,\"id\":1,\"method\":\"hello\"}", -EPROTONOSUPPORT,
		       "protocol version 2 is not supported (this broker speaks 1)");
	reject_request("{\"bpfbroker\":0,\"id\":1,\"method\":\"hello\"}", -EPROTONOSUPPORT,
		       "version 0");
	reject_request("{\"bpfbroker\":2147483647,\"id\":1,\"method\":\"hello\"}", -EPROTONOSUPPORT,
		       "version 2147483647");
	reject_request("{\"bpfbroker\":2147483648,\"id\":1,\"method\":\"hello\"}", -ERANGE,
		       "\"bpfbroker\" must be between 0 and 2147483647");
	reject_request("{\"bpfbroker\":-1,\"id\":1,\"method\":\"hello\"}", -ERANGE,
		       "\"bpfbroker\" must be between");
	/* The version is checked first: a later version's other keys don't matter. */
	reject_request("{\"bpfbroker\":2,\"id\":\"x\",\"newkey\":1}", -EPROTONOSUPPORT,
		       "version 2");
	reject_request("{\"bpfbroker\":3}", -EPROTONOSUPPORT, "version 3");
}

static void test_request_check_keys(void **state)
{
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\",\"foo\":1}", -EINVAL,
		       "request: unknown key \"foo\"");
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\",\"result\":{}}", -EINVAL,
		       "unknown key \"result\"");
	/* Unknown keys are found before a missing id. */
	reject_request("{\"bpfbroker\":1,\"ID\":1}", -EINVAL, "unknown key \"ID\"");
}

static void test_request_check_id(void **state)
{
	reject_request("{\"bpfbroker\":1,\"method\":\"hello\"}", -EINVAL, "missing \"id\"");
	reject_request("{\"bpfbroker\":1,\"id\":null,\"method\":\"hello\"}", -EINVAL,
		       "missing \"id\"");
	reject_request("{\"bpfbroker\":1,\"id\":\"1\",\"method\":\"hello\"}", -EINVAL,
		       "\"id\" must be an integer");
	reject_request("{\"bpfbroker\":1,\"id\":1.5,\"method\":\"hello\"}", -EINVAL,
		       "\"id\" must be an integer");
	reject_request("{\"bpfbroker\":1,\"id\":-1,\"method\":\"hello\"}", -ERANGE,
		       "\"id\" must be between 0 and 9223372036854775807");
	/* Beyond int64: must be refused, not clamped into a different id. */
	reject_request("{\"bpfbroker\":1,\"id\":9223372036854775808,\"method\":\"hello\"}", -ERANGE,
		       "\"id\" must be between");
	reject_request("{\"bpfbroker\":1,\"id\":18446744073709551615,\"method\":\"hello\"}",
		       -ERANGE, "\"id\" must be between");
	reject_request("{\"bpfbroker\":1,\"id\":99999999999999999999999,\"method\":\"hello\"}",
		       -ERANGE, "\"id\" must be between");
}

static void test_request_check_method(void **state)
{
	reject_request("{\"bpfbroker\":1,\"id\":1}", -EINVAL, "missing \"method\"");
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":null}", -EINVAL, "missing \"method\"");
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":5}", -EINVAL,
		       "\"method\" must be a string");
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":[\"hello\"]}", -EINVAL,
		       "\"method\" must be a string");
	reject_request("{\"bpfbroker\":1,\"id\":1,\"method\":\"hel\\u0000lo\"}", -EINVAL,
		       "\"method\" contains a NUL character");
}

static void test_request_check_params(void **state)
{
	static const char *const bad[] = {"[]", "\"x\"", "1", "true", "null"};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char text[128];

		snprintf(text, sizeof(text),
			 "{\"bpfbroker\":1,\"id\":1,\"method\":\"load\",\"params\":%s}", bad[i]);
		reject_request(text, -EINVAL, "\"params\" must be an object");
	}
}

/* ---- typed getters ---- */

static void test_get_string(void **state)
{
	json_object *o = J("{\"s\":\"text\",\"n\":5,\"z\":null,\"nul\":\"a\\u0000b\",\"e\":\"\"}");
	const char *s = "unset";
	char *error = NULL;

	assert_int_equal(proto_get_string(o, "s", true, &s, &error), 0);
	assert_string_equal(s, "text");
	assert_int_equal(proto_get_string(o, "e", true, &s, &error), 0);
	assert_string_equal(s, "");
	assert_null(error);

	s = "unset";
	assert_int_equal(proto_get_string(o, "missing", false, &s, &error), 0);
	assert_null(s);
	s = "unset";
	assert_int_equal(proto_get_string(o, "z", false, &s, &error), 0);
	assert_null(s);
	assert_null(error);

	assert_int_equal(proto_get_string(o, "missing", true, &s, &error), -EINVAL);
	assert_error(&error, "missing \"missing\"");
	assert_int_equal(proto_get_string(o, "z", true, &s, &error), -EINVAL);
	assert_error(&error, "missing \"z\"");
	assert_int_equal(proto_get_string(o, "n", false, &s, &error), -EINVAL);
	assert_error(&error, "\"n\" must be a string");
	assert_int_equal(proto_get_string(o, "nul", false, &s, &error), -EINVAL);
	assert_error(&error, "\"nul\" contains a NUL character");

	/* Errors without a message buffer. */
	assert_int_equal(proto_get_string(o, "n", true, &s, NULL), -EINVAL);
	json_object_put(o);
}

static void test_get_int(void **state)
{
	json_object *o = J("{\"i\":7,\"neg\":-3,\"s\":\"5\",\"d\":5.0,\"b\":true,\"o\":{},"
			   "\"z\":null,\"max\":9223372036854775807,\"min\":-9223372036854775808,"
			   "\"u\":9223372036854775808,\"u32\":4294967295}");
	static const char *const not_int[] = {"s", "d", "b", "o"};
	int64_t v = 42;
	char *error = NULL;

	assert_int_equal(proto_get_int(o, "i", true, 0, 10, &v, &error), 0);
	assert_int_equal(v, 7);
	/* Bounds are inclusive. */
	assert_int_equal(proto_get_int(o, "i", true, 7, 7, &v, &error), 0);
	assert_int_equal(proto_get_int(o, "neg", true, -3, 0, &v, &error), 0);
	assert_int_equal(v, -3);
	assert_int_equal(proto_get_int(o, "max", true, 0, INT64_MAX, &v, &error), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(proto_get_int(o, "min", true, INT64_MIN, 0, &v, &error), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(proto_get_int(o, "u32", true, 0, UINT32_MAX, &v, &error), 0);
	assert_true(v == UINT32_MAX);
	assert_null(error);

	/* Absent or null and optional: the default stays. */
	v = 42;
	assert_int_equal(proto_get_int(o, "missing", false, 0, 10, &v, &error), 0);
	assert_int_equal(v, 42);
	assert_int_equal(proto_get_int(o, "z", false, 0, 10, &v, &error), 0);
	assert_int_equal(v, 42);
	assert_null(error);

	/* Rejections leave *ret alone. */
	assert_int_equal(proto_get_int(o, "missing", true, 0, 10, &v, &error), -EINVAL);
	assert_error(&error, "missing \"missing\"");
	assert_int_equal(proto_get_int(o, "i", true, 8, 10, &v, &error), -ERANGE);
	assert_error(&error, "\"i\" must be between 8 and 10");
	assert_int_equal(proto_get_int(o, "i", true, 0, 6, &v, &error), -ERANGE);
	assert_error(&error, "\"i\" must be between 0 and 6");
	assert_int_equal(proto_get_int(o, "neg", true, -2, 0, &v, &error), -ERANGE);
	assert_error(&error, "\"neg\" must be between -2 and 0");
	assert_int_equal(proto_get_int(o, "u", true, 0, INT64_MAX, &v, &error), -ERANGE);
	assert_error(&error, "\"u\" must be between");
	assert_int_equal(proto_get_int(o, "u32", true, 0, UINT32_MAX - 1, &v, &error), -ERANGE);
	assert_error(&error, "\"u32\" must be between 0 and 4294967294");
	for (size_t i = 0; i < ARRAY_SIZE(not_int); i++) {
		char want[64];

		assert_int_equal(
			proto_get_int(o, not_int[i], false, INT64_MIN, INT64_MAX, &v, &error),
			-EINVAL);
		snprintf(want, sizeof(want), "\"%s\" must be an integer", not_int[i]);
		assert_error(&error, want);
	}
	assert_int_equal(v, 42);
	assert_int_equal(proto_get_int(o, "i", true, 8, 10, &v, NULL), -ERANGE);
	json_object_put(o);
}

static void test_get_bool(void **state)
{
	json_object *o = J("{\"t\":true,\"f\":false,\"one\":1,\"s\":\"true\",\"z\":null}");
	bool b = false;
	char *error = NULL;

	assert_int_equal(proto_get_bool(o, "t", true, &b, &error), 0);
	assert_true(b);
	assert_int_equal(proto_get_bool(o, "f", true, &b, &error), 0);
	assert_false(b);
	b = true;
	assert_int_equal(proto_get_bool(o, "missing", false, &b, &error), 0);
	assert_true(b);
	assert_int_equal(proto_get_bool(o, "z", false, &b, &error), 0);
	assert_true(b);
	assert_null(error);

	assert_int_equal(proto_get_bool(o, "missing", true, &b, &error), -EINVAL);
	assert_error(&error, "missing \"missing\"");
	assert_int_equal(proto_get_bool(o, "one", false, &b, &error), -EINVAL);
	assert_error(&error, "\"one\" must be true or false");
	assert_int_equal(proto_get_bool(o, "s", false, &b, &error), -EINVAL);
	assert_error(&error, "\"s\" must be true or false");
	assert_true(b);
	assert_int_equal(proto_get_bool(o, "s", false, &b, NULL), -EINVAL);
	json_object_put(o);
}

static void test_check_keys(void **state)
{
	static const char *const allowed[] = {"a", "b", NULL};
	static const char *const none[] = {NULL};
	json_object *o = J("{\"a\":1,\"b\":2}");
	_cleanup_free_ char *long_key = repeat('k', 100);
	char *error = NULL;
	char want[128];

	assert_int_equal(proto_check_keys(o, "thing", allowed, &error), 0);
	assert_null(error);
	json_object_object_add(o, "c", json_object_new_int(3));
	assert_int_equal(proto_check_keys(o, "thing", allowed, &error), -EINVAL);
	assert_error(&error, "thing: unknown key \"c\"");
	assert_int_equal(proto_check_keys(o, "thing", allowed, NULL), -EINVAL);
	json_object_put(o);

	/* Keys are matched exactly, not by prefix or case. */
	o = J("{\"A\":1}");
	assert_int_equal(proto_check_keys(o, "x", allowed, &error), -EINVAL);
	assert_error(&error, "unknown key \"A\"");
	json_object_put(o);
	o = J("{\"ab\":1}");
	assert_int_equal(proto_check_keys(o, "x", allowed, &error), -EINVAL);
	assert_error(&error, "unknown key \"ab\"");
	json_object_put(o);

	o = J("{}");
	assert_int_equal(proto_check_keys(o, "empty", none, &error), 0);
	json_object_object_add(o, long_key, json_object_new_int(1));
	assert_int_equal(proto_check_keys(o, "empty", none, &error), -EINVAL);
	/* A hostile key is cut to 64 characters in the message. */
	snprintf(want, sizeof(want), "empty: unknown key \"%.64s\"", long_key);
	assert_error(&error, want);
	json_object_put(o);
}

/* ---- message builders ---- */

static void test_request_new(void **state)
{
	json_object *params = J("{\"object_fd\":0}");
	json_object *o = proto_request_new(12, "load", params), *v;
	const char *text, *method = NULL;
	json_object *parsed, *got_params = NULL;
	int64_t id = -1;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, PROTO_VERSION_KEY, &v));
	assert_int_equal(json_object_get_int(v), PROTO_VERSION);
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_int_equal(json_object_get_int64(v), 12);
	assert_true(json_object_object_get_ex(o, "method", &v));
	assert_string_equal(json_object_get_string(v), "load");
	assert_true(json_object_object_get_ex(o, "params", &v));
	assert_ptr_equal(v, params);

	/* What we build, we accept. */
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	parsed = J(text);
	assert_int_equal(proto_request_check(parsed, &id, &method, &got_params, NULL), 0);
	assert_int_equal(id, 12);
	assert_string_equal(method, "load");
	assert_non_null(got_params);
	json_object_put(parsed);
	json_object_put(o);

	o = proto_request_new(1, "hello", NULL);
	assert_non_null(o);
	assert_false(json_object_object_get_ex(o, "params", NULL));
	assert_int_equal(json_object_object_length(o), 3);
	json_object_put(o);
}

static void test_reply_and_error_new(void **state)
{
	json_object *o = proto_reply_new(5, J("{\"x\":1}")), *v, *e;

	assert_non_null(o);
	assert_int_equal(json_object_object_length(o), 3);
	assert_true(json_object_object_get_ex(o, PROTO_VERSION_KEY, &v));
	assert_int_equal(json_object_get_int(v), PROTO_VERSION);
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_int_equal(json_object_get_int64(v), 5);
	assert_true(json_object_object_get_ex(o, "result", &v));
	assert_true(json_object_object_get_ex(v, "x", NULL));
	json_object_put(o);

	/* errno is positive whichever sign it is given with. */
	for (int sign = -1; sign <= 1; sign += 2) {
		o = proto_error_new(9, PROTO_E_DENIED, sign * EPERM, "no");
		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "id", &v));
		assert_int_equal(json_object_get_int64(v), 9);
		assert_true(json_object_object_get_ex(o, "error", &e));
		assert_int_equal(json_object_object_length(e), 3);
		assert_true(json_object_object_get_ex(e, "code", &v));
		assert_string_equal(json_object_get_string(v), "policy-denied");
		assert_true(json_object_object_get_ex(e, "errno", &v));
		assert_int_equal(json_object_get_int(v), EPERM);
		assert_true(json_object_object_get_ex(e, "message", &v));
		assert_string_equal(json_object_get_string(v), "no");
		json_object_put(o);
	}
	/* Without a message, the code stands in for it. */
	o = proto_error_new(0, PROTO_E_INTERNAL, ENOMEM, NULL);
	assert_true(json_object_object_get_ex(o, "error", &e));
	assert_true(json_object_object_get_ex(e, "message", &v));
	assert_string_equal(json_object_get_string(v), "internal");
	json_object_put(o);

	/* Stamping a body made elsewhere (as the worker's replies are). */
	o = J("{\"error\":{\"code\":\"x\"}}");
	assert_int_equal(proto_reply_stamp(o, 77), 0);
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_int_equal(json_object_get_int64(v), 77);
	assert_true(json_object_object_get_ex(o, PROTO_VERSION_KEY, &v));
	assert_int_equal(json_object_get_int(v), PROTO_VERSION);
	json_object_put(o);
}

static void test_error_codes(void **state)
{
	/* These strings are the wire protocol (PROTOCOL.md); changing one breaks clients. */
	assert_string_equal(PROTO_E_INVALID, "invalid-request");
	assert_string_equal(PROTO_E_VERSION, "unsupported-version");
	assert_string_equal(PROTO_E_METHOD, "unknown-method");
	assert_string_equal(PROTO_E_TOO_LARGE, "too-large");
	assert_string_equal(PROTO_E_FDS, "bad-fds");
	assert_string_equal(PROTO_E_DENIED, "policy-denied");
	assert_string_equal(PROTO_E_OBJECT, "bad-object");
	assert_string_equal(PROTO_E_LOAD, "load-failed");
	assert_string_equal(PROTO_E_TIMEOUT, "timeout");
	assert_string_equal(PROTO_E_BUSY, "busy");
	assert_string_equal(PROTO_E_INTERNAL, "internal");
	assert_string_equal(PROTO_VERSION_KEY, "bpfbroker");
	assert_int_equal(PROTO_VERSION, 1);
}

/* ---- load ---- */

static int decode(const char *text, size_t n_fds, struct proto_load_request *req, char **error)
{
	json_object *o = J(text);
	int r = proto_load_request_decode(o, n_fds, req, error);

	json_object_put(o);
	return r;
}

static void reject_load(const char *text, size_t n_fds, int err, const char *what)
{
	struct proto_load_request req = {.object_fd = 99};
	char *error = NULL;
	int r = decode(text, n_fds, &req, &error);

	if (r != err)
		fail_msg("%s: decode returned %d (%s), expected %d", text, r,
			 error ? error : "no message", err);
	/* A rejected request returns nothing to free. */
	assert_int_equal(req.object_fd, 99);
	assert_null(req.globals);
	assert_error(&error, what);
}

/* Decode {"object_fd":0, <field>} with one fd. */
static void reject_field(const char *field, int err, const char *what)
{
	char text[4096];

	snprintf(text, sizeof(text), "{\"object_fd\":0,%s}", field);
	reject_load(text, 1, err, what);
}

static void accept_field(const char *field)
{
	struct proto_load_request req = {};
	char text[4096];
	char *error = NULL;

	snprintf(text, sizeof(text), "{\"object_fd\":0,%s}", field);
	if (decode(text, 1, &req, &error) != 0)
		fail_msg("%s rejected: %s", text, error);
	proto_load_request_done(&req);
}

static void test_load_decode_minimal(void **state)
{
	struct proto_load_request req = {.check_only = true};
	char *error = NULL;

	assert_int_equal(decode("{\"object_fd\":0}", 1, &req, &error), 0);
	assert_null(error);
	assert_int_equal(req.object_fd, 0);
	assert_null(req.object_name);
	assert_false(req.check_only);
	assert_false(req.libbpf_log);
	assert_int_equal(req.n_globals, 0);
	assert_null(req.globals);
	assert_int_equal(req.n_map_sizes, 0);
	assert_int_equal(req.n_programs, 0);
	proto_load_request_done(&req);

	/* null and empty arrays are the same as absent. */
	assert_int_equal(decode("{\"object_fd\":2,\"object_name\":null,\"check_only\":null,"
				"\"globals\":[],\"map_sizes\":null,\"programs\":[]}",
				3, &req, &error),
			 0);
	assert_int_equal(req.object_fd, 2);
	assert_null(req.object_name);
	assert_int_equal(req.n_globals + req.n_map_sizes + req.n_programs, 0);
	proto_load_request_done(&req);
}

static void test_load_decode_full(void **state)
{
	struct proto_load_request req = {};
	char *error = NULL;
	static const char text[] =
		"{\"object_fd\":1,\"object_name\":\"counter\",\"check_only\":true,"
		"\"globals\":[{\"name\":\"limit\",\"value\":\"0a000000\"},"
		"{\"name\":\"flag\",\"value\":\"FF\"}],"
		"\"map_sizes\":[{\"name\":\"counts\",\"max_entries\":4096}],"
		"\"programs\":[{\"name\":\"count\"},"
		"{\"name\":\"probe\",\"type\":\"kprobe\",\"attach_type\":\"trace_kprobe_multi\"}]}";

	assert_int_equal(decode(text, 2, &req, &error), 0);
	assert_null(error);
	assert_int_equal(req.object_fd, 1);
	assert_string_equal(req.object_name, "counter");
	assert_true(req.check_only);
	assert_int_equal(req.n_globals, 2);
	assert_string_equal(req.globals[0].name, "limit");
	assert_int_equal(req.globals[0].size, 4);
	assert_memory_equal(req.globals[0].value, "\x0a\0\0\0", 4);
	assert_string_equal(req.globals[1].name, "flag");
	assert_int_equal(req.globals[1].size, 1);
	assert_int_equal(req.globals[1].value[0], 0xff);
	assert_int_equal(req.n_map_sizes, 1);
	assert_string_equal(req.map_sizes[0].name, "counts");
	assert_int_equal(req.map_sizes[0].max_entries, 4096);
	assert_int_equal(req.n_programs, 2);
	assert_string_equal(req.programs[0].name, "count");
	assert_null(req.programs[0].type);
	assert_null(req.programs[0].attach_type);
	assert_string_equal(req.programs[1].name, "probe");
	assert_string_equal(req.programs[1].type, "kprobe");
	assert_string_equal(req.programs[1].attach_type, "trace_kprobe_multi");
	proto_load_request_done(&req);
	/* done resets, so a second call is harmless. */
	assert_null(req.globals);
	assert_int_equal(req.n_globals, 0);
	assert_null(req.object_name);
	proto_load_request_done(&req);
}

static void test_load_decode_envelope(void **state)
{
	struct proto_load_request req = {.object_fd = 99};
	char *error = NULL;

	assert_int_equal(proto_load_request_decode(NULL, 1, &req, &error), -EINVAL);
	assert_error(&error, "load needs \"params\"");
	assert_int_equal(req.object_fd, 99);

	reject_load("{\"object_fd\":0,\"object\":\"/etc/passwd\"}", 1, -EINVAL,
		    "load: unknown key \"object\"");
	reject_load("{\"object_fd\":0,\"path\":\"x.o\"}", 1, -EINVAL, "load: unknown key \"path\"");
}

static void test_load_decode_object_fd(void **state)
{
	struct proto_load_request req = {};
	char *error = NULL;

	reject_load("{}", 1, -EINVAL, "missing \"object_fd\"");
	reject_load("{\"object_fd\":null}", 1, -EINVAL, "missing \"object_fd\"");
	reject_load("{\"object_fd\":\"0\"}", 1, -EINVAL, "\"object_fd\" must be an integer");
	reject_load("{\"object_fd\":0.0}", 1, -EINVAL, "\"object_fd\" must be an integer");
	reject_load("{\"object_fd\":-1}", 1, -ERANGE, "\"object_fd\" must be between 0 and 3");
	reject_load("{\"object_fd\":4}", 5, -ERANGE, "\"object_fd\" must be between 0 and 3");
	/* In range, but the message doesn't carry that many fds. */
	reject_load("{\"object_fd\":1}", 1, -EBADF,
		    "\"object_fd\" refers to fd 1 but the message carries 1");
	reject_load("{\"object_fd\":0}", 0, -EBADF,
		    "\"object_fd\" refers to fd 0 but the message carries 0");

	assert_int_equal(decode("{\"object_fd\":3}", PROTO_MAX_REQUEST_FDS, &req, &error), 0);
	assert_int_equal(req.object_fd, 3);
	proto_load_request_done(&req);
}

/*
 * A system object and an object_fd together contradict each other whatever the
 * fds: invalid-request (-EINVAL) with no fd as with one, never bad-fds; the fds
 * alone decide only when the params are fine (PROTOCOL.md, "Fd passing").
 */
static void test_load_decode_system_object_fds(void **state)
{
	const struct proto_method *m = proto_method_find("load");
	struct proto_load_request req = {};
	char *error = NULL;
	json_object *o;

	(void)state;
	reject_load("{\"system_object\":\"ip-firewall\",\"object_fd\":0}", 0, -EINVAL,
		    "by \"object_fd\" or by \"system_object\", not both");
	reject_load("{\"system_object\":\"ip-firewall\",\"object_fd\":0}", 1, -EINVAL,
		    "by \"object_fd\" or by \"system_object\", not both");
	reject_load("{\"object_fd\":3,\"system_object\":\"ip-firewall\"}", 0, -EINVAL, "not both");
	/* The params are fine, the fds are not: bad-fds. */
	reject_load("{\"system_object\":\"ip-firewall\"}", 1, -EBADF,
		    "a load of a system object carries no fd; the message carries 1");
	/* null counts as absent, as everywhere. */
	assert_int_equal(
		decode("{\"system_object\":\"ip-firewall\",\"object_fd\":null}", 0, &req, &error),
		0);
	assert_string_equal(req.system_object, "ip-firewall");
	proto_load_request_done(&req);
	/* The method table's decoder, which the event loop calls, answers the same. */
	o = J("{\"system_object\":\"ip-firewall\",\"object_fd\":0}");
	{
		uint8_t buf[512] = {};

		assert_true(m->params_size <= sizeof(buf));
		assert_int_equal(proto_method_decode(m, o, 0, buf, &error), -EINVAL);
		assert_error(&error, "not both");
	}
	json_object_put(o);
}

static void test_load_decode_scalars(void **state)
{
	_cleanup_free_ char *n64 = repeat('n', 64), *n65 = repeat('n', 65);
	char field[256];
	struct proto_load_request req = {};
	char *error = NULL;

	reject_field("\"check_only\":\"yes\"", -EINVAL, "\"check_only\" must be true or false");
	reject_field("\"check_only\":1", -EINVAL, "\"check_only\" must be true or false");
	reject_field("\"libbpf_log\":\"yes\"", -EINVAL, "\"libbpf_log\" must be true or false");
	reject_field("\"object_name\":5", -EINVAL, "\"object_name\" must be a string");
	reject_field("\"object_name\":\"\"", -EINVAL,
		     "\"object_name\" must have 1 to 64 characters");
	snprintf(field, sizeof(field), "\"object_name\":\"%s\"", n65);
	reject_field(field, -EINVAL, "\"object_name\" must have 1 to 64 characters");
	reject_field("\"object_name\":\"a\\u0000b\"", -EINVAL, "contains a NUL");

	snprintf(field, sizeof(field), "{\"object_fd\":0,\"object_name\":\"%s\"}", n64);
	assert_int_equal(decode(field, 1, &req, &error), 0);
	assert_string_equal(req.object_name, n64);
	proto_load_request_done(&req);
}

/* A JSON array of n copies of item. */
static char *array_of(const char *key, const char *item, size_t n)
{
	size_t cap = strlen(key) + 8 + n * (strlen(item) + 1), len = 0;
	char *s = xmalloc(cap);

	assert_non_null(s);
	len += (size_t)sprintf(s, "\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(s + len, "%s%s", i ? "," : "", item);
	sprintf(s + len, "]");
	return s;
}

static void check_too_many(const char *key, const char *item)
{
	_cleanup_free_ char *ok = array_of(key, item, PROTO_MAX_CONFIG_ITEMS);
	_cleanup_free_ char *over = array_of(key, item, PROTO_MAX_CONFIG_ITEMS + 1);
	_cleanup_free_ char *text = xmalloc(strlen(over) + 32);
	char want[96];

	assert_non_null(text);
	sprintf(text, "{\"object_fd\":0,%s}", ok);
	{
		struct proto_load_request req = {};
		char *error = NULL;

		if (decode(text, 1, &req, &error) != 0)
			fail_msg("%zu %s rejected: %s", (size_t)PROTO_MAX_CONFIG_ITEMS, key, error);
		proto_load_request_done(&req);
	}
	sprintf(text, "{\"object_fd\":0,%s}", over);
	snprintf(want, sizeof(want), "\"%s\" has %d items, at most %d allowed", key,
		 PROTO_MAX_CONFIG_ITEMS + 1, PROTO_MAX_CONFIG_ITEMS);
	reject_load(text, 1, -E2BIG, want);
}

static void test_load_decode_globals(void **state)
{
	static const char *const bad_hex[] = {"",     "0",   "abc", "0g", "g0",
					      "0x00", " 00", "00 ", "-1", "+1"};
	_cleanup_free_ char *n255 = repeat('g', PROTO_MAX_NAME), *n256 = repeat('g', 256);
	char field[1024];

	reject_field("\"globals\":{}", -EINVAL, "\"globals\" must be an array");
	reject_field("\"globals\":\"00\"", -EINVAL, "\"globals\" must be an array");
	reject_field("\"globals\":[{\"name\":\"a\",\"value\":\"00\"},1]", -EINVAL,
		     "globals[1] must be an object");
	reject_field("\"globals\":[{\"name\":\"a\",\"value\":\"00\",\"size\":1}]", -EINVAL,
		     "globals[0]: global: unknown key \"size\"");
	reject_field("\"globals\":[{\"value\":\"00\"}]", -EINVAL, "globals[0]: missing \"name\"");
	reject_field("\"globals\":[{\"name\":1,\"value\":\"00\"}]", -EINVAL,
		     "globals[0]: \"name\" must be a string");
	reject_field("\"globals\":[{\"name\":\"\",\"value\":\"00\"}]", -EINVAL,
		     "globals[0]: \"name\" must have 1 to 255 characters");
	snprintf(field, sizeof(field), "\"globals\":[{\"name\":\"%s\",\"value\":\"00\"}]", n256);
	reject_field(field, -EINVAL, "globals[0]: \"name\" must have 1 to 255 characters");
	snprintf(field, sizeof(field), "\"globals\":[{\"name\":\"%s\",\"value\":\"00\"}]", n255);
	accept_field(field);
	reject_field("\"globals\":[{\"name\":\"a\"}]", -EINVAL, "globals[0]: missing \"value\"");
	reject_field("\"globals\":[{\"name\":\"a\",\"value\":0}]", -EINVAL,
		     "globals[0]: \"value\" must be a string");

	for (size_t i = 0; i < ARRAY_SIZE(bad_hex); i++) {
		snprintf(field, sizeof(field),
			 "\"globals\":[{\"name\":\"ok\",\"value\":\"00\"},"
			 "{\"name\":\"a\",\"value\":\"%s\"}]",
			 bad_hex[i]);
		reject_field(field, -EINVAL,
			     "globals[1]: \"value\" must be an even number of hex digits");
	}

	check_too_many("globals", "{\"name\":\"g\",\"value\":\"00\"}");
}

static void test_load_decode_map_sizes(void **state)
{
	_cleanup_free_ char *n256 = repeat('m', 256);
	char field[1024];

	reject_field("\"map_sizes\":5", -EINVAL, "\"map_sizes\" must be an array");
	reject_field("\"map_sizes\":[[]]", -EINVAL, "map_sizes[0] must be an object");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":1,\"type\":\"hash\"}]",
		     -EINVAL, "map_sizes[0]: map size: unknown key \"type\"");
	reject_field("\"map_sizes\":[{\"max_entries\":1}]", -EINVAL,
		     "map_sizes[0]: missing \"name\"");
	snprintf(field, sizeof(field), "\"map_sizes\":[{\"name\":\"%s\",\"max_entries\":1}]", n256);
	reject_field(field, -EINVAL, "map_sizes[0]: \"name\" must have 1 to 255 characters");
	reject_field("\"map_sizes\":[{\"name\":\"m\"}]", -EINVAL,
		     "map_sizes[0]: missing \"max_entries\"");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":\"1\"}]", -EINVAL,
		     "map_sizes[0]: \"max_entries\" must be an integer");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":1},"
		     "{\"name\":\"m\",\"max_entries\":0}]",
		     -ERANGE, "map_sizes[1]: \"max_entries\" must be between 1 and 4294967295");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":-1}]", -ERANGE,
		     "\"max_entries\" must be between");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":4294967296}]", -ERANGE,
		     "\"max_entries\" must be between");
	reject_field("\"map_sizes\":[{\"name\":\"m\",\"max_entries\":18446744073709551617}]",
		     -ERANGE, "\"max_entries\" must be between");

	{
		struct proto_load_request req = {};

		assert_int_equal(decode("{\"object_fd\":0,\"map_sizes\":[{\"name\":\"m\","
					"\"max_entries\":4294967295}]}",
					1, &req, NULL),
				 0);
		assert_int_equal(req.map_sizes[0].max_entries, UINT32_MAX);
		proto_load_request_done(&req);
	}
	check_too_many("map_sizes", "{\"name\":\"m\",\"max_entries\":1}");
}

/* "map_defs": either size or both, 0 a size too (a ring buffer's), both bounded. */
static void test_load_decode_map_defs(void **state)
{
	struct proto_load_request req = {};

	reject_field("\"map_defs\":{}", -EINVAL, "\"map_defs\" must be an array");
	reject_field("\"map_defs\":[{\"name\":\"m\"}]", -EINVAL,
		     "map_defs[0]: a map def sets \"key_size\", \"value_size\" or both");
	reject_field("\"map_defs\":[{\"name\":\"m\",\"value_size\":8,\"max_entries\":1}]", -EINVAL,
		     "map_defs[0]: map def: unknown key \"max_entries\"");
	reject_field("\"map_defs\":[{\"value_size\":8}]", -EINVAL, "map_defs[0]: missing \"name\"");
	reject_field("\"map_defs\":[{\"name\":\"\",\"value_size\":8}]", -EINVAL,
		     "\"name\" must have 1 to 255 characters");
	reject_field("\"map_defs\":[{\"name\":\"m\",\"value_size\":-1}]", -ERANGE,
		     "map_defs[0]: \"value_size\" must be between 0 and 16777216");
	reject_field("\"map_defs\":[{\"name\":\"m\",\"value_size\":16777217}]", -ERANGE,
		     "\"value_size\" must be between 0 and 16777216");
	reject_field("\"map_defs\":[{\"name\":\"m\",\"key_size\":65537}]", -ERANGE,
		     "map_defs[0]: \"key_size\" must be between 0 and 65536");
	/* null counts as absent, as everywhere. */
	reject_field("\"map_defs\":[{\"name\":\"m\",\"key_size\":null}]", -EINVAL,
		     "a map def sets \"key_size\", \"value_size\" or both");
	reject_field("\"map_defs\":[{\"name\":\"m\",\"value_size\":\"8\"}]", -EINVAL,
		     "\"value_size\" must be an integer");
	check_too_many("map_defs", "{\"name\":\"m\",\"value_size\":8}");

	assert_int_equal(decode("{\"object_fd\":0,\"map_defs\":[{\"name\":\"rb\",\"value_size\":0},"
				"{\"name\":\"st\",\"key_size\":4,\"value_size\":null}]}",
				1, &req, NULL),
			 0);
	assert_int_equal(req.n_map_defs, 2);
	assert_true(req.map_defs[0].set_value_size);
	assert_false(req.map_defs[0].set_key_size);
	assert_int_equal(req.map_defs[0].value_size, 0);
	assert_true(req.map_defs[1].set_key_size);
	assert_false(req.map_defs[1].set_value_size);
	assert_int_equal(req.map_defs[1].key_size, 4);
	proto_load_request_done(&req);
}

/*
 * "inner_maps": every field but map_flags required, all bounded (map_flags by
 * the flags the policy knows); the type a bounded string.
 */
static void test_load_decode_inner_maps(void **state)
{
	_cleanup_free_ char *t65 = repeat('t', 65);
	char field[1024];

	reject_field("\"inner_maps\":[{\"type\":\"array\",\"key_size\":4,\"value_size\":8,"
		     "\"max_entries\":1}]",
		     -EINVAL, "inner_maps[0]: missing \"outer\"");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"key_size\":4,\"value_size\":8,"
		     "\"max_entries\":1}]",
		     -EINVAL, "inner_maps[0]: missing \"type\"");
	snprintf(field, sizeof(field),
		 "\"inner_maps\":[{\"outer\":\"o\",\"type\":\"%s\",\"key_size\":4,"
		 "\"value_size\":8,\"max_entries\":1}]",
		 t65);
	reject_field(field, -EINVAL, "inner_maps[0]: \"type\" must have 1 to 64 characters");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"value_size\":8,"
		     "\"max_entries\":1}]",
		     -EINVAL, "inner_maps[0]: missing \"key_size\"");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8}]",
		     -EINVAL, "inner_maps[0]: missing \"max_entries\"");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":0}]",
		     -ERANGE, "\"max_entries\" must be between 1 and 4294967295");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":33554432,\"max_entries\":1}]",
		     -ERANGE, "\"value_size\" must be between 0 and 16777216");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":1,\"flags\":1}]",
		     -EINVAL, "inner_maps[0]: inner map: unknown key \"flags\"");
	/* BPF_F_TOKEN_FD (bit 16) and beyond: no flag a policy knows. */
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":1,\"map_flags\":65536}]",
		     -ERANGE, "inner_maps[0]: \"map_flags\" must be between 0 and 8191");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":1,\"map_flags\":-1}]",
		     -ERANGE, "\"map_flags\" must be between 0 and 8191");
	reject_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":1,\"map_flags\":\"1\"}]",
		     -EINVAL, "\"map_flags\" must be an integer");
	accept_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"lpm_trie\",\"key_size\":8,"
		     "\"value_size\":4,\"max_entries\":16,\"map_flags\":8191}]");
	check_too_many("inner_maps", "{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
				     "\"value_size\":8,\"max_entries\":1}");
	accept_field("\"inner_maps\":[{\"outer\":\"o\",\"type\":\"array\",\"key_size\":4,"
		     "\"value_size\":8,\"max_entries\":4294967295}]");
}

/* "attach_targets": a program and a bounded [A-Za-z0-9_.]+ name. */
static void test_load_decode_attach_targets(void **state)
{
	_cleanup_free_ char *t129 = repeat('t', 129), *t128 = repeat('t', 128);
	char field[1024];

	reject_field("\"attach_targets\":[{\"target\":\"f\"}]", -EINVAL,
		     "attach_targets[0]: missing \"program\"");
	reject_field("\"attach_targets\":[{\"program\":\"p\"}]", -EINVAL,
		     "attach_targets[0]: missing \"target\"");
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"f\",\"fd\":3}]", -EINVAL,
		     "attach_targets[0]: attach target: unknown key \"fd\"");
	/* Nothing a path, a pattern or a BTF kind prefix could hide in. */
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"../f\"}]", -EINVAL,
		     "attach_targets[0]: \"target\" must be 1 to 128 of [A-Za-z0-9_.]");
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"a:b\"}]", -EINVAL,
		     "must be 1 to 128 of");
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"f*\"}]", -EINVAL,
		     "must be 1 to 128 of");
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"a b\"}]", -EINVAL,
		     "must be 1 to 128 of");
	reject_field("\"attach_targets\":[{\"program\":\"p\",\"target\":\"\"}]", -EINVAL,
		     "\"target\" must have 1 to 255 characters");
	snprintf(field, sizeof(field), "\"attach_targets\":[{\"program\":\"p\",\"target\":\"%s\"}]",
		 t129);
	reject_field(field, -EINVAL, "must be 1 to 128 of");
	snprintf(field, sizeof(field), "\"attach_targets\":[{\"program\":\"p\",\"target\":\"%s\"}]",
		 t128);
	accept_field(field);
	accept_field(
		"\"attach_targets\":[{\"program\":\"p\",\"target\":\"tcp_v4_connect.isra.0\"}]");
	check_too_many("attach_targets", "{\"program\":\"p\",\"target\":\"f\"}");
}

/* The setup fields survive the wire: encoded by the library, decoded by the broker. */
static void test_load_setup_roundtrip(void **state)
{
	struct proto_map_def defs[] = {
		{.name = "rb", .set_value_size = true, .value_size = 0},
		{.name = "st",
		 .set_key_size = true,
		 .key_size = 4,
		 .set_value_size = true,
		 .value_size = 1016},
	};
	struct proto_inner_map inner[] = {
		{.outer = "o",
		 .type = "array",
		 .key_size = 4,
		 .value_size = 8,
		 .max_entries = UINT32_MAX},
		{.outer = "p",
		 .type = "lpm_trie",
		 .key_size = 8,
		 .value_size = 4,
		 .max_entries = 16,
		 .map_flags = 1 /* BPF_F_NO_PREALLOC */},
	};
	struct proto_attach_target targets[] = {{.program = "p", .target = "sched_process_fork"}};
	const struct proto_load_request in = {
		.map_defs = defs,
		.n_map_defs = ARRAY_SIZE(defs),
		.inner_maps = inner,
		.n_inner_maps = ARRAY_SIZE(inner),
		.attach_targets = targets,
		.n_attach_targets = ARRAY_SIZE(targets),
	};
	struct proto_load_request out = {};
	json_object *enc = proto_load_request_encode(&in), *parsed;
	char *error = NULL;

	assert_non_null(enc);
	parsed = J(json_object_to_json_string_ext(enc, JSON_C_TO_STRING_PLAIN));
	json_object_put(enc);
	if (proto_load_request_decode(parsed, 1, &out, &error) != 0)
		fail_msg("encoded request rejected: %s", error);
	json_object_put(parsed);
	assert_int_equal(out.n_map_defs, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(out.map_defs[i].name, defs[i].name);
		assert_int_equal(out.map_defs[i].set_key_size, defs[i].set_key_size);
		assert_int_equal(out.map_defs[i].set_value_size, defs[i].set_value_size);
		assert_int_equal(out.map_defs[i].key_size, defs[i].key_size);
		assert_int_equal(out.map_defs[i].value_size, defs[i].value_size);
	}
	assert_int_equal(out.n_inner_maps, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(out.inner_maps[i].outer, inner[i].outer);
		assert_string_equal(out.inner_maps[i].type, inner[i].type);
		assert_int_equal(out.inner_maps[i].key_size, inner[i].key_size);
		assert_int_equal(out.inner_maps[i].value_size, inner[i].value_size);
		assert_int_equal(out.inner_maps[i].max_entries, inner[i].max_entries);
		assert_int_equal(out.inner_maps[i].map_flags, inner[i].map_flags);
	}
	assert_int_equal(out.n_attach_targets, 1);
	assert_string_equal(out.attach_targets[0].program, "p");
	assert_string_equal(out.attach_targets[0].target, "sched_process_fork");
	proto_load_request_done(&out);
}

static void test_load_decode_freeze(void **state)
{
	_cleanup_free_ char *n256 = repeat('m', 256);
	char field[1024];

	reject_field("\"freeze\":\"counts\"", -EINVAL, "\"freeze\" must be an array");
	reject_field("\"freeze\":[\"counts\"]", -EINVAL, "freeze[0] must be an object");
	reject_field("\"freeze\":[{\"name\":\"m\",\"mode\":1}]", -EINVAL,
		     "freeze[0]: freeze: unknown key \"mode\"");
	reject_field("\"freeze\":[{}]", -EINVAL, "freeze[0]: missing \"name\"");
	snprintf(field, sizeof(field), "\"freeze\":[{\"name\":\"%s\"}]", n256);
	reject_field(field, -EINVAL, "freeze[0]: \"name\" must have 1 to 255 characters");
	accept_field("\"freeze\":[{\"name\":\"counts\"},{\"name\":\"x.bss\"}]");
	accept_field("\"freeze\":null");
	check_too_many("freeze", "{\"name\":\"m\"}");
}

/* Shares name ro, wo or rw; nothing else, and a ring buffer's consume least of all. */
static void test_load_decode_share_access(void **state)
{
	reject_field("\"name\":\"n\",\"shares\":[{\"map\":\"m\",\"user\":\"u\",\"access\":"
		     "\"none\"}]",
		     -EINVAL, "shares[0]: \"access\" must be \"ro\", \"wo\" or \"rw\"");
	reject_field("\"name\":\"n\",\"shares\":[{\"map\":\"m\",\"user\":\"u\",\"access\":"
		     "\"ro+consume\"}]",
		     -EINVAL, "must be");
	reject_field("\"name\":\"n\",\"shares\":[{\"map\":\"m\",\"group\":\"g\",\"access\":"
		     "\"consume\"}]",
		     -EINVAL,
		     "shares[0]: \"access\" \"consume\" cannot be shared: consuming a ring buffer "
		     "takes its records from every other consumer");
	accept_field("\"name\":\"n\",\"shares\":[{\"map\":\"m\",\"group\":\"g\",\"access\":"
		     "\"wo\"}]");
}

static void test_load_decode_programs(void **state)
{
	_cleanup_free_ char *n64 = repeat('t', 64), *n65 = repeat('t', 65);
	_cleanup_free_ char *n256 = repeat('p', 256);
	char field[1024];

	reject_field("\"programs\":\"count\"", -EINVAL, "\"programs\" must be an array");
	reject_field("\"programs\":[\"count\"]", -EINVAL, "programs[0] must be an object");
	reject_field("\"programs\":[{\"name\":\"p\",\"section\":\"x\"}]", -EINVAL,
		     "programs[0]: program: unknown key \"section\"");
	reject_field("\"programs\":[{\"type\":\"xdp\"}]", -EINVAL, "programs[0]: missing \"name\"");
	snprintf(field, sizeof(field), "\"programs\":[{\"name\":\"%s\"}]", n256);
	reject_field(field, -EINVAL, "programs[0]: \"name\" must have 1 to 255 characters");
	reject_field("\"programs\":[{\"name\":\"p\",\"type\":\"\"}]", -EINVAL,
		     "programs[0]: \"type\" must have 1 to 64 characters");
	reject_field("\"programs\":[{\"name\":\"p\",\"type\":7}]", -EINVAL,
		     "programs[0]: \"type\" must be a string");
	snprintf(field, sizeof(field), "\"programs\":[{\"name\":\"p\",\"type\":\"%s\"}]", n65);
	reject_field(field, -EINVAL, "programs[0]: \"type\" must have 1 to 64 characters");
	reject_field("\"programs\":[{\"name\":\"p\"},{\"name\":\"q\",\"attach_type\":\"\"}]",
		     -EINVAL, "programs[1]: \"attach_type\" must have 1 to 64 characters");
	snprintf(field, sizeof(field), "\"programs\":[{\"name\":\"p\",\"attach_type\":\"%s\"}]",
		 n65);
	reject_field(field, -EINVAL, "programs[0]: \"attach_type\" must have 1 to 64 characters");

	snprintf(field, sizeof(field),
		 "\"programs\":[{\"name\":\"p\",\"type\":\"%s\",\"attach_type\":\"%s\"}]", n64,
		 n64);
	accept_field(field);
	accept_field("\"programs\":[{\"name\":\"p\",\"type\":null,\"attach_type\":null}]");
	check_too_many("programs", "{\"name\":\"p\"}");
}

static void test_load_roundtrip(void **state)
{
	uint8_t v0[] = {0x0a, 0x00, 0x00, 0x80}, v1[] = {0xff};
	struct proto_global globals[] = {
		{.name = "limit", .value = v0, .size = sizeof(v0)},
		{.name = "flag", .value = v1, .size = sizeof(v1)},
	};
	struct proto_map_size sizes[] = {
		{.name = "counts", .max_entries = UINT32_MAX},
		{.name = "ring", .max_entries = 1},
	};
	struct proto_program_select progs[] = {
		{.name = "count"},
		{.name = "probe", .type = "kprobe"},
		{.name = "hook", .type = "tracing", .attach_type = "trace_fentry"},
	};
	char *freeze[] = {"counts", "obj.bss"};
	const struct proto_load_request in = {
		.freeze = freeze,
		.n_freeze = ARRAY_SIZE(freeze),
		.object_fd = 2,
		.object_name = "counter",
		.check_only = true,
		.libbpf_log = true,
		.globals = globals,
		.n_globals = ARRAY_SIZE(globals),
		.map_sizes = sizes,
		.n_map_sizes = ARRAY_SIZE(sizes),
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
	};
	struct proto_load_request out = {};
	json_object *enc = proto_load_request_encode(&in), *parsed, *again;
	_cleanup_free_ char *text = NULL;
	char *error = NULL;

	assert_non_null(enc);
	text = strdup(json_object_to_json_string_ext(enc, JSON_C_TO_STRING_PLAIN));
	assert_non_null(text);
	/* Through the wire's text form, as the broker sees it. */
	parsed = J(text);
	if (proto_load_request_decode(parsed, 3, &out, &error) != 0)
		fail_msg("encoded request %s rejected: %s", text, error);
	json_object_put(parsed);

	assert_int_equal(out.object_fd, in.object_fd);
	assert_string_equal(out.object_name, in.object_name);
	assert_true(out.check_only);
	assert_true(out.libbpf_log);
	assert_int_equal(out.n_globals, in.n_globals);
	for (size_t i = 0; i < in.n_globals; i++) {
		assert_string_equal(out.globals[i].name, in.globals[i].name);
		assert_int_equal(out.globals[i].size, in.globals[i].size);
		assert_memory_equal(out.globals[i].value, in.globals[i].value, in.globals[i].size);
	}
	assert_int_equal(out.n_map_sizes, in.n_map_sizes);
	for (size_t i = 0; i < in.n_map_sizes; i++) {
		assert_string_equal(out.map_sizes[i].name, in.map_sizes[i].name);
		assert_int_equal(out.map_sizes[i].max_entries, in.map_sizes[i].max_entries);
	}
	assert_int_equal(out.n_programs, in.n_programs);
	for (size_t i = 0; i < in.n_programs; i++) {
		assert_string_equal(out.programs[i].name, in.programs[i].name);
		if (in.programs[i].type)
			assert_string_equal(out.programs[i].type, in.programs[i].type);
		else
			assert_null(out.programs[i].type);
		if (in.programs[i].attach_type)
			assert_string_equal(out.programs[i].attach_type,
					    in.programs[i].attach_type);
		else
			assert_null(out.programs[i].attach_type);
	}

	assert_int_equal(out.n_freeze, in.n_freeze);
	for (size_t i = 0; i < in.n_freeze; i++)
		assert_string_equal(out.freeze[i], in.freeze[i]);

	/* Encoding the decoded request gives the same text. */
	again = proto_load_request_encode(&out);
	assert_string_equal(json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN), text);
	json_object_put(again);
	json_object_put(enc);
	proto_load_request_done(&out);
}

static void test_load_encode_minimal(void **state)
{
	const struct proto_load_request in = {.object_fd = 0, .check_only = false};
	json_object *enc = proto_load_request_encode(&in);

	/* Defaults are left out. */
	assert_non_null(enc);
	assert_string_equal(json_object_to_json_string_ext(
				    enc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			    "{\"object_fd\":0}");
	json_object_put(enc);
}

/* ---- hex ---- */

/* ---- load_insns ---- */

static int decode_insns(const char *text, size_t n_fds, struct proto_insns_request *req,
			char **error)
{
	json_object *o = J(text);
	int r = proto_insns_request_decode(o, n_fds, req, error);

	json_object_put(o);
	return r;
}

static void reject_insns(const char *text, size_t n_fds, int err, const char *what)
{
	struct proto_insns_request req = {.insns_fd = 99};
	char *error = NULL;
	int r = decode_insns(text, n_fds, &req, &error);

	if (r != err)
		fail_msg("%s: decode returned %d (%s), expected %d", text, r,
			 error ? error : "no message", err);
	/* A rejected request returns nothing to free. */
	assert_int_equal(req.insns_fd, 99);
	assert_null(req.type);
	assert_error(&error, what);
}

/* {"insns_fd":0,"type":"cgroup_device","license":"GPL", <field>} with one fd. */
static void reject_insns_field(const char *field, int err, const char *what)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"insns_fd\":0,\"type\":\"cgroup_device\",\"license\":\"GPL\",%s}", field);
	reject_insns(text, 1, err, what);
}

static void test_insns_decode(void **state)
{
	struct proto_insns_request req = {};
	char *error = NULL;
	_cleanup_free_ char *lic127 = repeat('L', 127), *lic128 = repeat('L', 128);
	char field[256];

	assert_int_equal(decode_insns("{\"insns_fd\":0,\"type\":\"cgroup_device\","
				      "\"license\":\"GPL\"}",
				      1, &req, &error),
			 0);
	assert_int_equal(req.insns_fd, 0);
	assert_string_equal(req.type, "cgroup_device");
	assert_string_equal(req.license, "GPL");
	assert_null(req.attach_type);
	assert_null(req.prog_name);
	assert_null(req.name);
	assert_false(req.check_only);
	proto_insns_request_done(&req);

	assert_int_equal(
		decode_insns("{\"insns_fd\":1,\"type\":\"cgroup_device\","
			     "\"attach_type\":\"cgroup_device\",\"license\":\"Dual MIT/GPL\","
			     "\"prog_name\":\"dev.allow_1\",\"name\":\"ctr-1\","
			     "\"check_only\":true}",
			     2, &req, &error),
		0);
	assert_int_equal(req.insns_fd, 1);
	assert_string_equal(req.attach_type, "cgroup_device");
	assert_string_equal(req.license, "Dual MIT/GPL");
	assert_string_equal(req.prog_name, "dev.allow_1");
	assert_string_equal(req.name, "ctr-1");
	assert_true(req.check_only);
	proto_insns_request_done(&req);
	assert_null(req.type);
	proto_insns_request_done(&req);

	assert_int_equal(proto_insns_request_decode(NULL, 1, &req, &error), -EINVAL);
	assert_error(&error, "load_insns needs \"params\"");
	/* The fd. */
	reject_insns("{\"type\":\"x\",\"license\":\"GPL\"}", 1, -EINVAL, "missing \"insns_fd\"");
	reject_insns("{\"insns_fd\":4,\"type\":\"x\",\"license\":\"GPL\"}", 5, -ERANGE,
		     "\"insns_fd\" must be between 0 and 3");
	reject_insns("{\"insns_fd\":1,\"type\":\"x\",\"license\":\"GPL\"}", 1, -EBADF,
		     "\"insns_fd\" refers to fd 1 but the message carries 1");
	/* Required, and what ELF loads take but raw ones don't. */
	reject_insns("{\"insns_fd\":0,\"license\":\"GPL\"}", 1, -EINVAL, "missing \"type\"");
	reject_insns("{\"insns_fd\":0,\"type\":\"x\"}", 1, -EINVAL, "missing \"license\"");
	reject_insns_field("\"object_fd\":0", -EINVAL, "load_insns: unknown key \"object_fd\"");
	reject_insns_field("\"globals\":[]", -EINVAL, "load_insns: unknown key \"globals\"");
	reject_insns_field("\"shares\":[]", -EINVAL, "load_insns: unknown key \"shares\"");
	/* Values. */
	reject_insns("{\"insns_fd\":0,\"type\":\"\",\"license\":\"GPL\"}", 1, -EINVAL,
		     "\"type\" must be 1 to 64 characters");
	reject_insns("{\"insns_fd\":0,\"type\":7,\"license\":\"GPL\"}", 1, -EINVAL,
		     "\"type\" must be a string");
	reject_insns_field("\"attach_type\":\"\"", -EINVAL,
			   "\"attach_type\" must be 1 to 64 characters");
	snprintf(field, sizeof(field), "{\"insns_fd\":0,\"type\":\"x\",\"license\":\"%s\"}",
		 lic128);
	reject_insns(field, 1, -EINVAL, "\"license\" must be 1 to 127 printable ASCII characters");
	reject_insns("{\"insns_fd\":0,\"type\":\"x\",\"license\":\"G\\nPL\"}", 1, -EINVAL,
		     "\"license\" must be 1 to 127 printable ASCII characters");
	reject_insns("{\"insns_fd\":0,\"type\":\"x\",\"license\":\"\"}", 1, -EINVAL,
		     "\"license\" must be 1 to 127 printable ASCII characters");
	reject_insns_field("\"prog_name\":\"a-b\"", -EINVAL,
			   "\"prog_name\" must be 1 to 15 letters, digits, '_' or '.'");
	reject_insns_field("\"prog_name\":\"abcdefghijklmnop\"", -EINVAL,
			   "\"prog_name\" must be 1 to 15 letters, digits, '_' or '.'");
	reject_insns_field("\"name\":\"-x\"", -EINVAL,
			   "\"name\" must be 1 to 64 letters, digits, '_' or '-', not starting "
			   "with '-'");
	reject_insns_field("\"check_only\":1", -EINVAL, "\"check_only\" must be true or false");
	snprintf(field, sizeof(field), "{\"insns_fd\":0,\"type\":\"x\",\"license\":\"%s\"}",
		 lic127);
	assert_int_equal(decode_insns(field, 1, &req, &error), 0);
	proto_insns_request_done(&req);
	assert_true(proto_prog_name_is_valid("abcdefghijklmno"));
	assert_false(proto_prog_name_is_valid(""));
}

static void test_insns_roundtrip(void **state)
{
	static const char *const texts[] = {
		"{\"insns_fd\":0,\"type\":\"cgroup_device\",\"license\":\"GPL\"}",
		"{\"insns_fd\":2,\"type\":\"socket_filter\",\"attach_type\":\"cgroup_device\","
		"\"license\":\"MIT\",\"prog_name\":\"p\",\"name\":\"n\",\"check_only\":true}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct proto_insns_request a = {}, b = {};
		char *error = NULL;
		json_object *enc, *enc2;

		assert_int_equal(decode_insns(texts[i], 3, &a, &error), 0);
		enc = proto_insns_request_encode(&a);
		assert_non_null(enc);
		assert_int_equal(proto_insns_request_decode(enc, 3, &b, &error), 0);
		enc2 = proto_insns_request_encode(&b);
		assert_string_equal(json_object_to_json_string(enc),
				    json_object_to_json_string(enc2));
		assert_int_equal(a.insns_fd, b.insns_fd);
		assert_int_equal(a.check_only, b.check_only);
		json_object_put(enc);
		json_object_put(enc2);
		proto_insns_request_done(&a);
		proto_insns_request_done(&b);
	}
}

/* ---- map ---- */

static int decode_map(const char *text, struct proto_map_request *req, char **error)
{
	json_object *o = J(text);
	int r = proto_map_request_decode(o, req, error);

	json_object_put(o);
	return r;
}

static void reject_map(const char *text, int err, const char *what)
{
	struct proto_map_request req = {.count = 99};
	char *error = NULL;
	int r = decode_map(text, &req, &error);

	if (r != err)
		fail_msg("%s: decode returned %d (%s), expected %d", text, r,
			 error ? error : "no message", err);
	/* A rejected request returns nothing to free. */
	assert_int_equal(req.count, 99);
	assert_null(req.object);
	assert_error(&error, what);
}

/* {"object":"o","map":"m","op":OP, <fields>} */
static void reject_map_op(const char *op, const char *fields, int err, const char *what)
{
	char text[8192];

	snprintf(text, sizeof(text), "{\"object\":\"o\",\"map\":\"m\",\"op\":\"%s\"%s%s}", op,
		 fields[0] ? "," : "", fields);
	reject_map(text, err, what);
}

static void test_map_decode(void **state)
{
	struct proto_map_request req = {};
	char *error = NULL, text[4096];
	_cleanup_free_ char *key512 = repeat('a', 2 * PROTO_MAP_MAX_KEY),
			    *key513 = repeat('a', 2 * PROTO_MAP_MAX_KEY + 2),
			    *value_max = repeat('0', 2 * PROTO_MAP_MAX_VALUE),
			    *value_over = repeat('0', 2 * PROTO_MAP_MAX_VALUE + 2),
			    *name255 = repeat('n', 255), *name256 = repeat('n', 256);

	assert_int_equal(decode_map("{\"object\":\"alice/obj\",\"map\":\"counts\",\"op\":\"info\"}",
				    &req, &error),
			 0);
	assert_string_equal(req.object, "alice/obj");
	assert_string_equal(req.map, "counts");
	assert_int_equal(req.op, PROTO_MAP_INFO);
	assert_null(req.key);
	assert_null(req.value);
	/* count is dump's: for info it is not written, not even its default. */
	assert_int_equal(req.count, 0);
	proto_map_request_done(&req);

	assert_int_equal(decode_map("{\"object\":\"o\",\"map\":\"m\",\"op\":\"update\","
				    "\"key\":\"0100aBcD\",\"value\":\"ff\",\"flags\":2}",
				    &req, &error),
			 0);
	assert_int_equal(req.op, PROTO_MAP_UPDATE);
	assert_int_equal(req.key_size, 4);
	assert_memory_equal(req.key, "\x01\x00\xab\xcd", 4);
	assert_int_equal(req.value_size, 1);
	assert_int_equal(req.value[0], 0xff);
	assert_int_equal(req.flags, 2);
	assert_true(proto_map_op_writes(req.op));
	proto_map_request_done(&req);
	assert_null(req.key);

	/* dump: cursor is a key, count a page */
	assert_int_equal(decode_map("{\"object\":\"o\",\"map\":\"m\",\"op\":\"dump\","
				    "\"cursor\":\"00000000\",\"count\":256}",
				    &req, &error),
			 0);
	assert_int_equal(req.op, PROTO_MAP_DUMP);
	assert_int_equal(req.key_size, 4);
	assert_int_equal(req.count, 256);
	assert_false(proto_map_op_writes(req.op));
	proto_map_request_done(&req);
	/* next_key without a key: the first */
	assert_int_equal(
		decode_map("{\"object\":\"o\",\"map\":\"m\",\"op\":\"next_key\"}", &req, &error),
		0);
	assert_null(req.key);
	proto_map_request_done(&req);
	/* null counts as absent */
	assert_int_equal(decode_map("{\"object\":\"o\",\"map\":\"m\",\"op\":\"next_key\","
				    "\"key\":null}",
				    &req, &error),
			 0);
	proto_map_request_done(&req);
	/* The bounds themselves are fine. */
	snprintf(text, sizeof(text),
		 "{\"object\":\"%s\",\"map\":\"%s\",\"op\":\"lookup\",\"key\":\"%s\"}", name255,
		 name255, key512);
	assert_int_equal(decode_map(text, &req, &error), 0);
	assert_int_equal(req.key_size, PROTO_MAP_MAX_KEY);
	proto_map_request_done(&req);
	{
		size_t n = strlen(value_max) + 128;
		_cleanup_free_ char *big = xmalloc(n);

		snprintf(big, n,
			 "{\"object\":\"o\",\"map\":\"m\",\"op\":\"update\",\"key\":\"00\","
			 "\"value\":\"%s\"}",
			 value_max);
		assert_int_equal(decode_map(big, &req, &error), 0);
		assert_int_equal(req.value_size, PROTO_MAP_MAX_VALUE);
		proto_map_request_done(&req);
		snprintf(big, n,
			 "{\"object\":\"o\",\"map\":\"m\",\"op\":\"update\",\"key\":\"00\","
			 "\"value\":\"%s\"}",
			 value_over);
		reject_map(big, -E2BIG, "\"value\" is over 16384 bytes");
	}

	assert_int_equal(proto_map_request_decode(NULL, &req, &error), -EINVAL);
	assert_error(&error, "map needs \"params\"");
	/* Envelope of the op. */
	reject_map("{\"object\":\"o\",\"map\":\"m\"}", -EINVAL, "missing \"op\"");
	reject_map("{\"map\":\"m\",\"op\":\"info\"}", -EINVAL, "missing \"object\"");
	reject_map("{\"object\":\"o\",\"op\":\"info\"}", -EINVAL, "missing \"map\"");
	reject_map(
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"frob\"}", -EINVAL,
		"\"op\" must be info, lookup, update, delete, next_key, dump or btf, not \"frob\"");
	reject_map("{\"object\":\"o\",\"map\":\"m\",\"op\":7}", -EINVAL, "\"op\" must be a string");
	reject_map("{\"object\":\"o\",\"map\":\"m\",\"op\":\"info\",\"fd\":0}", -EINVAL,
		   "map: unknown key \"fd\"");
	reject_map("{\"object\":\"\",\"map\":\"m\",\"op\":\"info\"}", -EINVAL,
		   "\"object\" must be 1 to 255 characters");
	snprintf(text, sizeof(text), "{\"object\":\"o\",\"map\":\"%s\",\"op\":\"info\"}", name256);
	reject_map(text, -EINVAL, "\"map\" must be 1 to 255 characters");
	/* Each op takes its own params only. */
	reject_map_op("info", "\"key\":\"00\"", -EINVAL, "op info takes no \"key\"");
	reject_map_op("btf", "\"count\":1", -EINVAL, "op btf takes no \"count\"");
	reject_map_op("lookup", "\"value\":\"00\",\"key\":\"00\"", -EINVAL,
		      "op lookup takes no \"value\"");
	reject_map_op("delete", "\"flags\":0,\"key\":\"00\"", -EINVAL,
		      "op delete takes no \"flags\"");
	reject_map_op("dump", "\"key\":\"00\"", -EINVAL, "op dump takes no \"key\"");
	reject_map_op("next_key", "\"cursor\":\"00\"", -EINVAL, "op next_key takes no \"cursor\"");
	reject_map_op("lookup", "", -EINVAL, "op lookup needs \"key\"");
	reject_map_op("delete", "", -EINVAL, "op delete needs \"key\"");
	reject_map_op("update", "\"value\":\"00\"", -EINVAL, "op update needs \"key\"");
	reject_map_op("update", "\"key\":\"00\"", -EINVAL, "op update needs \"value\"");
	/* Values. */
	reject_map_op("lookup", "\"key\":\"\"", -EINVAL,
		      "\"key\" must be 1 to 512 bytes as an even number of hex digits");
	reject_map_op("lookup", "\"key\":\"abc\"", -EINVAL,
		      "\"key\" must be 1 to 512 bytes as an even number of hex digits");
	reject_map_op("lookup", "\"key\":\"0x00\"", -EINVAL,
		      "\"key\" must be 1 to 512 bytes as an even number of hex digits");
	reject_map_op("lookup", "\"key\":1", -EINVAL, "\"key\" must be a string");
	snprintf(text, sizeof(text), "\"key\":\"%s\"", key513);
	reject_map_op("lookup", text, -E2BIG, "\"key\" is over 512 bytes");
	snprintf(text, sizeof(text), "\"cursor\":\"%s\"", key513);
	reject_map_op("dump", text, -E2BIG, "\"cursor\" is over 512 bytes");
	reject_map_op("update", "\"key\":\"00\",\"value\":\"00\",\"flags\":3", -ERANGE,
		      "\"flags\" must be between 0 and 2");
	reject_map_op("update", "\"key\":\"00\",\"value\":\"00\",\"flags\":-1", -ERANGE,
		      "\"flags\" must be between 0 and 2");
	reject_map_op("update", "\"key\":\"00\",\"value\":\"00\",\"flags\":\"any\"", -EINVAL,
		      "\"flags\" must be an integer");
	reject_map_op("dump", "\"count\":0", -ERANGE, "\"count\" must be between 1 and 256");
	reject_map_op("dump", "\"count\":257", -ERANGE, "\"count\" must be between 1 and 256");
	reject_map("{\"object\":\"o\\u0000x\",\"map\":\"m\",\"op\":\"info\"}", -EINVAL,
		   "\"object\" contains a NUL character");
}

static void test_map_roundtrip(void **state)
{
	static const char *const texts[] = {
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"info\"}",
		"{\"object\":\"alice/o\",\"map\":\"m\",\"op\":\"btf\"}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"lookup\",\"key\":\"00010203\"}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"update\",\"key\":\"00\",\"value\":\"ff\","
		"\"flags\":1}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"delete\",\"key\":\"00\"}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"next_key\"}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"dump\",\"cursor\":\"0a\",\"count\":3}",
		"{\"object\":\"o\",\"map\":\"m\",\"op\":\"dump\"}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct proto_map_request a = {}, b = {};
		char *error = NULL;
		json_object *enc, *enc2;

		assert_int_equal(decode_map(texts[i], &a, &error), 0);
		enc = proto_map_request_encode(&a);
		assert_non_null(enc);
		/* What the client library sends is what was decoded, key order included. */
		assert_string_equal(
			json_object_to_json_string_ext(enc, JSON_C_TO_STRING_PLAIN |
								    JSON_C_TO_STRING_NOSLASHESCAPE),
			texts[i]);
		assert_int_equal(proto_map_request_decode(enc, &b, &error), 0);
		enc2 = proto_map_request_encode(&b);
		assert_string_equal(json_object_to_json_string(enc),
				    json_object_to_json_string(enc2));
		assert_int_equal(a.op, b.op);
		assert_string_equal(proto_map_op_to_string(a.op), proto_map_op_to_string(b.op));
		json_object_put(enc);
		json_object_put(enc2);
		proto_map_request_done(&a);
		proto_map_request_done(&b);
	}
	assert_string_equal(proto_map_op_to_string((enum proto_map_op)99), "?");
}

/* ---- framing ---- */

static void test_send_recv(void **state)
{
	int sv[2];
	json_object *o = J("{\"a\":[1,2,3],\"s\":\"\\u00e9\"}");
	struct proto_msg m = {};
	char *error = NULL;

	seqpacket_pair(sv, false);
	assert_int_equal(proto_send(sv[0], o, NULL, 0, PROTO_MAX_REQUEST_BYTES), 0);
	assert_int_equal(
		proto_recv(sv[1], PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &m, &error), 1);
	assert_null(error);
	assert_int_equal(m.n_fds, 0);
	assert_true(json_object_equal(m.json, o));
	proto_msg_done(&m);
	assert_null(m.json);

	/* Two packets stay two messages. */
	send_seq(sv[0], 1);
	send_seq(sv[0], 2);
	recv_seq(sv[1], 1);
	recv_seq(sv[1], 2);
	assert_nothing_queued(sv[1]);

	json_object_put(o);
	close_pair(sv);
}

static void test_send_recv_fds(void **state)
{
	int sv[2], fds[3], taken;
	json_object *o = J("{\"fds\":3}");
	struct proto_msg m = {};
	struct fd_snapshot before;

	seqpacket_pair(sv, false);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = new_memfd();
	assert_int_equal(proto_send(sv[0], o, fds, ARRAY_SIZE(fds), PROTO_MAX_REQUEST_BYTES), 0);

	fd_snapshot(&before);
	assert_int_equal(
		proto_recv(sv[1], PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &m, NULL), 1);
	assert_int_equal(m.n_fds, 3);
	for (size_t i = 0; i < 3; i++) {
		/* New fds for the same files, in order, close-on-exec. */
		assert_int_not_equal(m.fds[i], fds[i]);
		assert_true(same_file(m.fds[i], fds[i]));
		assert_int_equal(fcntl(m.fds[i], F_GETFD), FD_CLOEXEC);
	}
	assert_int_equal(count_proc_fds(), before.n_proc + 3);

	taken = proto_msg_take_fd(&m, 1);
	assert_true(taken >= 0);
	assert_true(same_file(taken, fds[1]));
	assert_int_equal(m.fds[1], -EBADF);
	assert_int_equal(proto_msg_take_fd(&m, 1), -EBADF);
	assert_int_equal(proto_msg_take_fd(&m, 3), -EBADF);
	assert_int_equal(proto_msg_take_fd(&m, SIZE_MAX), -EBADF);

	/* done closes what was not taken, and only that. */
	proto_msg_done(&m);
	assert_int_equal(m.n_fds, 0);
	assert_null(m.fds);
	assert_int_equal(fcntl(taken, F_GETFD), FD_CLOEXEC);
	safe_close(taken);
	assert_fds_unchanged(&before);

	/* done on an empty message is harmless, as is NULL. */
	proto_msg_done(&m);
	proto_msg_done(NULL);

	close_many(fds, ARRAY_SIZE(fds));
	json_object_put(o);
	close_pair(sv);
}

static void test_send_recv_max_fds(void **state)
{
	int sv[2], fd = new_memfd();
	int fds[PROTO_MAX_REPLY_FDS];
	json_object *o = J("{}");
	struct proto_msg m = {};
	struct fd_snapshot before;

	/* The same fd many times over: the receiver gets as many new fds. */
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = fd;
	seqpacket_pair(sv, false);
	assert_int_equal(proto_send(sv[0], o, fds, PROTO_MAX_REPLY_FDS, PROTO_MAX_REPLY_BYTES), 0);
	fd_snapshot(&before);
	assert_int_equal(proto_recv(sv[1], PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &m, NULL),
			 1);
	assert_int_equal(m.n_fds, PROTO_MAX_REPLY_FDS);
	assert_true(same_file(m.fds[0], fd));
	assert_true(same_file(m.fds[PROTO_MAX_REPLY_FDS - 1], fd));
	proto_msg_done(&m);
	assert_fds_unchanged(&before);

	/* Exactly max_fds is allowed on the receiving side too. */
	assert_int_equal(proto_send(sv[0], o, fds, 2, 1024), 0);
	assert_int_equal(proto_recv(sv[1], 1024, 2, &m, NULL), 1);
	assert_int_equal(m.n_fds, 2);
	proto_msg_done(&m);
	assert_fds_unchanged(&before);

	/* proto_send refuses more than a reply may carry, and sends nothing. */
	assert_int_equal(proto_send(sv[0], o, fds, PROTO_MAX_REPLY_FDS + 1, PROTO_MAX_REPLY_BYTES),
			 -ETOOMANYREFS);
	assert_nothing_queued(sv[1]);

	safe_close(fd);
	json_object_put(o);
	close_pair(sv);
}

static void test_send_too_large(void **state)
{
	int sv[2];
	json_object *o = message_of_size(100);
	struct proto_msg m = {};

	seqpacket_pair(sv, false);
	assert_int_equal(proto_send(sv[0], o, NULL, 0, 99), -EMSGSIZE);
	assert_nothing_queued(sv[1]);
	assert_int_equal(proto_send(sv[0], o, NULL, 0, 100), 0);
	assert_int_equal(proto_recv(sv[1], 100, 0, &m, NULL), 1);
	proto_msg_done(&m);
	json_object_put(o);
	close_pair(sv);
}

static void test_recv_size_limit(void **state)
{
	int sv[2];
	json_object *ok = message_of_size(PROTO_MAX_REQUEST_BYTES);
	json_object *over = message_of_size(PROTO_MAX_REQUEST_BYTES + 1);
	struct proto_msg m = {};
	char *error = NULL;
	char want[128];

	seqpacket_pair(sv, false);
	/* The largest request allowed arrives whole... */
	assert_int_equal(proto_send(sv[0], ok, NULL, 0, SIZE_MAX), 0);
	assert_int_equal(
		proto_recv(sv[1], PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &m, &error), 1);
	assert_true(json_object_equal(m.json, ok));
	proto_msg_done(&m);

	/* ...one byte more is refused, naming both sizes. */
	assert_int_equal(proto_send(sv[0], over, NULL, 0, SIZE_MAX), 0);
	send_seq(sv[0], 1);
	assert_int_equal(
		proto_recv(sv[1], PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &m, &error),
		-EMSGSIZE);
	assert_null(m.json);
	snprintf(want, sizeof(want), "message of %u bytes exceeds the limit of %u bytes",
		 PROTO_MAX_REQUEST_BYTES + 1, PROTO_MAX_REQUEST_BYTES);
	assert_error(&error, want);
	/* The rest of the oversized packet is gone; the next one is intact. */
	recv_seq(sv[1], 1);
	assert_nothing_queued(sv[1]);

	json_object_put(ok);
	json_object_put(over);
	close_pair(sv);
}

static void test_recv_too_large_closes_fds(void **state)
{
	int sv[2], fds[2] = {new_memfd(), new_memfd()};
	json_object *o = message_of_size(200);
	struct proto_msg m = {};
	struct fd_snapshot before;
	char *error = NULL;

	seqpacket_pair(sv, false);
	assert_int_equal(proto_send(sv[0], o, fds, 2, 1024), 0);
	send_seq(sv[0], 2);
	fd_snapshot(&before);
	assert_int_equal(proto_recv(sv[1], 100, 4, &m, &error), -EMSGSIZE);
	assert_error(&error, "message of 200 bytes exceeds the limit of 100 bytes");
	assert_null(m.fds);
	assert_fds_unchanged(&before);
	recv_seq(sv[1], 2);

	close_many(fds, 2);
	json_object_put(o);
	close_pair(sv);
}

/*
 * The raw pair relays a worker's reply unparsed: the bytes and the fds come
 * through exactly, the buffer fits the packet (sized from a peek), and the
 * size and fd limits hold as for proto_recv(), which is built on it.
 */
static void test_raw_relay(void **state)
{
	static const char text[] = "{\"bpfbroker\":1,\"id\":7,\"result\":{}}";
	int sv[2], fds[2] = {new_memfd(), new_memfd()};
	struct proto_raw m = {};
	struct fd_snapshot before;
	char *error = NULL;

	seqpacket_pair(sv, false);
	assert_int_equal(proto_send_raw(sv[0], text, sizeof(text) - 1, fds, 2), 0);
	assert_int_equal(proto_recv_raw(sv[1], 1024, 4, &m, &error), 1);
	assert_int_equal(m.len, sizeof(text) - 1);
	assert_memory_equal(m.buf, text, m.len);
	assert_int_equal(m.n_fds, 2);
	assert_true(fcntl(m.fds[0], F_GETFD) & FD_CLOEXEC);
	proto_raw_done(&m);
	assert_null(m.fds);

	/* Over the limit: refused, its fds closed, the next packet unaffected. */
	assert_int_equal(proto_send_raw(sv[0], text, sizeof(text) - 1, fds, 2), 0);
	assert_int_equal(proto_send_raw(sv[0], "{}", 2, NULL, 0), 0);
	fd_snapshot(&before);
	assert_int_equal(proto_recv_raw(sv[1], 10, 4, &m, &error), -EMSGSIZE);
	assert_fds_unchanged(&before);
	free(error);
	error = NULL;
	assert_int_equal(proto_recv_raw(sv[1], 10, 4, &m, &error), 1);
	assert_int_equal(m.len, 2);
	proto_raw_done(&m);

	/* Nothing waiting on a non-blocking read; end of stream after the peer closed. */
	assert_int_equal(proto_recv_raw(sv[1], 10, 4, &m, &error), -EAGAIN);
	close(sv[0]);
	assert_int_equal(proto_recv_raw(sv[1], 10, 4, &m, &error), 0);
	close(sv[1]);
	close_many(fds, 2);
}

static void test_recv_too_many_fds(void **state)
{
	int sv[2], fds[PROTO_MAX_REQUEST_FDS + 1];
	json_object *o = J("{}"), *big = message_of_size(300);
	struct proto_msg m = {};
	struct fd_snapshot before;
	char *error = NULL;
	char want[96];

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = new_memfd();
	seqpacket_pair(sv, false);

	/* One more than allowed: the kernel hands all of them over, proto_recv closes them. */
	assert_int_equal(proto_send(sv[0], o, fds, ARRAY_SIZE(fds), 1024), 0);
	send_seq(sv[0], 3);
	fd_snapshot(&before);
	assert_int_equal(proto_recv(sv[1], 1024, PROTO_MAX_REQUEST_FDS, &m, &error), -ETOOMANYREFS);
	snprintf(want, sizeof(want), "message carries %d fds, at most %d allowed",
		 PROTO_MAX_REQUEST_FDS + 1, PROTO_MAX_REQUEST_FDS);
	assert_error(&error, want);
	assert_fds_unchanged(&before);
	recv_seq(sv[1], 3);

	/* No fds allowed at all. */
	assert_int_equal(proto_send(sv[0], o, fds, 1, 1024), 0);
	assert_int_equal(proto_recv(sv[1], 1024, 0, &m, &error), -ETOOMANYREFS);
	assert_error(&error, "message carries 1 fds, at most 0 allowed");
	assert_fds_unchanged(&before);

	/* Too many fds and too large: the fds are what is reported, and closed. */
	assert_int_equal(proto_send(sv[0], big, fds, 2, 1024), 0);
	assert_int_equal(proto_recv(sv[1], 100, 1, &m, &error), -ETOOMANYREFS);
	assert_error(&error, "fds");
	assert_fds_unchanged(&before);
	assert_nothing_queued(sv[1]);

	close_many(fds, ARRAY_SIZE(fds));
	json_object_put(o);
	json_object_put(big);
	close_pair(sv);
}

static void test_recv_truncated_control(void **state)
{
	int sv[2], fds[10];
	json_object *o = J("{}");
	struct proto_msg m = {};
	struct fd_snapshot before;
	char *error = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = new_memfd();
	seqpacket_pair(sv, false);

	/*
	 * Premise: with a control buffer too small, the kernel sets MSG_CTRUNC but
	 * still installs the fds that fit. Those are what proto_recv must close.
	 */
	{
		char data[8];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int) * 2)];
		} control;
		struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = control.buf,
				    .msg_controllen = sizeof(control.buf)};
		struct cmsghdr *c;
		size_t got = 0;

		assert_int_equal(proto_send(sv[0], o, fds, ARRAY_SIZE(fds), 1024), 0);
		assert_true(recvmsg(sv[1], &mh, MSG_CMSG_CLOEXEC) > 0);
		assert_true(mh.msg_flags & MSG_CTRUNC);
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				assert_true(same_file(fd, fds[got + i]));
				safe_close(fd);
			}
			got += k;
		}
		assert_true(got >= 2 && got < ARRAY_SIZE(fds));
	}

	/* The receiver takes fewer than were sent: rejected, nothing leaks. */
	for (size_t max_fds = 0; max_fds <= 4; max_fds++) {
		assert_int_equal(proto_send(sv[0], o, fds, ARRAY_SIZE(fds), 1024), 0);
		send_seq(sv[0], (int64_t)max_fds);
		fd_snapshot(&before);
		assert_int_equal(proto_recv(sv[1], 1024, max_fds, &m, &error), -ETOOMANYREFS);
		assert_error(&error, "control message truncated");
		assert_null(m.fds);
		assert_fds_unchanged(&before);
		recv_seq(sv[1], (int64_t)max_fds);
	}

	close_many(fds, ARRAY_SIZE(fds));
	json_object_put(o);
	close_pair(sv);
}

static void test_recv_bad_message_closes_fds(void **state)
{
	static const char nul[] = "{\"a\":\0}";
	_cleanup_free_ char *deep = nested(PROTO_MAX_JSON_DEPTH + 1, false);
	int sv[2], fds[2] = {new_memfd(), new_memfd()};
	struct proto_msg m = {};
	struct fd_snapshot before;
	char *error = NULL;

	seqpacket_pair(sv, false);
	fd_snapshot(&before);

	send_raw(sv[0], "not json", 8, fds, 2);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EBADMSG);
	assert_error(&error, "not valid JSON");
	assert_null(m.json);
	assert_fds_unchanged(&before);

	send_raw(sv[0], nul, sizeof(nul) - 1, fds, 1);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EBADMSG);
	assert_error(&error, "NUL byte");
	assert_fds_unchanged(&before);

	send_raw(sv[0], "[1]", 3, fds, 2);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EBADMSG);
	assert_error(&error, "not a JSON object");
	assert_fds_unchanged(&before);

	send_raw(sv[0], deep, strlen(deep), fds, 2);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EBADMSG);
	assert_error(&error, "too deep");
	assert_fds_unchanged(&before);

	/* An empty packet that carries fds is a bad message, not an end of stream. */
	send_raw(sv[0], "", 0, fds, 2);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EBADMSG);
	assert_error(&error, "empty message");
	assert_fds_unchanged(&before);

	/* Still in step. */
	send_seq(sv[0], 5);
	recv_seq(sv[1], 5);

	close_many(fds, 2);
	close_pair(sv);
}

static void test_recv_eof(void **state)
{
	int sv[2];
	struct proto_msg m = {};
	char *error = NULL;

	seqpacket_pair(sv, true);
	send_seq(sv[0], 1);
	safe_close(sv[0]);
	/* Queued messages come first, then end of stream, again and again. */
	recv_seq(sv[1], 1);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), 0);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), 0);
	assert_null(error);
	assert_null(m.json);
	safe_close(sv[1]);

	/* An empty packet without fds can't be told from end of stream and reads as one. */
	seqpacket_pair(sv, true);
	send_raw(sv[0], "", 0, NULL, 0);
	send_seq(sv[0], 2);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), 0);
	recv_seq(sv[1], 2);
	close_pair(sv);
}

static void test_recv_eagain(void **state)
{
	int sv[2];
	struct proto_msg m = {};
	char *error = NULL;

	seqpacket_pair(sv, true);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EAGAIN);
	assert_null(error);
	assert_null(m.json);
	close_pair(sv);

	/* proto_recv never blocks, even on a blocking socket. */
	seqpacket_pair(sv, false);
	assert_int_equal(proto_recv(sv[1], 1024, 4, &m, &error), -EAGAIN);
	assert_null(error);
	close_pair(sv);
}

static void test_send_no_sigpipe(void **state)
{
	int sv[2];
	json_object *o = J("{}");

	seqpacket_pair(sv, false);
	safe_close(sv[1]);
	/* With SIGPIPE at its default, a plain send() would kill the test here. */
	assert_int_equal(proto_send(sv[0], o, NULL, 0, 1024), -EPIPE);
	safe_close(sv[0]);
	json_object_put(o);
}

static void test_recv_not_a_socket(void **state)
{
	int p[2];
	struct proto_msg m = {};
	json_object *o = J("{}");

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(proto_recv(p[0], 1024, 4, &m, NULL), -ENOTSOCK);
	assert_int_equal(proto_send(p[1], o, NULL, 0, 1024), -ENOTSOCK);
	json_object_put(o);
	close_many(p, 2);
}

/* Text from a hostile ELF may be any bytes: replies carry it as valid UTF-8. */
static void test_sanitize_utf8(void **state)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *text = NULL;

	json_object_object_add(o, "ok", json_object_new_string("pr\xc3\xa9 \xf0\x9f\x98\x80"));
	json_object_object_add(o, "bad", json_object_new_string("prog '\277\242'"));
	json_object_array_add(a, json_object_new_string_len("a\0b\xed\xa0\x80", 6));
	json_object_array_add(a, json_object_new_string("\xc0\xaf overlong"));
	json_object_object_add(o, "list", a);
	assert_int_equal(proto_json_sanitize_utf8(o), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "ok")),
			    "pr\xc3\xa9 \xf0\x9f\x98\x80");
	assert_string_equal(json_object_get_string(json_object_object_get(o, "bad")),
			    "prog '\xef\xbf\xbd\xef\xbf\xbd'");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(a, 1)),
			    "\xef\xbf\xbd\xef\xbf\xbd overlong");
	/* Whatever the bytes were, the daemon's strict parser takes the result. */
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	o = NULL;
	assert_int_equal(proto_parse(text, strlen(text), &o, NULL), 0);
	json_object_put(o);
	free(text);
	assert_int_equal(proto_utf8_sequence((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(proto_utf8_sequence((const unsigned char *)"\xe2\x82", 2), 0);
}

/* ---- the method table and its table-driven decoders (method.h, params.h) ---- */

/* Decode text as method's params; the decoded struct in a buffer of the table's size. */
static int decode_method(const char *method, const char *text, void *ret, char **error)
{
	const struct proto_method *m = proto_method_find(method);
	json_object *o = J(text);
	int r;

	assert_non_null(m);
	r = proto_method_decode(m, o, 0, ret, error);
	json_object_put(o);
	return r;
}

/* The params must be refused with err and a message containing what; ret untouched. */
static void reject_method(const char *method, const char *text, int err, const char *what)
{
	uint8_t buf[512];
	char *error = NULL;
	int r;

	memset(buf, 0xa5, sizeof(buf));
	assert_true(proto_method_find(method)->params_size <= sizeof(buf));
	r = decode_method(method, text, buf, &error);
	if (r != err)
		fail_msg("%s %s: decode returned %d (%s), expected %d", method, text, r,
			 error ? error : "no message", err);
	/* Output only on success: nothing to free, nothing written. */
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xa5);
	assert_error(&error, what);
}

/* Decoded and encoded again, the params are text (in canonical order). */
static void roundtrip_method(const char *method, const char *text)
{
	const struct proto_method *m = proto_method_find(method);
	uint8_t buf[512] = {};
	char *error = NULL;
	json_object *o;

	if (decode_method(method, text, buf, &error) < 0)
		fail_msg("%s %s: %s", method, text, error ? error : "?");
	o = proto_method_encode(m, buf);
	assert_non_null(o);
	assert_string_equal(json_object_to_json_string_ext(o, PROTO_JSON_FLAGS), text);
	json_object_put(o);
	proto_method_done(m, buf);
}

static void test_method_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < PROTO_METHOD_COUNT; i++) {
		const struct proto_method *m = &proto_methods[i];

		assert_non_null(m->name);
		assert_int_equal(m->id, i);
		assert_ptr_equal(proto_method_find(m->name), m);
		assert_true(m->fds_min <= m->fds_max && m->fds_max <= PROTO_MAX_REQUEST_FDS);
		assert_true(m->reply_fds <= PROTO_MAX_REPLY_FDS);
		/* Every method with params describes them as a table, of its params' size. */
		assert_true(m->id == PROTO_METHOD_HELLO || m->fields);
		assert_true(!m->fields || m->fields->size == m->params_size);
		assert_true(m->in_worker || m->id == PROTO_METHOD_HELLO);
	}
	assert_null(proto_method_find("sweep")); /* the pool's own, never a client's */
	assert_null(proto_method_find("Load"));
	assert_null(proto_method_find(NULL));
	/* A load's fd, or none for a system object (its decoder holds it to exactly one). */
	assert_int_equal(proto_method_find("load")->fds_min, 0);
	assert_int_equal(proto_method_find("load")->fds_max, 1);
	assert_int_equal(proto_method_find("attach")->fds_max, 2);
	assert_int_equal(proto_method_find("map_insert")->fds_max, 1);
	assert_int_equal(proto_method_find("list")->fds_max, 0);
}

/* What the decoder relies on in a table, and in each of its arrays' item tables. */
static void check_table(const struct proto_fields *t)
{
	const struct proto_field *sel = NULL;

	assert_true(t->n_fields <= PROTO_MAX_FIELDS);
	for (size_t i = 0; i < t->n_fields; i++)
		if (t->selector && strcmp(t->fields[i].key, t->selector) == 0)
			sel = &t->fields[i];
	/* A selector names a required ENUM of the table: else every only_for field is ignored. */
	if (t->selector) {
		if (!sel)
			fail_msg("%s: selector \"%s\" is no field", t->what, t->selector);
		assert_int_equal(sel->kind, PROTO_FIELD_ENUM);
		assert_true(sel->required);
	}
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct proto_field *f = &t->fields[i];

		if (!sel && (f->only_for || f->needed_for))
			fail_msg("%s: \"%s\" applies by a selector the table lacks", t->what,
				 f->key);
		/* Needed only where it applies. */
		assert_true(!f->only_for || (f->needed_for & ~f->only_for) == 0);
		if (f->kind == PROTO_FIELD_ARRAY)
			check_table(f->items);
	}
}

static void test_method_tables(void **state)
{
	(void)state;
	for (size_t i = 0; i < PROTO_METHOD_COUNT; i++)
		if (proto_methods[i].fields)
			check_table(proto_methods[i].fields);
}

/* A table with a selector, for the decoder's own cases below. */
struct sel_params {
	uint32_t op;
	union { /* as map's key and cursor: fields of different ops share a member */
		uint32_t count;
		uint32_t flags;
	};
};
static const char *const sel_names[] = {"dump", "update", NULL};
static const struct proto_field sel_fields[] = {
	PROTO_ENUM(struct sel_params, op, false, sel_names),
	PROTO_INT(struct sel_params, count, false, 1, 100, 64, .only_for = 1 << 0),
	PROTO_INT(struct sel_params, flags, false, 0, 7, 0, .only_for = 1 << 1),
};
static PROTO_TABLE(sel_table, "sel", struct sel_params, sel_fields, .selector = "op");

/* A selector table without needs_params, sent none: decoded with defaults, not a crash. */
static void test_fields_selector_no_params(void **state)
{
	struct sel_params p = {.op = 9};
	char *error = NULL;

	(void)state;
	assert_int_equal(proto_fields_decode(&sel_table, NULL, 0, &p, &error), 0);
	assert_null(error);
	assert_int_equal(p.op, 0);
	assert_int_equal(p.count, 64);
	proto_fields_done(&sel_table, &p);
}

/* A field that does not apply writes no default over the member it shares with one that does. */
static void test_fields_default_only_where_applies(void **state)
{
	struct sel_params p = {};
	char *error = NULL;
	json_object *o = J("{\"op\":\"dump\",\"count\":5}");

	(void)state;
	assert_int_equal(proto_fields_decode(&sel_table, o, 0, &p, &error), 0);
	assert_int_equal(p.count, 5);
	json_object_put(o);
	o = J("{\"op\":\"dump\"}");
	assert_int_equal(proto_fields_decode(&sel_table, o, 0, &p, &error), 0);
	assert_int_equal(p.count, 64);
	json_object_put(o);
	o = J("{\"op\":\"update\",\"flags\":3}");
	assert_int_equal(proto_fields_decode(&sel_table, o, 0, &p, &error), 0);
	assert_int_equal(p.op, 1);
	assert_int_equal(p.flags, 3);
	json_object_put(o);
	o = J("{\"op\":\"update\",\"count\":3}");
	assert_int_equal(proto_fields_decode(&sel_table, o, 0, &p, &error), -EINVAL);
	assert_error(&error, "op update takes no \"count\"");
	json_object_put(o);
}

static void test_method_when(void **state)
{
	json_object *check = J("{\"check_only\":true}"), *load = J("{\"check_only\":false}");
	json_object *update = J("{\"op\":\"update\"}"), *lookup = J("{\"op\":\"lookup\"}");
	json_object *bad = J("{\"op\":7,\"check_only\":\"yes\"}");

	(void)state;
	assert_false(proto_method_when(PROTO_UNLESS_CHECK_ONLY, check));
	assert_true(proto_method_when(PROTO_UNLESS_CHECK_ONLY, load));
	assert_true(proto_method_when(PROTO_UNLESS_CHECK_ONLY, NULL));
	/* Not decoded yet, and wrong: counted as the more careful answer. */
	assert_true(proto_method_when(PROTO_UNLESS_CHECK_ONLY, bad));
	assert_true(proto_method_when(PROTO_IF_MAP_WRITES, update));
	assert_false(proto_method_when(PROTO_IF_MAP_WRITES, lookup));
	assert_false(proto_method_when(PROTO_IF_MAP_WRITES, bad));
	assert_true(proto_method_when(PROTO_ALWAYS, NULL));
	assert_false(proto_method_when(PROTO_NEVER, update));
	assert_true(proto_method_when(proto_method_find("attach")->rate_limited, NULL));
	assert_false(proto_method_when(proto_method_find("detach")->rate_limited, NULL));
	json_object_put(check);
	json_object_put(load);
	json_object_put(update);
	json_object_put(lookup);
	json_object_put(bad);
}

static void test_method_object_params(void **state)
{
	static const char *const methods[] = {"show", "unload", "fds"};
	struct proto_object_params p = {};
	char *error = NULL;

	(void)state;
	assert_int_equal(decode_method("show", "{\"object\":\"alice/counter\"}", &p, &error), 0);
	assert_string_equal(p.object, "alice/counter");
	proto_method_done(proto_method_find("show"), &p);
	assert_null(p.object);
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		char want[64];

		roundtrip_method(methods[i], "{\"object\":\"x\"}");
		snprintf(want, sizeof(want), "%s: unknown key \"obj\"", methods[i]);
		reject_method(methods[i], "{\"object\":\"x\",\"obj\":1}", -EINVAL, want);
		reject_method(methods[i], "{}", -EINVAL, "missing \"object\"");
		reject_method(methods[i], "{\"object\":null}", -EINVAL, "missing \"object\"");
		reject_method(methods[i], "{\"object\":5}", -EINVAL, "\"object\" must be a string");
		reject_method(methods[i], "{\"object\":\"a\\u0000b\"}", -EINVAL, "NUL");
		/* Bounded like load's names: empty and over PROTO_MAX_NAME refused. */
		reject_method(methods[i], "{\"object\":\"\"}", -EINVAL,
			      "\"object\" must be 1 to 255 characters");
		{
			_cleanup_free_ char *o255 = repeat('o', PROTO_MAX_NAME),
					    *o256 = repeat('o', PROTO_MAX_NAME + 1);
			char text[300];

			snprintf(text, sizeof(text), "{\"object\":\"%s\"}", o255);
			roundtrip_method(methods[i], text);
			snprintf(text, sizeof(text), "{\"object\":\"%s\"}", o256);
			reject_method(methods[i], text, -EINVAL,
				      "\"object\" must be 1 to 255 characters");
		}
	}
}

/* load, load_insns and map go by their tables too: the table's text is the typed encoder's. */
static void test_method_load_map_params(void **state)
{
	static const char *const loads[] = {
		"{\"object_fd\":0,\"object_name\":\"o\",\"check_only\":true,\"name\":\"n\","
		"\"shares\":[{\"map\":\"m\",\"user\":\"u\",\"access\":\"ro\"}],"
		"\"globals\":[{\"name\":\"g\",\"value\":\"00ff\"}],"
		"\"freeze\":[{\"name\":\"m\"}],\"map_defs\":[{\"name\":\"m\",\"value_size\":0}]}",
		"{\"insns_fd\":0,\"type\":\"cgroup_device\",\"license\":\"GPL\"}",
	};
	static const char *const methods[] = {"load", "load_insns"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(loads); i++) {
		const struct proto_method *m = proto_method_find(methods[i]);
		uint8_t buf[512] = {};
		json_object *o = J(loads[i]), *enc;
		char *error = NULL;

		assert_true(m->params_size <= sizeof(buf));
		if (proto_method_decode(m, o, 1, buf, &error) != 0)
			fail_msg("%s: %s", loads[i], error);
		enc = proto_method_encode(m, buf);
		assert_string_equal(json_object_to_json_string_ext(enc, PROTO_JSON_FLAGS),
				    loads[i]);
		json_object_put(enc);
		json_object_put(o);
		proto_method_done(m, buf);
		/* With no fd, the index is refused before anything else. */
		o = J(loads[i]);
		assert_int_equal(proto_method_decode(m, o, 0, buf, &error), -EBADF);
		assert_error(&error, "refers to fd 0 but the message carries 0");
		json_object_put(o);
	}
	roundtrip_method("map", "{\"object\":\"o\",\"map\":\"m\",\"op\":\"update\",\"key\":\"00\","
				"\"value\":\"ff\",\"flags\":1}");
	reject_method("map", "{\"object\":\"o\",\"map\":\"m\",\"op\":\"btf\",\"flags\":1}", -EINVAL,
		      "op btf takes no \"flags\"");
}

static void test_method_list_params(void **state)
{
	struct proto_list_params p = {};
	char *error = NULL;

	(void)state;
	assert_int_equal(decode_method("list", "{}", &p, &error), 0);
	assert_int_equal(p.limit, PROTO_MAX_LIST_LIMIT);
	assert_false(p.all || p.shared);
	assert_null(p.user);
	assert_null(p.cursor);
	proto_method_done(proto_method_find("list"), &p);
	assert_int_equal(decode_method("list", "{\"all\":null,\"limit\":1}", &p, &error), 0);
	assert_false(p.all);
	assert_int_equal(p.limit, 1);
	proto_method_done(proto_method_find("list"), &p);
	roundtrip_method("list", "{}");
	roundtrip_method("list",
			 "{\"cursor\":\"1000/x\",\"all\":true,\"shared\":true,\"user\":\"bob\","
			 "\"limit\":7}");
	reject_method("list", "{\"bogus\":1}", -EINVAL, "list: unknown key \"bogus\"");
	reject_method("list", "{\"all\":1}", -EINVAL, "\"all\" must be true or false");
	reject_method("list", "{\"shared\":\"yes\"}", -EINVAL, "\"shared\" must be true or false");
	reject_method("list", "{\"user\":1000}", -EINVAL, "\"user\" must be a string");
	reject_method("list", "{\"cursor\":[]}", -EINVAL, "\"cursor\" must be a string");
	reject_method("list", "{\"limit\":0}", -ERANGE, "\"limit\" must be between 1 and 65536");
	reject_method("list", "{\"limit\":65537}", -ERANGE, "\"limit\" must be between 1");
	reject_method("list", "{\"limit\":1.5}", -EINVAL, "\"limit\" must be an integer");
	reject_method("list", "{\"limit\":18446744073709551615}", -ERANGE, "\"limit\"");
}

static void test_method_attach_params(void **state)
{
	struct proto_attach_params p = {};
	char *error = NULL;

	(void)state;
	assert_int_equal(
		decode_method("attach",
			      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":"
			      "\"cgroup\",\"fd\":0,\"attach_type\":\"cgroup_inet_egress\"}}",
			      &p, &error),
		0);
	assert_string_equal(p.object, "o");
	assert_string_equal(p.target.type, "cgroup");
	assert_string_equal(p.target.attach_type, "cgroup_inet_egress");
	assert_int_equal(p.target.fd, 0);
	assert_false(p.pin);
	proto_method_done(proto_method_find("attach"), &p);
	assert_int_equal(
		decode_method("attach",
			      "{\"object\":\"o\",\"program\":\"p\",\"pin\":true,\"target\":"
			      "{\"type\":\"uprobe\",\"fd\":1,\"pidfd\":0,\"offset\":16}}",
			      &p, &error),
		0);
	assert_true(p.pin);
	assert_int_equal(p.target.fd, 1);
	assert_int_equal(p.target.pidfd, 0);
	assert_int_equal(p.target.offset, 16);
	assert_null(p.target.name);
	proto_method_done(proto_method_find("attach"), &p);
	/* Absent fd and offset are -1, not a first fd or a file's first byte. */
	assert_int_equal(decode_method("attach",
				       "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":"
				       "\"tracepoint\",\"name\":\"sched:sched_switch\"}}",
				       &p, &error),
			 0);
	assert_int_equal(p.target.fd, -1);
	proto_method_done(proto_method_find("attach"), &p);

	roundtrip_method("attach", "{\"program\":\"p\",\"pin\":true,\"target\":{\"type\":\"xdp\","
				   "\"name\":\"veth0\"},\"object\":\"o\"}");
	roundtrip_method("attach",
			 "{\"program\":\"p\",\"pin\":true,\"target\":{\"type\":\"uprobe\",\"fd\":0,"
			 "\"pidfd\":1,\"name\":\"main\",\"offset\":4,\"retprobe\":true,"
			 "\"semaphore_offset\":4096},\"object\":\"o\"}");

	reject_method("attach", "{\"object\":\"o\",\"program\":\"p\",\"target\":{},\"x\":1}",
		      -EINVAL, "attach: unknown key \"x\"");
	reject_method("attach", "{\"object\":\"o\",\"target\":{\"type\":\"xdp\"}}", -EINVAL,
		      "missing \"program\"");
	reject_method("attach", "{\"object\":\"o\",\"program\":\"p\"}", -EINVAL,
		      "\"target\" must be an object");
	reject_method("attach", "{\"object\":\"o\",\"program\":\"p\",\"target\":[]}", -EINVAL,
		      "\"target\" must be an object");
	reject_method("attach", "{\"object\":\"o\",\"program\":\"p\",\"pin\":1,\"target\":{}}",
		      -EINVAL, "\"pin\" must be true or false");
	reject_method("attach", "{\"object\":\"o\",\"program\":\"p\",\"target\":{}}", -EINVAL,
		      "missing \"type\"");
	reject_method("attach", "{\"program\":\"p\",\"target\":{\"type\":\"xdp\"}}", -EINVAL,
		      "missing \"object\"");
	/* Each kind of target takes only its own keys. */
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"cgroup\","
		      "\"pidfd\":0}}",
		      -EINVAL, "target: unknown key \"pidfd\"");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1,\"offset\":0,\"attach_type\":\"x\"}}",
		      -EINVAL, "target: unknown key \"attach_type\"");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"cgroup\","
		      "\"fd\":4}}",
		      -ERANGE, "\"fd\" must be between 0 and 3");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"cgroup\","
		      "\"name\":7}}",
		      -EINVAL, "\"name\" must be a string");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"offset\":0}}",
		      -EINVAL, "missing \"pidfd\"");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1}}",
		      -EINVAL, "needs a function (\"name\") or a file offset");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1,\"offset\":-1}}",
		      -ERANGE, "\"offset\" must be between 0");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1,\"name\":\"\"}}",
		      -EINVAL, "\"name\" must be a symbol of 1 to 255 characters");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1,\"offset\":0,\"semaphore\":\"s\","
		      "\"semaphore_offset\":8}}",
		      -EINVAL, "not both");
	reject_method("attach",
		      "{\"object\":\"o\",\"program\":\"p\",\"target\":{\"type\":\"uprobe\","
		      "\"fd\":0,\"pidfd\":1,\"offset\":0,\"semaphore_offset\":4294967296}}",
		      -ERANGE, "\"semaphore_offset\" must be between 1 and 4294967295");
}

static void test_method_detach_params(void **state)
{
	struct proto_detach_params p = {};
	char *error = NULL;

	(void)state;
	assert_int_equal(
		decode_method("detach", "{\"object\":\"o\",\"program\":\"p\"}", &p, &error), 0);
	assert_int_equal(p.link, 0);
	proto_method_done(proto_method_find("detach"), &p);
	roundtrip_method("detach", "{\"object\":\"o\",\"program\":\"p\",\"link\":4294967295}");
	reject_method("detach", "{\"object\":5}", -EINVAL, "\"object\" must be a string");
	reject_method("detach", "{\"object\":\"o\"}", -EINVAL, "missing \"program\"");
	reject_method("detach", "{\"object\":\"o\",\"program\":\"p\",\"link\":0}", -ERANGE,
		      "\"link\" must be between 1 and 4294967295");
	reject_method("detach", "{\"object\":\"o\",\"program\":\"p\",\"link\":\"3\"}", -EINVAL,
		      "\"link\" must be an integer");
	reject_method("detach", "{\"object\":\"o\",\"program\":\"p\",\"links\":[]}", -EINVAL,
		      "detach: unknown key \"links\"");
}

static void test_method_test_run_params(void **state)
{
	struct proto_test_run_params p = {};
	_cleanup_free_ char *max = repeat('a', 2 * PROTO_TEST_RUN_MAX_DATA),
			    *over = repeat('a', 2 * PROTO_TEST_RUN_MAX_DATA + 2),
			    *ctx_over = repeat('0', 2 * PROTO_TEST_RUN_MAX_CTX + 2);
	char *error = NULL, text[2 * PROTO_TEST_RUN_MAX_DATA + 128];

	(void)state;
	assert_int_equal(decode_method("test_run",
				       "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"00Ff\","
				       "\"ctx_in\":\"\"}",
				       &p, &error),
			 0);
	assert_int_equal(p.data_in.size, 2);
	assert_int_equal(p.data_in.data[1], 0xff);
	/* "" is present and empty, as it always was. */
	assert_non_null(p.ctx_in.data);
	assert_int_equal(p.ctx_in.size, 0);
	assert_int_equal(p.repeat, 0);
	proto_method_done(proto_method_find("test_run"), &p);
	roundtrip_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"0aff\","
				     "\"repeat\":1000000}");
	snprintf(text, sizeof(text), "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"%s\"}",
		 max);
	assert_int_equal(decode_method("test_run", text, &p, &error), 0);
	assert_int_equal(p.data_in.size, PROTO_TEST_RUN_MAX_DATA);
	proto_method_done(proto_method_find("test_run"), &p);
	snprintf(text, sizeof(text), "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"%s\"}",
		 over);
	reject_method("test_run", text, -E2BIG, "\"data_in\" is over 16384 bytes");
	snprintf(text, sizeof(text), "{\"object\":\"o\",\"program\":\"p\",\"ctx_in\":\"%s\"}",
		 ctx_over);
	reject_method("test_run", text, -E2BIG, "\"ctx_in\" is over 4096 bytes");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"zz\"}",
		      -EINVAL, "\"data_in\" must be hex bytes");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"data_in\":\"abc\"}",
		      -EINVAL, "\"data_in\" must be hex bytes");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"ctx_in\":0}", -EINVAL,
		      "\"ctx_in\" must be a string");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"repeat\":0}", -ERANGE,
		      "\"repeat\" must be between 1 and 1000000");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"repeat\":1000001}",
		      -ERANGE, "\"repeat\"");
	reject_method("test_run", "{\"program\":\"p\"}", -EINVAL, "missing \"object\"");
	reject_method("test_run", "{\"object\":\"o\",\"program\":\"p\",\"data_out\":\"\"}", -EINVAL,
		      "test_run: unknown key \"data_out\"");
}

static void test_method_map_insert_params(void **state)
{
	struct proto_map_insert_params p = {};
	_cleanup_free_ char *over = repeat('0', 2 * PROTO_MAP_MAX_KEY + 2);
	char *error = NULL, text[2 * PROTO_MAP_MAX_KEY + 128];

	(void)state;
	assert_int_equal(decode_method("map_insert",
				       "{\"object\":\"o\",\"map\":\"m\",\"key\":\"01000000\","
				       "\"fd\":0}",
				       &p, &error),
			 0);
	assert_int_equal(p.key.size, 4);
	assert_int_equal(p.fd, 0);
	proto_method_done(proto_method_find("map_insert"), &p);
	roundtrip_method("map_insert", "{\"object\":\"o\",\"map\":\"m\",\"key\":\"00\",\"fd\":3}");
	reject_method("map_insert", "{\"object\":\"o\",\"map\":\"m\",\"fd\":0}", -EINVAL,
		      "missing \"key\"");
	reject_method("map_insert", "{\"object\":\"o\",\"map\":\"m\",\"key\":\"00\"}", -EINVAL,
		      "missing \"fd\"");
	reject_method("map_insert", "{\"object\":\"o\",\"map\":\"m\",\"key\":\"00\",\"fd\":4}",
		      -ERANGE, "\"fd\" must be between 0 and 3");
	reject_method("map_insert", "{\"object\":\"o\",\"map\":1,\"key\":\"00\",\"fd\":0}", -EINVAL,
		      "\"map\" must be a string");
	snprintf(text, sizeof(text), "{\"object\":\"o\",\"map\":\"m\",\"key\":\"%s\",\"fd\":0}",
		 over);
	reject_method("map_insert", text, -E2BIG, "\"key\" is over 512 bytes");
	reject_method("map_insert",
		      "{\"object\":\"o\",\"map\":\"m\",\"key\":\"00\",\"fd\":0,\"value\":\"00\"}",
		      -EINVAL, "map_insert: unknown key \"value\"");
}

static void test_method_policy_params(void **state)
{
	char *error = NULL;

	(void)state;
	assert_int_equal(decode_method("policy", "{}", NULL, &error), 0);
	reject_method("policy", "{\"x\":1}", -EINVAL, "policy: unknown key \"x\"");
	/* hello takes whatever params it is given and ignores them, as ever. */
	assert_int_equal(decode_method("hello", "{\"x\":1}", NULL, &error), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid_object),
		cmocka_unit_test(test_parse_honours_length),
		cmocka_unit_test(test_parse_not_object),
		cmocka_unit_test(test_parse_trailing_garbage),
		cmocka_unit_test(test_parse_embedded_nul),
		cmocka_unit_test(test_parse_depth),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_parse_size_limit),
		cmocka_unit_test(test_parse_error_handling),
		cmocka_unit_test(test_request_check_valid),
		cmocka_unit_test(test_request_check_version),
		cmocka_unit_test(test_request_check_keys),
		cmocka_unit_test(test_request_check_id),
		cmocka_unit_test(test_request_check_method),
		cmocka_unit_test(test_request_check_params),
		cmocka_unit_test(test_get_string),
		cmocka_unit_test(test_get_int),
		cmocka_unit_test(test_get_bool),
		cmocka_unit_test(test_check_keys),
		cmocka_unit_test(test_request_new),
		cmocka_unit_test(test_reply_and_error_new),
		cmocka_unit_test(test_error_codes),
		cmocka_unit_test(test_load_decode_minimal),
		cmocka_unit_test(test_load_decode_full),
		cmocka_unit_test(test_load_decode_envelope),
		cmocka_unit_test(test_load_decode_object_fd),
		cmocka_unit_test(test_load_decode_system_object_fds),
		cmocka_unit_test(test_load_decode_scalars),
		cmocka_unit_test(test_load_decode_globals),
		cmocka_unit_test(test_load_decode_map_sizes),
		cmocka_unit_test(test_load_decode_freeze),
		cmocka_unit_test(test_load_decode_share_access),
		cmocka_unit_test(test_load_decode_programs),
		cmocka_unit_test(test_load_decode_map_defs),
		cmocka_unit_test(test_load_decode_inner_maps),
		cmocka_unit_test(test_load_decode_attach_targets),
		cmocka_unit_test(test_load_setup_roundtrip),
		cmocka_unit_test(test_insns_decode),
		cmocka_unit_test(test_map_decode),
		cmocka_unit_test(test_map_roundtrip),
		cmocka_unit_test(test_method_table),
		cmocka_unit_test(test_method_tables),
		cmocka_unit_test(test_fields_selector_no_params),
		cmocka_unit_test(test_fields_default_only_where_applies),
		cmocka_unit_test(test_method_load_map_params),
		cmocka_unit_test(test_method_when),
		cmocka_unit_test(test_method_object_params),
		cmocka_unit_test(test_method_list_params),
		cmocka_unit_test(test_method_attach_params),
		cmocka_unit_test(test_method_detach_params),
		cmocka_unit_test(test_method_test_run_params),
		cmocka_unit_test(test_method_map_insert_params),
		cmocka_unit_test(test_method_policy_params),
		cmocka_unit_test(test_insns_roundtrip),
		cmocka_unit_test(test_load_roundtrip),
		cmocka_unit_test(test_load_encode_minimal),
		cmocka_unit_test(test_send_recv),
		cmocka_unit_test(test_send_recv_fds),
		cmocka_unit_test(test_send_recv_max_fds),
		cmocka_unit_test(test_send_too_large),
		cmocka_unit_test(test_recv_size_limit),
		cmocka_unit_test(test_recv_too_large_closes_fds),
		cmocka_unit_test(test_raw_relay),
		cmocka_unit_test(test_recv_too_many_fds),
		cmocka_unit_test(test_recv_truncated_control),
		cmocka_unit_test(test_recv_bad_message_closes_fds),
		cmocka_unit_test(test_recv_eof),
		cmocka_unit_test(test_recv_eagain),
		cmocka_unit_test(test_send_no_sigpipe),
		cmocka_unit_test(test_recv_not_a_socket),
		cmocka_unit_test(test_sanitize_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
