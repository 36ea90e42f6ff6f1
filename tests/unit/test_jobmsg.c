// SPDX-License-Identifier: MIT
/*
 * Unit tests for daemon/shared/jobmsg.c, the typed job between the event loop and a worker:
 * what is encoded decodes the same, and every malformed job (a length off by one, an unknown
 * method or flag, a string too many, a NUL in the params) is refused whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/macro.h"
#include "daemon/shared/jobmsg.h"
#include "proto/method.h"

static char *slices[] = {"system.slice"};
static char *user_slices[] = {"app.slice", "app-x.slice"};
static gid_t groups[] = {10, 100, 4242};

static const struct jobmsg_identity ident = {
	.uid = 1000,
	.gid = 1000,
	.pid = 4321,
	.groups = groups,
	.n_groups = ARRAY_SIZE(groups),
	.unit = {.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service",
		 .unit = "user@1000.service",
		 .user_unit = "x.service",
		 .slices = slices,
		 .n_slices = ARRAY_SIZE(slices),
		 .user_slices = user_slices,
		 .n_user_slices = ARRAY_SIZE(user_slices)},
	.peer_cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/x.service/sub",
};

static const char params[] = "{\"object\":\"x\"}";

/* A job of method with flags, the identity above and params. */
static void encode(unsigned method, uint32_t flags, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *id = NULL;
	size_t id_len = 0;

	assert_int_equal(jobmsg_identity_encode(&ident, &id, &id_len), 0);
	assert_int_equal(
		jobmsg_encode(method, flags, 77, id, id_len, params, strlen(params), ret, ret_len),
		0);
}

static void test_roundtrip(void **state)
{
	_cleanup_free_ char *buf = NULL;
	struct jobmsg j = {};
	size_t len = 0;

	encode(PROTO_METHOD_ATTACH, JOBMSG_F_NETNS | JOBMSG_F_RATE_COUNTED, &buf, &len);
	assert_int_equal(jobmsg_decode(buf, len, &j), 0);
	assert_int_equal(j.method, PROTO_METHOD_ATTACH);
	assert_int_equal(j.flags, JOBMSG_F_NETNS | JOBMSG_F_RATE_COUNTED);
	assert_int_equal(j.id, 77);
	assert_int_equal(j.ident.uid, 1000);
	assert_int_equal(j.ident.gid, 1000);
	assert_int_equal(j.ident.pid, 4321);
	assert_int_equal(j.ident.n_groups, 3);
	assert_memory_equal(j.ident.groups, groups, sizeof(groups));
	assert_string_equal(j.ident.unit.cgroup, ident.unit.cgroup);
	assert_string_equal(j.ident.unit.unit, "user@1000.service");
	assert_string_equal(j.ident.unit.user_unit, "x.service");
	assert_int_equal(j.ident.unit.n_slices, 1);
	assert_string_equal(j.ident.unit.slices[0], "system.slice");
	assert_int_equal(j.ident.unit.n_user_slices, 2);
	assert_string_equal(j.ident.unit.user_slices[1], "app-x.slice");
	assert_string_equal(j.ident.peer_cgroup, ident.peer_cgroup);
	assert_string_equal(j.params, params);
	assert_int_equal(j.params_len, strlen(params));
	jobmsg_done(&j);
}

/* No groups, no unit: what a caller outside any known unit sends. */
static void test_bare_identity(void **state)
{
	struct jobmsg_identity bare = {.uid = 5, .gid = 6, .pid = 7};
	_cleanup_free_ char *id = NULL, *buf = NULL;
	size_t id_len = 0, len = 0;
	struct jobmsg j = {};

	assert_int_equal(jobmsg_identity_encode(&bare, &id, &id_len), 0);
	assert_int_equal(jobmsg_encode(PROTO_METHOD_LIST, 0, -1, id, id_len, "{}", 2, &buf, &len),
			 0);
	assert_int_equal(jobmsg_decode(buf, len, &j), 0);
	assert_int_equal(j.ident.n_groups, 0);
	assert_non_null(j.ident.groups);
	assert_null(j.ident.unit.cgroup);
	assert_null(j.ident.unit.unit);
	assert_null(j.ident.peer_cgroup);
	assert_int_equal(j.ident.unit.n_slices, 0);
	assert_int_equal(j.id, -1);
	jobmsg_done(&j);
}

static void test_sweep(void **state)
{
	struct jobmsg_identity who = {.uid = 1001, .gid = (gid_t)-1};
	_cleanup_free_ char *id = NULL, *buf = NULL, *bad = NULL;
	size_t id_len = 0, len = 0, bad_len = 0;
	struct jobmsg j = {};

	assert_int_equal(jobmsg_identity_encode(&who, &id, &id_len), 0);
	assert_int_equal(jobmsg_encode(JOBMSG_SWEEP, 0, 0, id, id_len, "", 0, &buf, &len), 0);
	assert_int_equal(jobmsg_decode(buf, len, &j), 0);
	assert_int_equal(j.method, JOBMSG_SWEEP);
	assert_int_equal(j.ident.uid, 1001);
	jobmsg_done(&j);
	/* A sweep carries nothing of a client: no params, and no caller's identity in a request. */
	assert_int_equal(jobmsg_encode(JOBMSG_SWEEP, 0, 0, id, id_len, "{}", 2, &bad, &bad_len), 0);
	assert_int_equal(jobmsg_decode(bad, bad_len, &j), -EBADMSG);
	free(bad);
	bad = NULL;
	assert_int_equal(
		jobmsg_encode(PROTO_METHOD_LIST, 0, 0, id, id_len, "{}", 2, &bad, &bad_len), 0);
	assert_int_equal(jobmsg_decode(bad, bad_len, &j), -EBADMSG);
}

