// SPDX-License-Identifier: MIT
/*
 * Unit tests for libbpfbroker's requests against a fake broker on a
 * socketpair: every call sends what the method table (proto/method.h) says
 * its method takes, decodable by the broker's own decoder, and the table
 * bounds the fds both ways (too many to send refused before sending, too
 * many in a reply refused and closed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/libbpfbroker-internal.h"
#include "common/macro.h"
#include "proto/method.h"
#include "proto/proto.h"

struct fake {
	struct bpfbroker *b;
	int peer; /* the broker's end */
	int64_t id; /* of the next request */
};

static int fake_setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	int sv[2];

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	f->b = calloc(1, sizeof(*f->b));
	assert_non_null(f->b);
	f->b->fd = sv[0];
	f->b->next_id = 1;
	f->peer = sv[1];
	f->id = 1;
	*state = f;
	return 0;
}

static int fake_teardown(void **state)
{
	struct fake *f = *state;

	bpfbroker_close(f->b);
	close(f->peer);
	free(f);
	return 0;
}

static size_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Queue the broker's reply to the next request: result (JSON text) and n_fds fds. */
static void fake_reply(struct fake *f, const char *result, size_t n_fds)
{
	char buf[1024];
	int fds[8];

	assert_true(n_fds <= ARRAY_SIZE(fds));
	snprintf(buf, sizeof(buf), "{\"bpfbroker\":1,\"id\":%lld,\"result\":%s}",
		 (long long)f->id++, result);
	for (size_t i = 0; i < n_fds; i++)
		assert_true((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	assert_int_equal(proto_send_raw(f->peer, buf, strlen(buf), fds, n_fds), 0);
	close_many(fds, n_fds);
}

/* Params as the broker understands them: decoded by the table, and encoded again. */
static json_object *as_decoded(const struct proto_method *m, json_object *params, size_t n_fds)
{
	_cleanup_free_ char *error = NULL;
	void *p = calloc(1, m->params_size ?: 1);
	json_object *o;
	int k;

	assert_non_null(p);
	k = proto_method_decode(m, params, n_fds, p, &error);
	if (k < 0)
		fail_msg("%s: %s", m->name, error ?: strerror(-k));
	o = proto_method_encode(m, p);
	assert_non_null(o);
	proto_method_done(m, p);
	free(p);
	return o;
}

/*
 * The request the library sent: method, n_fds fds, and params that mean
 * what expected (JSON text; NULL: no params at all) means to the broker.
 */
static void fake_expect(struct fake *f, const char *method, const char *expected, size_t n_fds)
{
	const struct proto_method *m = proto_method_find(method);
	struct proto_msg msg = {};
	json_object *v, *params = NULL, *want, *got, *sent;

	assert_non_null(m);
	assert_int_equal(
		proto_recv(f->peer, PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &msg, NULL), 1);
	assert_true(json_object_object_get_ex(msg.json, "method", &v));
	assert_string_equal(json_object_get_string(v), method);
	assert_int_equal(msg.n_fds, n_fds);
	json_object_object_get_ex(msg.json, "params", &params);
	if (!expected) {
		assert_null(params);
		proto_msg_done(&msg);
		return;
	}
	assert_non_null(params);
	want = json_tokener_parse(expected);
	assert_non_null(want);
	got = as_decoded(m, params, n_fds);
	sent = as_decoded(m, want, n_fds);
	if (!json_object_equal(got, sent))
		fail_msg("%s: sent %s, expected %s", method,
			 json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN), expected);
	json_object_put(got);
	json_object_put(sent);
	json_object_put(want);
	proto_msg_done(&msg);
}

static void test_named_requests(void **state)
{
	struct fake *f = *state;
	uint8_t key[4] = {1, 2, 3, 4};
	uint32_t *ids = NULL;
	size_t n_ids = 0;
	char *json = NULL;
	struct bpfbroker_result *res = NULL;
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(null_fd >= 0);
	fake_reply(f, "{}", 0);
	assert_int_equal(bpfbroker_unload(f->b, "obj", NULL), 0);
	fake_expect(f, "unload", "{\"object\":\"obj\"}", 0);

	fake_reply(f, "{\"object\":{}}", 0);
	assert_int_equal(bpfbroker_show(f->b, "alice/obj", &json, NULL), 0);
	fake_expect(f, "show", "{\"object\":\"alice/obj\"}", 0);
	free(json);

	fake_reply(f, "{\"programs\":[],\"maps\":[]}", 3);
	assert_int_equal(bpfbroker_fds(f->b, "obj", &res, NULL), 0);
	fake_expect(f, "fds", "{\"object\":\"obj\"}", 0);
	bpfbroker_result_free(res);

	fake_reply(f, "{\"uid\":1000}", 0);
	assert_int_equal(bpfbroker_policy(f->b, &json, NULL), 0);
	fake_expect(f, "policy", NULL, 0);
	free(json);

	/* Two pages: the second starts where the first said. */
	fake_reply(f, "{\"objects\":[{\"name\":\"a\"}],\"next\":\"1000/a\"}", 0);
	fake_reply(f, "{\"objects\":[{\"name\":\"b\"}]}", 0);
	assert_int_equal(bpfbroker_list(f->b,
					&(struct bpfbroker_list_opts){
						.sz = sizeof(struct bpfbroker_list_opts),
						.user = "alice",
						.shared = true},
					&json, NULL),
			 0);
	fake_expect(f, "list", "{\"user\":\"alice\",\"shared\":true}", 0);
	fake_expect(f, "list", "{\"user\":\"alice\",\"shared\":true,\"cursor\":\"1000/a\"}", 0);
	assert_non_null(strstr(json, "\"b\""));
	free(json);

	/* A broker going back (1000/b, then 1000/a) would have the caller list for ever. */
	fake_reply(f, "{\"objects\":[],\"next\":\"1000/b\"}", 0);
	fake_reply(f, "{\"objects\":[],\"next\":\"1000/a\"}", 0);
	json = NULL;
	assert_int_equal(bpfbroker_list(f->b, NULL, &json, NULL), -EPROTO);
	assert_null(json);
	fake_expect(f, "list", "{}", 0);
	fake_expect(f, "list", "{\"cursor\":\"1000/b\"}", 0);

	fake_reply(f, "{}", 0);
	assert_int_equal(
		bpfbroker_map_insert(f->b, "obj", "outer", key, sizeof(key), null_fd, NULL), 0);
	fake_expect(f, "map_insert",
		    "{\"object\":\"obj\",\"map\":\"outer\",\"key\":\"01020304\",\"fd\":0}", 1);

	fake_reply(f, "{\"detached\":[9]}", 0);
	assert_int_equal(bpfbroker_detach(f->b, "obj", "prog", 9, &ids, &n_ids, NULL), 0);
	fake_expect(f, "detach", "{\"object\":\"obj\",\"program\":\"prog\",\"link\":9}", 0);
	assert_int_equal(n_ids, 1);
	free(ids);

	fake_reply(f, "{\"detached\":[]}", 0);
	assert_int_equal(bpfbroker_detach(f->b, "obj", "prog", 0, NULL, NULL, NULL), 0);
	fake_expect(f, "detach", "{\"object\":\"obj\",\"program\":\"prog\"}", 0);
	close(null_fd);
}

/* A pinned attach by o: the request sent, with n_fds fds. */
static void attach_pinned(struct fake *f, const struct bpfbroker_attach_opts *o,
			  const char *expected, size_t n_fds)
{
	uint32_t link_id = 0;

	fake_reply(f, "{\"link\":{\"id\":8,\"pinned\":true}}", 0);
	assert_int_equal(bpfbroker_attach(f->b, o, &link_id, NULL, NULL), 0);
	fake_expect(f, "attach", expected, n_fds);
	assert_int_equal(link_id, 8);
}

static void test_attach_requests(void **state)
{
	struct fake *f = *state;
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC), link_fd = -1;
	uint32_t link_id = 0;
	struct bpfbroker_attach_opts o = {.sz = sizeof(o),
					  .object = "obj",
					  .program = "prog",
					  .target_type = "cgroup",
					  .cgroup_fd = null_fd,
					  .attach_type = "cgroup_inet_egress",
					  .binary_fd = -1,
					  .pidfd = -1};

	assert_true(null_fd >= 0);
	fake_reply(f, "{\"link\":{\"id\":7,\"fd\":0}}", 1);
	assert_int_equal(bpfbroker_attach(f->b, &o, &link_id, &link_fd, NULL), 0);
	fake_expect(f, "attach",
		    "{\"object\":\"obj\",\"program\":\"prog\",\"pin\":false,\"target\":{\"type\":"
		    "\"cgroup\",\"fd\":0,\"attach_type\":\"cgroup_inet_egress\"}}",
		    1);
	assert_int_equal(link_id, 7);
	assert_true(link_fd >= 0);
	close(link_fd);

	/* program_id (1.2): sent when not 0; over UINT32_MAX refused before anything is sent. A
	 * 1.1 caller's sz ends before it, so whatever lies there is not read. */
	o.program_id = 42;
	fake_reply(f, "{\"link\":{\"id\":7,\"fd\":0}}", 1);
	assert_int_equal(bpfbroker_attach(f->b, &o, &link_id, &link_fd, NULL), 0);
	fake_expect(
		f, "attach",
		"{\"object\":\"obj\",\"program\":\"prog\",\"pin\":false,\"target\":{\"type\":"
		"\"cgroup\",\"fd\":0,\"attach_type\":\"cgroup_inet_egress\"},\"program_id\":42}",
		1);
	close(link_fd);
	o.program_id = (uint64_t)UINT32_MAX + 1;
	assert_int_equal(bpfbroker_attach(f->b, &o, &link_id, &link_fd, NULL), -EINVAL);
	o.program_id = 42;
	o.sz = offsetof(struct bpfbroker_attach_opts, program_id);
	fake_reply(f, "{\"link\":{\"id\":7,\"fd\":0}}", 1);
	assert_int_equal(bpfbroker_attach(f->b, &o, &link_id, &link_fd, NULL), 0);
	fake_expect(f, "attach",
		    "{\"object\":\"obj\",\"program\":\"prog\",\"pin\":false,\"target\":{\"type\":"
		    "\"cgroup\",\"fd\":0,\"attach_type\":\"cgroup_inet_egress\"}}",
		    1);
	close(link_fd);
	o.sz = sizeof(o);
	o.program_id = 0;

	/* The same opts, for other targets: only what each target takes is sent. */
	o.target_type = "tracepoint";
	o.attach_type = NULL;
	o.name = "sched:sched_process_fork";
	o.pin = true;
	attach_pinned(f, &o,
		      "{\"object\":\"obj\",\"program\":\"prog\",\"pin\":true,\"target\":{\"type\":"
		      "\"tracepoint\",\"name\":\"sched:sched_process_fork\"}}",
		      0);

	/* A uprobe at file offset 0: the offset is sent although it is 0. */
	o.target_type = "uprobe";
	o.name = NULL;
	o.binary_fd = o.pidfd = null_fd;
	o.retprobe = true;
	o.semaphore_offset = 4096;
	attach_pinned(f, &o,
		      "{\"object\":\"obj\",\"program\":\"prog\",\"pin\":true,\"target\":{\"type\":"
		      "\"uprobe\",\"fd\":0,\"pidfd\":1,\"offset\":0,\"retprobe\":true,"
		      "\"semaphore_offset\":4096}}",
		      2);

	/* By symbol: no offset unless one is given. */
	o.name = "main";
	o.retprobe = false;
	o.semaphore = "sem";
	o.semaphore_offset = 0;
	attach_pinned(f, &o,
		      "{\"object\":\"obj\",\"program\":\"prog\",\"pin\":true,\"target\":{\"type\":"
		      "\"uprobe\",\"fd\":0,\"pidfd\":1,\"name\":\"main\",\"semaphore\":\"sem\"}}",
		      2);
	close(null_fd);
}

