// SPDX-License-Identifier: MIT
/*
 * Unit tests for the error convention (daemon/worker/reply.h, daemon/README.md "Errors"): a
 * refusal returns its positive code, sticks once made (no result, no fd after it), and failures
 * become "internal" in one place; the wire's error codes come from one table.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/json.h"
#include "common/macro.h"
#include "daemon/worker/denial.h"
#include "daemon/worker/reply.h"
#include "proto/proto.h"

static const char *body_error_field(json_object *body, const char *key)
{
	json_object *e, *v;

	if (!json_object_object_get_ex(body, "error", &e) || !json_object_object_get_ex(e, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int pipe_fd(void)
{
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[1]);
	return p[0];
}

/* The wire strings, unchanged, each from the one table; none for 0 or past the end. */
static void test_codes(void **state)
{
	static const struct {
		enum proto_error e;
		const char *s;
	} codes[] = {
		{PROTO_ERR_INVALID, "invalid-request"},
		{PROTO_ERR_VERSION, "unsupported-version"},
		{PROTO_ERR_METHOD, "unknown-method"},
		{PROTO_ERR_TOO_LARGE, "too-large"},
		{PROTO_ERR_FDS, "bad-fds"},
		{PROTO_ERR_DENIED, "policy-denied"},
		{PROTO_ERR_OBJECT, "bad-object"},
		{PROTO_ERR_LOAD, "load-failed"},
		{PROTO_ERR_TIMEOUT, "timeout"},
		{PROTO_ERR_BUSY, "busy"},
		{PROTO_ERR_INTERNAL, "internal"},
		{PROTO_ERR_NOT_FOUND, "not-found"},
		{PROTO_ERR_EXISTS, "exists"},
		{PROTO_ERR_QUOTA, "quota"},
	};

	assert_int_equal(ARRAY_SIZE(codes), _PROTO_ERR_MAX - 1);
	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		assert_true(codes[i].e > 0);
		assert_non_null(proto_error_code(codes[i].e));
		assert_string_equal(proto_error_code(codes[i].e), codes[i].s);
	}
	assert_null(proto_error_code(0));
	assert_null(proto_error_code(_PROTO_ERR_MAX));
	assert_null(proto_error_code((enum proto_error) - 1));
}

/* reply_error() answers: its return is the code, positive; the body is the wire's error. */
static void test_error_returns_code(void **state)
{
	struct reply r = {};

	assert_int_equal(reply_error(&r, PROTO_ERR_NOT_FOUND, ENOENT, "no %s", "thing"),
			 PROTO_ERR_NOT_FOUND);
	assert_int_equal(reply_error_code(&r), PROTO_ERR_NOT_FOUND);
	assert_string_equal(reply_error_message(&r), "no thing");
	assert_string_equal(body_error_field(r.body, "code"), "not-found");
	assert_string_equal(body_error_field(r.body, "errno"), "2");
	/* The event loop stamps id and version. */
	assert_false(json_object_object_get_ex(r.body, "id", NULL));
	assert_false(json_object_object_get_ex(r.body, PROTO_VERSION_KEY, NULL));
	/* A code the table lacks is no code a client knows: internal. */
	assert_int_equal(reply_error(&r, (enum proto_error)999, EIO, "?"), PROTO_ERR_INTERNAL);
	assert_string_equal(body_error_field(r.body, "code"), "internal");
	reply_done(&r);
}

/* denial_reply() too, with its reasons and denials. */
static void test_denial_returns_code(void **state)
{
	struct reply r = {};
	json_object *e;

	assert_int_equal(denial_reply(&r, PROTO_ERR_QUOTA, EDQUOT, "object", NULL, "limits",
				      "over by %d", 1),
			 PROTO_ERR_QUOTA);
	e = reply_error_obj(&r);
	assert_non_null(e);
	assert_true(json_object_object_get_ex(e, "reasons", NULL));
	assert_true(json_object_object_get_ex(e, "denials", NULL));
	reply_done(&r);
}

/* The mistake the convention prevents: a refusal, then a result. The refusal stands. */
static void test_refusal_then_result(void **state)
{
	struct reply r = {};
	json_object *result = json_object_new_object();
	json_object *body;

	assert_int_equal(reply_error(&r, PROTO_ERR_DENIED, EPERM, "no"), PROTO_ERR_DENIED);
	body = r.body;
	/* Refused: result is put (LeakSanitizer sees it), the code comes back. */
	assert_int_equal(reply_result(&r, result), PROTO_ERR_DENIED);
	assert_ptr_equal(r.body, body);
	assert_string_equal(body_error_field(r.body, "code"), "policy-denied");
	reply_done(&r);
}