static void test_encode_refuses(void **state)
{
	_cleanup_free_ char *id = NULL;
	char *buf = NULL;
	size_t id_len = 0, len = 0;
	struct jobmsg_identity many = ident;
	struct jobmsg_identity empty = {.uid = 1, .gid = 1, .unit = {.unit = ""}};

	assert_int_equal(jobmsg_identity_encode(&ident, &id, &id_len), 0);
	/* hello runs in the event loop, never in a worker; a method past the table is none. */
	assert_int_equal(jobmsg_encode(PROTO_METHOD_HELLO, 0, 0, id, id_len, "{}", 2, &buf, &len),
			 -EINVAL);
	assert_int_equal(jobmsg_encode(PROTO_METHOD_COUNT, 0, 0, id, id_len, "{}", 2, &buf, &len),
			 -EINVAL);
	assert_int_equal(
		jobmsg_encode(PROTO_METHOD_LIST, 1u << 7, 0, id, id_len, "{}", 2, &buf, &len),
		-EINVAL);
	assert_null(buf);
	many.n_groups = JOBMSG_MAX_GROUPS + 1;
	assert_int_equal(jobmsg_identity_encode(&many, &buf, &len), -E2BIG);
	assert_int_equal(jobmsg_identity_encode(&empty, &buf, &len), -EINVAL);
	assert_null(buf);
}

/* Decode a copy of len bytes of buf, with byte off set to v (if off < len): the result. */
static int decode_patched(const char *buf, size_t len, size_t off, char v)
{
	char *copy = malloc(len ? len : 1);
	struct jobmsg j = {};
	int k;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	if (off < len)
		copy[off] = v;
	k = jobmsg_decode(copy, len, &j);
	if (k == 0)
		jobmsg_done(&j);
	free(copy);
	return k;
}

static void test_decode_strict(void **state)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, ident_at = sizeof(struct jobmsg_header), params_at;
	struct jobmsg_header h;
	uint32_t v;

	encode(PROTO_METHOD_SHOW, 0, &buf, &len);
	memcpy(&h, buf, sizeof(h));
	params_at = len - 1 - h.params_len;
	assert_int_equal(decode_patched(buf, len, len, 0), 0);
	/* Every shorter message is refused, never read past. */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(decode_patched(buf, n, len, 0), -EBADMSG);
	/* Magic, version, method, flags, reserved. */
	assert_int_equal(decode_patched(buf, len, 0, 'x'), -EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, version), 2),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, method),
					PROTO_METHOD_HELLO),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, method),
					PROTO_METHOD_COUNT),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, flags), 4),
			 -EBADMSG);
	/* The netns flag only on an attach. */
	assert_int_equal(
		decode_patched(buf, len, offsetof(struct jobmsg_header, flags), JOBMSG_F_NETNS),
		-EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, reserved), 1),
			 -EBADMSG);
	/* Lengths that do not add up. */
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, ident_len),
					(char)(h.ident_len + 1)),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len, offsetof(struct jobmsg_header, params_len),
					(char)(h.params_len - 1)),
			 -EBADMSG);
	/* The identity: uid -1, a negative pid, too many groups, unknown unit bits. */
	{
		char *copy = malloc(len);
		struct jobmsg j = {};

		assert_non_null(copy);
		memcpy(copy, buf, len);
		v = (uint32_t)-1;
		memcpy(copy + ident_at + offsetof(struct jobmsg_ident_header, uid), &v, sizeof(v));
		assert_int_equal(jobmsg_decode(copy, len, &j), -EBADMSG);
		free(copy);
	}
	assert_int_equal(decode_patched(buf, len,
					ident_at + offsetof(struct jobmsg_ident_header, pid) + 3,
					(char)0x80),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len,
					ident_at + offsetof(struct jobmsg_ident_header, n_groups),
					4),
			 -EBADMSG);
	assert_int_equal(
		decode_patched(buf, len,
			       ident_at + offsetof(struct jobmsg_ident_header, unit_present), 0x1f),
		-EBADMSG);
	/* A string more or less than the part holds. */
	assert_int_equal(decode_patched(buf, len,
					ident_at + offsetof(struct jobmsg_ident_header, n_slices),
					2),
			 -EBADMSG);
	assert_int_equal(decode_patched(buf, len,
					ident_at + offsetof(struct jobmsg_ident_header, n_slices),
					0),
			 -EBADMSG);
	/* An empty string (the unit's first byte a NUL). */
	assert_int_equal(
		decode_patched(buf, len,
			       ident_at + sizeof(struct jobmsg_ident_header) + sizeof(groups),
			       '\0'),
		-EBADMSG);
	/* A NUL inside the params, or none after them. */
	assert_int_equal(decode_patched(buf, len, params_at + 1, '\0'), -EBADMSG);
	assert_int_equal(decode_patched(buf, len, len - 1, '}'), -EBADMSG);
}

static void test_identity_json(void **state)
{
	json_object *o = jobmsg_identity_to_json(&ident), *v;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "uid", &v));
	assert_int_equal(json_object_get_int64(v), 1000);
	assert_true(json_object_object_get_ex(o, "pid", &v));
	assert_int_equal(json_object_get_int64(v), 4321);
	assert_true(json_object_object_get_ex(o, "groups", &v));
	assert_int_equal(json_object_array_length(v), 3);
	assert_true(json_object_object_get_ex(o, "user_unit", &v));
	assert_string_equal(json_object_get_string(v), "x.service");
	assert_true(json_object_object_get_ex(o, "user_slices", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_true(json_object_object_get_ex(o, "peer_cgroup", &v));
	assert_string_equal(json_object_get_string(v), ident.peer_cgroup);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_bare_identity),
		cmocka_unit_test(test_sweep),	      cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_decode_strict), cmocka_unit_test(test_identity_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
