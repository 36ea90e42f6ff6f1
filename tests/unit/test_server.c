// SPDX-License-Identifier: MIT
/*
 * Unit tests for the event loop's connection side (daemon/loop/server.c, conn*.c, dispatch.c,
 * jobs.c), run without root (as root, the test first becomes nobody) on a socket in a
 * temporary directory, with the worker pool replaced by the test double below: no root, no
 * worker. A client connects and sends requests as bpfbroker's clients do; what reaches the
 * "pool" is the typed job (daemon/shared/jobmsg.h) as a worker would decode it.
 *
 * Without capabilities SIOCGSKNS (CAP_NET_ADMIN) fails, so an attach's job goes without the
 * caller's network namespace: test_attach_without_netns checks exactly that, and says it
 * skipped the namespace itself (integration-broker's attach tests cover it, as root).
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/macro.h"
#include "daemon/loop/server.h"
#include "daemon/shared/jobmsg.h"
#include "policy/policy.h"
#include "proto/method.h"
#include "proto/proto.h"

/* ---- The worker pool's test double: records what the event loop hands it. ---- */

struct worker_job {
	char *msg;
	size_t len;
	int *fds;
	size_t n_fds;
	struct worker_request req;
	worker_done_fn done;
	void *userdata;
	bool orphaned;
};

static struct {
	struct worker_job *last; /* the job handed over last, still ours */
	unsigned n_submitted, n_orphaned, n_closed;
	uint64_t closed_conn;
} pool;

static void stub_job_free(struct worker_job *j)
{
	if (!j)
		return;
	close_many(j->fds, j->n_fds);
	free(j->fds);
	free(j->msg);
	free(j);
}

int worker_pool_submit(struct worker_pool *p, const struct worker_request *req, char *msg,
		       size_t len, int *fds, size_t n_fds, worker_done_fn done, void *userdata,
		       struct worker_job **ret)
{
	struct worker_job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	*j = (struct worker_job){.msg = msg,
				 .len = len,
				 .fds = fds,
				 .n_fds = n_fds,
				 .req = *req,
				 .done = done,
				 .userdata = userdata};
	/* Strings are the caller's: only what the test reads. */
	j->req.event = j->req.object = NULL;
	stub_job_free(pool.last);
	pool.last = j;
	pool.n_submitted++;
	*ret = j;
	return 0;
}

void worker_job_orphan(struct worker_job *j)
{
	if (!j)
		return;
	assert_ptr_equal(j, pool.last);
	j->orphaned = true;
	pool.n_orphaned++;
}

void worker_pool_conn_closed(struct worker_pool *p, uint64_t conn)
{
	pool.n_closed++;
	pool.closed_conn = conn;
}

/* The worker's answer to the last job, relayed as the pool would. */
static void pool_reply(const char *text)
{
	struct worker_job *j = pool.last;
	struct proto_raw raw = {.buf = (char *)text, .len = strlen(text)};

	assert_non_null(j);
	assert_false(j->orphaned);
	j->done(j->userdata, &raw, 0);
}

/* ---- The server under test, and a client. ---- */

static char dir[64], path[128];
static sd_event *event;
static struct server *server;
static struct policy *policy;
static const struct policy *policy_ptr;

static const struct server_config config_base = {
	.max_connections = 16,
	.max_connections_per_uid = 3,
	.job_timeout_usec = 10 * 1000000ULL,
	.idle_timeout_usec = 0,
	.policy = &policy_ptr,
};