static void test_run_and_load_requests(void **state)
{
	struct fake *f = *state;
	uint8_t data[2] = {0xaa, 0xbb};
	struct bpfbroker_test_run_opts run = {
		.sz = sizeof(run), .object = "obj", .program = "prog", .data_in = data};
	struct bpfbroker_load_opts load = {.sz = sizeof(load), .check_only = true, .name = "obj"};
	struct bpfbroker_insns_opts insns = {
		.sz = sizeof(insns), .prog_type = "socket_filter", .license = "GPL"};
	struct bpfbroker_test_run_result *r = NULL;
	struct bpfbroker_result *res = NULL;
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(null_fd >= 0);
	run.data_in_size = sizeof(data);
	run.repeat = 3;
	fake_reply(f, "{\"retval\":1,\"duration_ns\":5,\"data_out\":\"cc\"}", 0);
	assert_int_equal(bpfbroker_test_run(f->b, &run, &r, NULL), 0);
	fake_expect(f, "test_run",
		    "{\"object\":\"obj\",\"program\":\"prog\",\"data_in\":\"aabb\",\"repeat\":3}",
		    0);
	assert_int_equal(r->retval, 1);
	assert_int_equal(r->data_out_size, 1);
	bpfbroker_test_run_result_free(r);

	/* No data: "data_in" is sent empty, as it always was. */
	run.data_in_size = 0;
	run.repeat = 0;
	fake_reply(f, "{\"retval\":0,\"duration_ns\":5}", 0);
	assert_int_equal(bpfbroker_test_run(f->b, &run, &r, NULL), 0);
	fake_expect(f, "test_run", "{\"object\":\"obj\",\"program\":\"prog\",\"data_in\":\"\"}", 0);
	bpfbroker_test_run_result_free(r);

	fake_reply(f, "{\"allowed\":true,\"programs\":[],\"maps\":[]}", 1);
	assert_int_equal(bpfbroker_load_fd(f->b, null_fd, &load, &res, NULL), 0);
	fake_expect(f, "load", "{\"object_fd\":0,\"check_only\":true,\"name\":\"obj\"}", 1);
	bpfbroker_result_free(res);

	/* A system object: its name, no fd; libbpf's object named after it. */
	fake_reply(f, "{\"allowed\":true,\"programs\":[],\"maps\":[]}", 0);
	assert_int_equal(bpfbroker_load_system(f->b, "cgroup-count", &load, &res, NULL), 0);
	fake_expect(f, "load",
		    "{\"system_object\":\"cgroup-count\",\"object_name\":\"cgroup-count\","
		    "\"check_only\":true,\"name\":\"obj\"}",
		    0);
	bpfbroker_result_free(res);

	fake_reply(f, "{\"allowed\":true,\"programs\":[],\"maps\":[]}", 1);
	assert_int_equal(bpfbroker_load_insns_fd(f->b, null_fd, &insns, &res, NULL), 0);
	fake_expect(f, "load_insns",
		    "{\"insns_fd\":0,\"type\":\"socket_filter\",\"license\":\"GPL\"}", 1);
	bpfbroker_result_free(res);
	close(null_fd);
}

