/* SPDX-License-Identifier: MIT */
/*
 * Workers that serve several requests of one connection, tried by real
 * unprivileged uids: a connection keeps its worker across requests that fail
 * and succeed, with exactly its access each time and no capability left
 * raised; two users (or two connections) never share a worker; and whatever
 * a job leaves behind in its worker (an fd, a raised capability, another
 * network namespace, a lowered rlimit, another working directory) sends the
 * connection's next request to a fresh worker. The worker that wrote an
 * audit record is its "process" field.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"

#define UID_A 4501
#define UID_B 4502
#define N_LOADS 12

static const struct user user_a = {UID_A, UID_A};
static const struct user user_b = {UID_B, UID_B};

static char daemon_log[400];

static void restart(const char *args)
{
	if (H.daemon > 0) {
		int status = harness_kill(SIGTERM);

		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(harness_start(args), 0);
}

/*
 * The worker pids ("process=") of uid's audit records of event, in order,
 * from the log's line first_line on; how many in *n. Records may come a
 * little after the reply: wait for want of them.
 */
static void audited_workers(uid_t uid, const char *event, unsigned first_line, unsigned want,
			    pid_t *pids, unsigned *n)
{
	char line[4096], needle[96];

	snprintf(needle, sizeof(needle), "audit: event=%s decision=", event);
	for (int tries = 0; tries < 100; tries++) {
		char uidf[32];
		unsigned lineno = 0;
		FILE *f = fopen(daemon_log, "re");

		*n = 0;
		snprintf(uidf, sizeof(uidf), " uid=%u ", (unsigned)uid);
		while (f && fgets(line, sizeof(line), f)) {
			const char *p;

			if (lineno++ < first_line || !strstr(line, needle) || !strstr(line, uidf))
				continue;
			p = strstr(line, " process=");
			assert_non_null(p);
			if (*n < 4 * N_LOADS)
				pids[(*n)++] = (pid_t)atoi(p + 9);
		}
		if (f)
			fclose(f);
		if (*n >= want)
			return;
		usleep(20000);
	}
}