/* A refusal, then an fd: closed, never in the reply. */
static void test_refusal_then_fd(void **state)
{
	struct reply r = {};
	int fd = pipe_fd(), idx = -7;

	assert_int_equal(reply_error(&r, PROTO_ERR_DENIED, EPERM, "no"), PROTO_ERR_DENIED);
	assert_int_equal(reply_add_fd(&r, fd, &idx), PROTO_ERR_DENIED);
	assert_false(fd_is_open(fd));
	assert_int_equal(idx, -7); /* untouched: written only on success */
	assert_int_equal(r.n_fds, 0);
	fd = pipe_fd();
	assert_int_equal(reply_add_fd_dup(&r, fd, &idx), PROTO_ERR_DENIED);
	assert_int_equal(r.n_fds, 0);
	assert_true(fd_is_open(fd)); /* the caller's own */
	close(fd);
	reply_done(&r);
}

/* An error replaces what was built: the result goes, its fds are closed. */
static void test_error_after_result(void **state)
{
	struct reply r = {};
	int fd = pipe_fd(), idx = -1;

	assert_int_equal(reply_result(&r, json_object_new_object()), 0);
	assert_int_equal(reply_add_fd(&r, fd, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(reply_error(&r, PROTO_ERR_INTERNAL, EIO, "late"), PROTO_ERR_INTERNAL);
	assert_false(fd_is_open(fd));
	assert_int_equal(r.n_fds, 0);
	assert_string_equal(body_error_field(r.body, "code"), "internal");
	reply_done(&r);
}

/* A check that refuses, as every helper that may answer does. */
static int check_refuses(struct reply *r)
{
	return reply_error(r, PROTO_ERR_DENIED, EPERM, "you may not");
}

/*
 * A handler with the old convention's stray check after a call that may
 * answer (`if (k < 0)`): it goes on after the refusal and tries to hand
 * out a result and an fd. What leaves is still the refusal, without the fd.
 */
static int handler_with_stray_check(struct reply *r, int fd)
{
	int k = check_refuses(r), idx = -1;

	if (k < 0) /* wrong: goes on after a refusal */
		return k;
	k = reply_result(r, json_object_new_object());
	if (k < 0)
		return k;
	k = reply_add_fd(r, fd, &idx);
	if (k < 0)
		return k;
	return 0;
}

static void test_stray_check_still_refuses(void **state)
{
	struct reply r = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 99;
	int fd = pipe_fd();

	assert_int_equal(reply_finish(&r, handler_with_stray_check(&r, fd), &body, &fds, &n_fds),
			 0);
	assert_string_equal(body_error_field(body, "code"), "policy-denied");
	assert_string_equal(body_error_field(body, "message"), "you may not");
	assert_false(json_object_object_get_ex(body, "result", NULL));
	assert_int_equal(n_fds, 0);
	assert_false(fd_is_open(fd));
	json_object_put(body);
}

/* Failures become "internal" in one place, whatever was built. */
static void test_finish_failure(void **state)
{
	struct reply r = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 99;
	int fd = pipe_fd(), idx;

	assert_int_equal(reply_result(&r, json_object_new_object()), 0);
	assert_int_equal(reply_add_fd(&r, fd, &idx), 0);
	assert_int_equal(reply_finish(&r, -EIO, &body, &fds, &n_fds), 0);
	assert_string_equal(body_error_field(body, "code"), "internal");
	assert_string_equal(body_error_field(body, "errno"), "5");
	assert_string_equal(body_error_field(body, "message"),
			    "the broker failed: Input/output error");
	assert_int_equal(n_fds, 0);
	assert_false(fd_is_open(fd));
	json_object_put(body);
}

/* A failure after a refusal is a failure: "internal" (as before the convention changed). */
static void test_finish_failure_after_refusal(void **state)
{
	struct reply r = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 99;

	assert_int_equal(reply_error(&r, PROTO_ERR_DENIED, EPERM, "no"), PROTO_ERR_DENIED);
	assert_int_equal(reply_fail(&r, -ENOMEM), PROTO_ERR_INTERNAL);
	assert_int_equal(reply_finish(&r, PROTO_ERR_INTERNAL, &body, &fds, &n_fds), 0);
	assert_string_equal(body_error_field(body, "code"), "internal");
	json_object_put(body);
}

/*
 * Returns that say nothing never pass as a result: "answered" with no
 * error recorded, or "done" with nothing built, are "internal" errors.
 */
static void test_finish_says_nothing(void **state)
{
	struct reply r = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL, *fds2 = NULL;
	size_t n_fds = 99;

	assert_int_equal(reply_result(&r, json_object_new_object()), 0);
	assert_int_equal(reply_finish(&r, PROTO_ERR_DENIED, &body, &fds, &n_fds), 0);
	assert_string_equal(body_error_field(body, "code"), "internal");
	json_object_put(body);
	body = NULL;
	assert_int_equal(reply_finish(&r, 0, &body, &fds2, &n_fds), 0);
	assert_string_equal(body_error_field(body, "code"), "internal");
	json_object_put(body);
}

/* "Done" after a refusal (a handler that forgot to pass it on): the refusal goes. */
static void test_finish_done_after_refusal(void **state)
{
	struct reply r = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 99;

	assert_int_equal(reply_error(&r, PROTO_ERR_QUOTA, EDQUOT, "over"), PROTO_ERR_QUOTA);
	assert_int_equal(reply_fail(&r, 0), PROTO_ERR_QUOTA);
	assert_int_equal(reply_finish(&r, 0, &body, &fds, &n_fds), 0);
	assert_string_equal(body_error_field(body, "code"), "quota");
	json_object_put(body);
}

/* A result with its fds, as it goes out. */
static void test_finish_result(void **state)
{
	struct reply r = {};
	json_object *body = NULL, *v;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 99;
	int fd = pipe_fd(), idx = -1;

	assert_int_equal(reply_result(&r, json_object_new_object()), 0);
	assert_int_equal(reply_add_fd(&r, fd, &idx), 0);
	assert_int_equal(reply_finish(&r, 0, &body, &fds, &n_fds), 0);
	assert_true(json_object_object_get_ex(body, "result", &v));
	assert_int_equal(n_fds, 1);
	assert_int_equal(fds[0], fd);
	close(fd);
	json_object_put(body);
}

/* Full: the fd is closed, never left behind. */
static void test_too_many_fds(void **state)
{
	struct reply r = {};
	int idx;

	assert_int_equal(reply_result(&r, json_object_new_object()), 0);
	for (size_t i = 0; i < PROTO_MAX_REPLY_FDS; i++)
		assert_int_equal(reply_add_fd(&r, pipe_fd(), &idx), 0);
	{
		int fd = pipe_fd();

		assert_int_equal(reply_add_fd(&r, fd, &idx), -ETOOMANYREFS);
		assert_false(fd_is_open(fd));
	}
	reply_done(&r);
}

/* Checked building: a failed json_object_new_*() (NULL) is a failure, and what's given is taken. */
static void test_json_add(void **state)
{
	_cleanup_json_ json_object *o = json_object_new_object(), *a = json_object_new_array();

	assert_int_equal(json_add(o, "x", json_object_new_int(1)), 0);
	assert_int_equal(json_add(o, "y", NULL), -ENOMEM);
	assert_false(json_object_object_get_ex(o, "y", NULL));
	/* No object: the value is put all the same (LeakSanitizer). */
	assert_int_equal(json_add(NULL, "z", json_object_new_int(2)), -ENOMEM);
	assert_int_equal(json_append(a, json_object_new_int(1)), 0);
	assert_int_equal(json_append(a, NULL), -ENOMEM);
	assert_int_equal(json_append(NULL, json_object_new_int(3)), -ENOMEM);
	assert_int_equal(json_object_array_length(a), 1);
	/* reply_error_add() on a reply that is no error takes the value and says so. */
	{
		struct reply r = {};

		assert_int_equal(reply_error_add(&r, "k", json_object_new_int(1)), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_error_returns_code),
		cmocka_unit_test(test_denial_returns_code),
		cmocka_unit_test(test_refusal_then_result),
		cmocka_unit_test(test_refusal_then_fd),
		cmocka_unit_test(test_error_after_result),
		cmocka_unit_test(test_stray_check_still_refuses),
		cmocka_unit_test(test_finish_failure),
		cmocka_unit_test(test_finish_failure_after_refusal),
		cmocka_unit_test(test_finish_says_nothing),
		cmocka_unit_test(test_finish_done_after_refusal),
		cmocka_unit_test(test_finish_result),
		cmocka_unit_test(test_too_many_fds),
		cmocka_unit_test(test_json_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