static void test_map_requests(void **state)
{
	struct fake *f = *state;
	struct bpfbroker_map_handle *h = NULL;
	uint8_t key[4] = {1, 0, 0, 0}, value[8] = {1, 2, 3, 4, 5, 6, 7, 8}, keys[8], values[16];
	uint8_t next[4];
	uint32_t n = 0;
	bool done = false;
	void *btf = NULL;
	size_t btf_size = 0;

	assert_int_equal(bpfbroker_set_map_path(f->b, BPFBROKER_MAP_PATH_PROXY), 0);
	fake_reply(f,
		   "{\"type\":\"hash\",\"access\":\"rw\",\"key_size\":4,\"value_size\":8,"
		   "\"max_entries\":16,\"value_bytes\":8,\"n_cpus\":1,\"btf_key_type_id\":0,"
		   "\"btf_value_type_id\":0}",
		   0);
	assert_int_equal(bpfbroker_map_open(f->b, "alice/obj", "m", &h, NULL), 0);
	fake_expect(f, "map", "{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"info\"}", 0);

	fake_reply(f, "{\"found\":true,\"value\":\"0102030405060708\"}", 0);
	assert_int_equal(bpfbroker_map_lookup_elem(h, key, values, NULL), 0);
	fake_expect(
		f, "map",
		"{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"lookup\",\"key\":\"01000000\"}",
		0);

	fake_reply(f, "{}", 0);
	assert_int_equal(bpfbroker_map_update_elem(h, key, value, 1, NULL), 0);
	fake_expect(
		f, "map",
		"{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"update\",\"key\":\"01000000\","
		"\"value\":\"0102030405060708\",\"flags\":1}",
		0);

	fake_reply(f, "{\"deleted\":true}", 0);
	assert_int_equal(bpfbroker_map_delete_elem(h, key, NULL), 0);
	fake_expect(
		f, "map",
		"{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"delete\",\"key\":\"01000000\"}",
		0);

	fake_reply(f, "{\"next_key\":null}", 0);
	assert_int_equal(bpfbroker_map_get_next_key(h, NULL, next, NULL), -ENOENT);
	fake_expect(f, "map", "{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"next_key\"}", 0);

	fake_reply(f, "{\"entries\":[],\"done\":true}", 0);
	assert_int_equal(bpfbroker_map_dump(h, key, keys, values, 2, &n, next, &done, NULL), 0);
	fake_expect(
		f, "map",
		"{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"dump\",\"cursor\":\"01000000\","
		"\"count\":2}",
		0);
	assert_true(done);

	fake_reply(f, "{\"btf\":\"9feb\"}", 0);
	assert_int_equal(bpfbroker_map_btf(h, &btf, &btf_size, NULL), 0);
	fake_expect(f, "map", "{\"object\":\"alice/obj\",\"map\":\"m\",\"op\":\"btf\"}", 0);
	assert_int_equal(btf_size, 2);
	free(btf);
	bpfbroker_map_close(h);
}