static unsigned log_lines(void)
{
	char line[4096];
	unsigned n = 0;
	FILE *f = fopen(daemon_log, "re");

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

static bool log_has(const char *what, unsigned first_line)
{
	char line[4096];
	unsigned lineno = 0;
	bool found = false;
	FILE *f = fopen(daemon_log, "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = lineno++ >= first_line && strstr(line, what);
	if (f)
		fclose(f);
	return found;
}

/* The ro map is read-only in the kernel, the none map has no fd: as a fresh worker gives. */
static int check_counter(const struct bpfbroker_result *res)
{
	const struct bpfbroker_map *cfg = bpfbroker_result_map(res, "config_map"),
				   *secret = bpfbroker_result_map(res, "secret");
	__u32 key = 0;
	__u64 value = 1;

	CHECK(cfg && secret, "result lacks a map");
	CHECK(cfg->access == BPFBROKER_ACCESS_RO &&
		      (fcntl(cfg->fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	      "config_map is not read-only");
	CHECK(bpf_map_update_elem(cfg->fd, &key, &value, BPF_ANY) < 0 && errno == EPERM,
	      "the read-only map took an update: %m");
	CHECK(secret->access == BPFBROKER_ACCESS_NONE && secret->fd < 0, "secret got an fd");
	return 0;
}

/* On one connection: a load the verifier rejects, then good loads, then a check. */
static int client_one_connection(void *arg)
{
	unsigned n_good = *(unsigned *)arg;
	struct bpfbroker *b;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = bpfbroker_connect(H.socket, &b);

	CHECK(k == 0, "connect: %s", strerror(-k));
	k = bpfbroker_load_file(b, harness_object("reject"), NULL, &res, &err);
	CHECK(k < 0 && err && strcmp(err->code, "load-failed") == 0, "reject: %d %s", k,
	      err ? err->message : "");
	bpfbroker_error_free(err);
	for (unsigned i = 0; i < n_good; i++) {
		err = NULL;
		k = bpfbroker_load_file(b, harness_object("counter"), NULL, &res, &err);
		CHECK(k == 0, "counter: %s", err ? err->message : strerror(-k));
		if (check_counter(res) != 0)
			return 1;
		bpfbroker_result_free(res);
	}
	bpfbroker_close(b);
	return 0;
}

static void test_connection_keeps_its_worker(void **state)
{
	unsigned n_good = 3, first = log_lines(), n;
	pid_t pids[4 * N_LOADS];

	assert_int_equal(harness_as_user(&user_a, client_one_connection, &n_good), 0);
	audited_workers(UID_A, "load", first, 4, pids, &n);
	assert_int_equal(n, 4);
	/* The failed load's worker served the rest, each with exactly the access granted. */
	for (unsigned i = 1; i < n; i++)
		assert_int_equal(pids[i], pids[0]);
}

/* While the connection is open, its worker waits with no capability raised, no fd extra. */
static int client_hold_connection(void *arg)
{
	int *sync = arg;
	struct bpfbroker *b;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	char c = 0;
	int k = bpfbroker_connect(H.socket, &b);

	CHECK(k == 0, "connect: %s", strerror(-k));
	k = bpfbroker_load_file(b, harness_object("counter"), NULL, &res, &err);
	CHECK(k == 0, "counter: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	CHECK(write(sync[1], &c, 1) == 1, "write: %m");
	/* Until the test has looked at our worker. */
	CHECK(read(sync[0], &c, 1) >= 0, "read: %m");
	bpfbroker_close(b);
	return 0;
}

static void test_bound_worker_holds_nothing(void **state)
{
	int to_test[2], to_client[2], pass[2];
	unsigned first = log_lines(), n = 0;
	pid_t pids[4 * N_LOADS], client;
	unsigned long long eff = 1;
	char c;

	assert_int_equal(pipe2(to_test, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_client, O_CLOEXEC), 0);
	pass[0] = to_client[0];
	pass[1] = to_test[1];
	client = harness_spawn_as(&user_a, client_hold_connection, pass);
	assert_true(client > 0);
	assert_int_equal(read(to_test[0], &c, 1), 1);
	audited_workers(UID_A, "load", first, 1, pids, &n);
	assert_int_equal(n, 1);
	/* It has settled after its job (hygiene.h): give it a moment. */
	for (int i = 0; i < 100 && (eff || harness_count_fds(pids[0]) != 4); i++) {
		usleep(10000);
		eff = harness_status_field(pids[0], "CapEff", 16);
	}
	assert_int_equal(eff, 0);
	assert_int_equal(harness_status_field(pids[0], "CapInh", 16), 0);
	assert_int_equal(harness_status_field(pids[0], "NoNewPrivs", 10), 1);
	/* stdin, stdout, stderr and its socket: nothing of the job's. */
	assert_int_equal(harness_count_fds(pids[0]), 4);
	assert_int_equal(write(to_client[1], &c, 1), 1);
	assert_int_equal(harness_reap(client), 0);
	/* The connection closed: its worker is gone. */
	for (int i = 0; i < 100 && kill(pids[0], 0) == 0; i++)
		usleep(10000);
	assert_int_equal(kill(pids[0], 0), -1);
	close(to_test[0]);
	close(to_test[1]);
	close(to_client[0]);
	close(to_client[1]);
}

/*
 * Two connections of one uid, interleaved in one process: one loads, the
 * other only checks; then N_LOADS loads each by two uids at once.
 */
static int client_two_connections(void *arg)
{
	struct bpfbroker *b1, *b2;
	struct bpfbroker_load_opts check = {.sz = sizeof(check), .check_only = true};
	int k = bpfbroker_connect(H.socket, &b1);

	CHECK(k == 0 && bpfbroker_connect(H.socket, &b2) == 0, "connect: %s", strerror(-k));
	for (int i = 0; i < 4; i++) {
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;

		k = bpfbroker_load_file(b1, harness_object("counter"), NULL, &res, &err);
		CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
		bpfbroker_result_free(res);
		res = NULL;
		k = bpfbroker_load_file(b2, harness_object("counter"), &check, &res, &err);
		CHECK(k == 0, "check: %s", err ? err->message : strerror(-k));
		bpfbroker_result_free(res);
	}
	bpfbroker_close(b1);
	bpfbroker_close(b2);
	return 0;
}

static int client_loads(void *arg)
{
	unsigned n = N_LOADS;

	return client_one_connection(&n);
}

static bool shared(const pid_t *a, unsigned na, const pid_t *b, unsigned nb)
{
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

static void test_never_two_users(void **state)
{
	pid_t a[4 * N_LOADS], b[4 * N_LOADS], ca, cb;
	unsigned first = log_lines(), na, nb;

	assert_int_equal(harness_as_user(&user_a, client_two_connections, NULL), 0);
	audited_workers(UID_A, "load", first, 4, a, &na);
	audited_workers(UID_A, "check", first, 4, b, &nb);
	assert_int_equal(na, 4);
	assert_int_equal(nb, 4);
	assert_false(shared(a, na, b, nb));

	first = log_lines();
	ca = harness_spawn_as(&user_a, client_loads, NULL);
	cb = harness_spawn_as(&user_b, client_loads, NULL);
	assert_true(ca > 0 && cb > 0);
	assert_int_equal(harness_reap(ca), 0);
	assert_int_equal(harness_reap(cb), 0);
	audited_workers(UID_A, "load", first, N_LOADS + 1, a, &na);
	audited_workers(UID_B, "load", first, N_LOADS + 1, b, &nb);
	assert_int_equal(na, N_LOADS + 1);
	assert_int_equal(nb, N_LOADS + 1);
	assert_false(shared(a, na, b, nb));
}

/*
 * The daemon with --fault-inject=job-leaks:WHAT (or other args): on one
 * connection, the first request's worker never serves the second, which
 * succeeds with exactly its access in a fresh one.
 */
static void fresh_after(const char *args, const char *logged)
{
	unsigned n_good = 1, first, n;
	pid_t pids[4 * N_LOADS];

	restart(args);
	first = log_lines();
	assert_int_equal(harness_as_user(&user_a, client_one_connection, &n_good), 0);
	audited_workers(UID_A, "load", first, 2, pids, &n);
	assert_int_equal(n, 2);
	assert_int_not_equal(pids[0], pids[1]);
	if (logged)
		assert_true(log_has(logged, first));
}

static void test_leaks_end_the_worker(void **state)
{
	fresh_after("--fault-inject=job-leaks:fd", "fds open after the job");
	fresh_after("--fault-inject=job-leaks:fdswap", "not the same files");
	fresh_after("--fault-inject=job-leaks:cap", "a capability is still raised");
	fresh_after("--fault-inject=job-leaks:netns", "not in our net namespace");
	fresh_after("--fault-inject=job-leaks:rlimit", "resource limit");
	fresh_after("--fault-inject=job-leaks:cwd", "the working directory changed");
	/* Reuse off: every request in a fresh worker, as before. */
	fresh_after("--jobs-per-worker 1", NULL);
	restart(NULL);
}

/*
 * A worker some object took over, as --fault-inject=worker-escape plays it:
 * before each job it signals the daemon and its spawner, makes stream and
 * inet sockets, connects to D-Bus, a terminal's TIOCSTI, walks every
 * program, readdresses journald's socket, replaces the event loop's fd and
 * makes the daemon an fd's owner, to be sent SIGKILL on its I/O, and opens
 * a perf event on the daemon and on the spawner that would SIGTRAP them
 * (worker/serve.c, fault_escape()). Each fails, with EPERM (sandbox.c) or,
 * the perf events, EACCES (neither is dumpable), and the worker still
 * answers both requests of the connection.
 */
static void test_taken_over_worker_is_confined(void **state)
{
	static const char *const tries[] = {
		"kill(daemon)",
		"kill(spawner)",
		"socket(stream)",
		"socket(inet)",
		"connect",
		"ioctl(TIOCSTI)",
		"bpf(PROG_GET_NEXT_ID)",
		"sendmsg(journald, address)",
		"dup2(2, 3)",
		"fcntl(F_SETOWN, daemon)",
		"fcntl(F_SETSIG)",
		"fcntl(F_SETFL, O_ASYNC)",
		"perf_event_open(daemon, sigtrap)",
		"perf_event_open(spawner, sigtrap)",
	};
	unsigned n_good = 1, first;

	restart("--fault-inject=worker-escape");
	first = log_lines();
	assert_int_equal(harness_as_user(&user_a, client_one_connection, &n_good), 0);
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char what[128];

		snprintf(what, sizeof(what), "worker-escape: %s: refused", tries[i]);
		if (!log_has(what, first))
			fail_msg("not refused, or not tried: %s", tries[i]);
	}
	assert_false(log_has("NOT REFUSED", first));
	restart(NULL);
}

static int setup(void **state)
{
	char policy[1024];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": [{\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 " \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "  \"maps\": [{\"name\": \"config*\", \"access\": \"ro\"},"
		 "           {\"name\": \"secret\", \"access\": \"none\"},"
		 "           {\"name\": \"*\", \"access\": \"rw\"}]}}]}",
		 UID_A, UID_B);
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connection_keeps_its_worker),
		cmocka_unit_test(test_bound_worker_holds_nothing),
		cmocka_unit_test(test_never_two_users),
		cmocka_unit_test(test_leaks_end_the_worker),
		cmocka_unit_test(test_taken_over_worker_is_confined),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