static int setup(void **state)
{
	char json[256];
	char *error = NULL;

	memset(&pool, 0, sizeof(pool));
	snprintf(dir, sizeof(dir), "/tmp/test-server-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/sock", dir);
	/* The caller's rule: two loads or attaches a minute. */
	snprintf(json, sizeof(json),
		 "{\"rules\": [{\"match\": {\"uids\": [\"%u\"]}, "
		 "\"limits\": {\"max_loads_per_minute\": 2}}]}",
		 (unsigned)getuid());
	policy = policy_new();
	if (!policy || policy_load_string(policy, "t.json", json, NULL, NULL, &error) < 0) {
		fprintf(stderr, "policy: %s\n", error ? error : "?");
		free(error);
		return -1;
	}
	policy_ptr = policy;
	if (sd_event_new(&event) < 0 || server_new(event, NULL, &config_base, &server) < 0 ||
	    server_listen_path(server, path) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	server = server_free(server);
	stub_job_free(pool.last);
	pool.last = NULL;
	event = sd_event_unref(event);
	policy = policy_free(policy);
	unlink(path);
	rmdir(dir);
	return 0;
}

static int client_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	strcpy(sa.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Run the loop until fd has something to read (or hung up), or until cond holds. */
static void pump_until(int fd, const unsigned *counter, unsigned want)
{
	for (int i = 0; i < 200; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (counter ? *counter >= want : poll(&p, 1, 0) > 0)
			return;
		assert_true(sd_event_run(event, 10000) >= 0);
	}
	fail_msg("the event loop did not get there");
}

static void send_text(int fd, const char *text, const int *fds, size_t n_fds)
{
	assert_int_equal(proto_send_raw(fd, text, strlen(text), fds, n_fds), 0);
}

/* The next message to fd, parsed. */
static json_object *recv_reply(int fd)
{
	struct proto_msg m = {};

	pump_until(fd, NULL, 0);
	assert_int_equal(proto_recv(fd, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &m, NULL), 1);
	{
		json_object *o = json_object_get(m.json);

		proto_msg_done(&m);
		return o;
	}
}

/* The reply's error code ("unknown-method", ...), or NULL for a result. */
static const char *reply_code(json_object *reply)
{
	json_object *e, *c;

	if (!json_object_object_get_ex(reply, "error", &e))
		return NULL;
	assert_true(json_object_object_get_ex(e, "code", &c));
	return json_object_get_string(c);
}

static int64_t reply_id(json_object *reply)
{
	json_object *v;

	assert_true(json_object_object_get_ex(reply, "id", &v));
	return json_object_get_int64(v);
}

static void expect_error(int fd, int64_t id, enum proto_error code)
{
	json_object *r = recv_reply(fd);

	assert_non_null(reply_code(r));
	assert_string_equal(reply_code(r), proto_error_code(code));
	assert_int_equal(reply_id(r), id);
	json_object_put(r);
}

/* ---- The tests. ---- */

static void test_hello(void **state)
{
	int fd = client_connect();
	json_object *r, *result, *v, *ident;
	gid_t groups[64];
	int n = getgroups(ARRAY_SIZE(groups), groups);

	send_text(fd, "{\"bpfbroker\":1,\"id\":3,\"method\":\"hello\"}", NULL, 0);
	r = recv_reply(fd);
	assert_null(reply_code(r));
	assert_int_equal(reply_id(r), 3);
	assert_true(json_object_object_get_ex(r, "result", &result));
	assert_true(json_object_object_get_ex(result, "methods", &v));
	assert_int_equal(json_object_array_length(v), PROTO_METHOD_COUNT);
	/* Who the kernel said connected, as taken at accept. */
	assert_true(json_object_object_get_ex(result, "identity", &ident));
	assert_true(json_object_object_get_ex(ident, "uid", &v));
	assert_int_equal(json_object_get_int64(v), getuid());
	assert_true(json_object_object_get_ex(ident, "gid", &v));
	assert_int_equal(json_object_get_int64(v), getgid());
	assert_true(json_object_object_get_ex(ident, "pid", &v));
	assert_int_equal(json_object_get_int64(v), getpid());
	assert_true(json_object_object_get_ex(ident, "groups", &v));
	assert_true(n >= 0);
	assert_int_equal(json_object_array_length(v), n);
	json_object_put(r);
	/* hello costs no worker. */
	assert_int_equal(pool.n_submitted, 0);
	close(fd);
}

static void test_unknown_method(void **state)
{
	int fd = client_connect();

	send_text(fd, "{\"bpfbroker\":1,\"id\":4,\"method\":\"frobnicate\"}", NULL, 0);
	expect_error(fd, 4, PROTO_ERR_METHOD);
	/* The connection stays: the next request is answered. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":5,\"method\":\"hello\"}", NULL, 0);
	json_object_put(recv_reply(fd));
	assert_int_equal(pool.n_submitted, 0);
	close(fd);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"not json",
		"[1,2]",
		"{\"bpfbroker\":1,\"id\":1}",
		"{\"bpfbroker\":1,\"id\":\"x\",\"method\":\"hello\"}",
		"{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":[]}",
	};
	_cleanup_free_ char *big = malloc(PROTO_MAX_REQUEST_BYTES + 16);
	int fd = client_connect();

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		json_object *r;

		send_text(fd, bad[i], NULL, 0);
		r = recv_reply(fd);
		assert_non_null(reply_code(r));
		assert_string_equal(reply_code(r), proto_error_code(PROTO_ERR_INVALID));
		json_object_put(r);
	}
	/* A version the broker does not speak. */
	send_text(fd, "{\"bpfbroker\":99,\"id\":2,\"method\":\"hello\"}", NULL, 0);
	expect_error(fd, 0, PROTO_ERR_VERSION);
	/* Over the size limit: too-large, and the stream is not desynchronized. */
	assert_non_null(big);
	memset(big, ' ', PROTO_MAX_REQUEST_BYTES + 8);
	big[PROTO_MAX_REQUEST_BYTES + 8] = '\0';
	send_text(fd, big, NULL, 0);
	expect_error(fd, 0, PROTO_ERR_TOO_LARGE);
	send_text(fd, "{\"bpfbroker\":1,\"id\":6,\"method\":\"hello\"}", NULL, 0);
	json_object_put(recv_reply(fd));
	assert_int_equal(pool.n_submitted, 0);
	close(fd);
}

static void test_too_many_fds(void **state)
{
	int fd = client_connect(), fds[PROTO_MAX_REQUEST_FDS + 1];

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = STDERR_FILENO;
	/* list takes none; hello none; load exactly one. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":7,\"method\":\"list\"}", fds, 1);
	expect_error(fd, 7, PROTO_ERR_FDS);
	send_text(fd, "{\"bpfbroker\":1,\"id\":8,\"method\":\"hello\"}", fds, 2);
	expect_error(fd, 8, PROTO_ERR_FDS);
	send_text(fd, "{\"bpfbroker\":1,\"id\":9,\"method\":\"load\",\"params\":{\"object_fd\":0}}",
		  fds, 2);
	expect_error(fd, 9, PROTO_ERR_FDS);
	/* More than any request may carry: refused by the framing, before any method. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":10,\"method\":\"hello\"}", fds, ARRAY_SIZE(fds));
	expect_error(fd, 0, PROTO_ERR_FDS);
	assert_int_equal(pool.n_submitted, 0);
	close(fd);
}

static void test_connection_limit(void **state)
{
	int fds[4];
	json_object *r;

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = client_connect();
	/* The fourth of one uid is refused at accept (busy), and closed. */
	r = recv_reply(fds[3]);
	assert_non_null(reply_code(r));
	assert_string_equal(reply_code(r), proto_error_code(PROTO_ERR_BUSY));
	json_object_put(r);
	pump_until(fds[3], NULL, 0);
	{
		char c;

		assert_int_equal(recv(fds[3], &c, 1, MSG_DONTWAIT), 0);
	}
	assert_int_equal(server_n_connections(server), 3);
	/* The others are served. */
	send_text(fds[0], "{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\"}", NULL, 0);
	json_object_put(recv_reply(fds[0]));
	/* One closed makes room for the next. */
	close(fds[1]);
	close(fds[3]);
	for (int i = 0; i < 5; i++)
		sd_event_run(event, 1000);
	assert_int_equal(server_n_connections(server), 2);
	fds[1] = client_connect();
	send_text(fds[1], "{\"bpfbroker\":1,\"id\":2,\"method\":\"hello\"}", NULL, 0);
	r = recv_reply(fds[1]);
	assert_null(reply_code(r));
	json_object_put(r);
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
}

/* A job as a worker would decode it: the typed job carries the caller's identity. */
static void test_job_and_reply(void **state)
{
	int fd = client_connect();
	struct jobmsg job = {};
	json_object *params = NULL, *r, *v;
	gid_t groups[64];
	int n = getgroups(ARRAY_SIZE(groups), groups);

	send_text(fd,
		  "{\"bpfbroker\":1,\"id\":42,\"method\":\"show\",\"params\":{\"object\":\"x\"}}",
		  NULL, 0);
	pump_until(fd, &pool.n_submitted, 1);
	assert_int_equal(jobmsg_decode(pool.last->msg, pool.last->len, &job), 0);
	assert_int_equal(job.method, PROTO_METHOD_SHOW);
	assert_int_equal(job.id, 42);
	assert_int_equal(job.flags, 0);
	assert_int_equal(job.ident.uid, getuid());
	assert_int_equal(job.ident.gid, getgid());
	assert_int_equal(job.ident.pid, getpid());
	assert_true(n >= 0);
	assert_int_equal(job.ident.n_groups, n);
	assert_memory_equal(job.ident.groups, groups, (size_t)n * sizeof(gid_t));
	assert_int_equal(proto_parse(job.params, job.params_len, &params, NULL), 0);
	assert_true(json_object_object_get_ex(params, "object", &v));
	assert_string_equal(json_object_get_string(v), "x");
	json_object_put(params);
	jobmsg_done(&job);
	assert_int_equal(pool.last->req.uid, getuid());
	assert_int_equal(pool.last->n_fds, 0);

	/* While it runs, the connection reads nothing more. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":43,\"method\":\"hello\"}", NULL, 0);
	for (int i = 0; i < 5; i++)
		sd_event_run(event, 1000);
	{
		struct pollfd p = {.fd = fd, .events = POLLIN};

		assert_int_equal(poll(&p, 1, 0), 0);
	}
	/* The worker's reply is relayed as it came; then the queued hello is answered. */
	pool_reply("{\"bpfbroker\":1,\"id\":42,\"result\":{\"relayed\":true}}");
	r = recv_reply(fd);
	assert_int_equal(reply_id(r), 42);
	assert_true(json_object_object_get_ex(r, "result", &v));
	assert_true(json_object_object_get_ex(v, "relayed", &v));
	json_object_put(r);
	r = recv_reply(fd);
	assert_int_equal(reply_id(r), 43);
	json_object_put(r);
	close(fd);
}

/* A load is checked in the event loop and sent on with its fd at index 0. */
static void test_load_job(void **state)
{
	int fd = client_connect(), obj = STDERR_FILENO;
	struct jobmsg job = {};
	json_object *params = NULL, *v;

	/* An fd index past those it carries: refused here, no worker sees it. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":1,\"method\":\"load\",\"params\":{\"object_fd\":7}}",
		  &obj, 1);
	{
		json_object *r = recv_reply(fd);

		assert_non_null(reply_code(r));
		assert_int_equal(reply_id(r), 1);
		json_object_put(r);
	}
	assert_int_equal(pool.n_submitted, 0);
	send_text(fd,
		  "{\"bpfbroker\":1,\"id\":2,\"method\":\"load\",\"params\":{\"object_fd\":0,"
		  "\"check_only\":true}}",
		  &obj, 1);
	pump_until(fd, &pool.n_submitted, 1);
	assert_int_equal(jobmsg_decode(pool.last->msg, pool.last->len, &job), 0);
	assert_int_equal(job.method, PROTO_METHOD_LOAD);
	/* A check is not rate-limited. */
	assert_int_equal(job.flags, 0);
	assert_int_equal(proto_parse(job.params, job.params_len, &params, NULL), 0);
	assert_true(json_object_object_get_ex(params, "object_fd", &v));
	assert_int_equal(json_object_get_int(v), 0);
	json_object_put(params);
	jobmsg_done(&job);
	assert_int_equal(pool.last->n_fds, 1);
	close(fd);
}

/* Attaches count against max_loads_per_minute (2 here): the third is refused in the loop. */
static void test_rate_limit(void **state)
{
	int fd = client_connect();
	json_object *r, *e, *v;
	struct jobmsg job = {};

	for (int i = 0; i < 2; i++) {
		char req[128];

		snprintf(req, sizeof(req),
			 "{\"bpfbroker\":1,\"id\":%d,\"method\":\"attach\",\"params\":{}}", i);
		send_text(fd, req, NULL, 0);
		pump_until(fd, &pool.n_submitted, (unsigned)i + 1);
		assert_int_equal(jobmsg_decode(pool.last->msg, pool.last->len, &job), 0);
		assert_true(job.flags & JOBMSG_F_RATE_COUNTED);
		jobmsg_done(&job);
		pool_reply("{\"bpfbroker\":1,\"result\":{}}");
		json_object_put(recv_reply(fd));
	}
	send_text(fd, "{\"bpfbroker\":1,\"id\":9,\"method\":\"attach\",\"params\":{}}", NULL, 0);
	r = recv_reply(fd);
	assert_non_null(reply_code(r));
	assert_string_equal(reply_code(r), proto_error_code(PROTO_ERR_QUOTA));
	assert_true(json_object_object_get_ex(r, "error", &e));
	assert_true(json_object_object_get_ex(e, "message", &v));
	assert_non_null(strstr(json_object_get_string(v), "max_loads_per_minute"));
	json_object_put(r);
	assert_int_equal(pool.n_submitted, 2);
	/* What does not count still goes. */
	send_text(fd, "{\"bpfbroker\":1,\"id\":10,\"method\":\"list\"}", NULL, 0);
	pump_until(fd, &pool.n_submitted, 3);
	close(fd);
}

static void test_attach_without_netns(void **state)
{
	int fd = client_connect();
	struct jobmsg job = {};

	send_text(fd, "{\"bpfbroker\":1,\"id\":1,\"method\":\"attach\",\"params\":{}}", NULL, 0);
	pump_until(fd, &pool.n_submitted, 1);
	assert_int_equal(jobmsg_decode(pool.last->msg, pool.last->len, &job), 0);
	assert_int_equal(job.method, PROTO_METHOD_ATTACH);
	/* No CAP_NET_ADMIN here: no namespace fd, and the job says there is none. */
	assert_false(job.flags & JOBMSG_F_NETNS);
	assert_int_equal(pool.last->n_fds, 0);
	jobmsg_done(&job);
	print_message("skipped: the caller's network namespace (SIOCGSKNS needs CAP_NET_ADMIN)\n");
	close(fd);
}

/* The client hangs up while its job runs: the job is orphaned, the connection's worker told. */
static void test_client_gone(void **state)
{
	int fd = client_connect();

	send_text(fd, "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\"}", NULL, 0);
	pump_until(fd, &pool.n_submitted, 1);
	assert_int_equal(server_n_connections(server), 1);
	close(fd);
	pump_until(-1, &pool.n_orphaned, 1);
	assert_true(pool.last->orphaned);
	assert_int_equal(pool.n_closed, 1);
	assert_int_equal(pool.closed_conn, pool.last->req.conn);
	assert_int_equal(server_n_connections(server), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_and_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_without_netns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_gone, setup, teardown),
	};

	/* As root, become nobody first: the event loop's code must not need root for any of it. */
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