/* A reply with more fds than its method hands out is refused, and none of them stays open. */
static void test_reply_fds_bounded(void **state)
{
	struct fake *f = *state;
	int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC), link_fd = -1;
	struct bpfbroker_attach_opts o = {.sz = sizeof(o),
					  .object = "obj",
					  .program = "prog",
					  .target_type = "cgroup",
					  .cgroup_fd = null_fd,
					  .binary_fd = -1,
					  .pidfd = -1};
	size_t before;

	assert_true(null_fd >= 0);
	before = open_fds();
	fake_reply(f, "{}", 1);
	assert_int_equal(bpfbroker_unload(f->b, "obj", NULL), -ETOOMANYREFS);
	fake_expect(f, "unload", "{\"object\":\"obj\"}", 0);
	assert_int_equal(open_fds(), before);

	fake_reply(f, "{\"link\":{\"id\":7,\"fd\":1}}", 2);
	assert_int_equal(bpfbroker_attach(f->b, &o, NULL, &link_fd, NULL), -ETOOMANYREFS);
	fake_expect(f, "attach",
		    "{\"object\":\"obj\",\"program\":\"prog\",\"target\":{\"type\":\"cgroup\","
		    "\"fd\":0}}",
		    1);
	assert_int_equal(link_fd, -1);
	assert_int_equal(open_fds(), before);
	close(null_fd);
}

/* A request outside its method's fds_min..fds_max never leaves the library. */
static void test_request_fds_bounded(void **state)
{
	struct fake *f = *state;
	struct proto_object_params object = {.object = (char *)"obj"};
	struct proto_load_request load = {.object_fd = 0};
	struct proto_attach_params attach = {.program = (char *)"prog",
					     .target = {.type = (char *)"cgroup", .fd = 0},
					     .object = (char *)"obj"};
	struct proto_msg m = {};
	json_object *result = NULL;
	int fds[3];
	char byte;

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		assert_true((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	assert_int_equal(
		bpfbroker_request(f->b, PROTO_METHOD_UNLOAD, &object, fds, 1, &m, &result, NULL),
		-EINVAL);
	assert_int_equal(
		bpfbroker_request(f->b, PROTO_METHOD_LOAD, &load, NULL, 0, &m, &result, NULL),
		-EINVAL);
	assert_int_equal(
		bpfbroker_request(f->b, PROTO_METHOD_LOAD, &load, fds, 2, &m, &result, NULL),
		-EINVAL);
	/* A system object's load carries no fd. */
	load.system_object = (char *)"obj";
	assert_int_equal(
		bpfbroker_request(f->b, PROTO_METHOD_LOAD, &load, fds, 1, &m, &result, NULL),
		-EINVAL);
	load.system_object = NULL;
	assert_int_equal(
		bpfbroker_request(f->b, PROTO_METHOD_ATTACH, &attach, fds, 3, &m, &result, NULL),
		-EINVAL);
	/* Nothing was sent, and the caller's fds are still its own. */
	assert_int_equal(recv(f->peer, &byte, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		assert_int_equal(close(fds[i]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_named_requests, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_attach_requests, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_run_and_load_requests, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_map_requests, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_reply_fds_bounded, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_request_fds_bounded, fake_setup,
						fake_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
