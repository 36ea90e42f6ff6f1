/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the worker pool (daemon/loop/worker*.c) without root: the
 * real pool on its own sd-event loop, with tests/unit/fakeworker as the
 * spawner and its workers (as root, the test first becomes nobody).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/macro.h"
#include "daemon/loop/worker_internal.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"

/*
 * The one capability step of starting a spawner (daemon/loop/spawn.c): the
 * workers' capabilities raised as ambient for the exec. The pool itself
 * needs none; unprivileged, there is nothing to raise, so the test links
 * this in place of daemon/shared/caps.c.
 */
int caps_exec_prepare(void)
{
	return 0;
}

static int exe_fd = -EBADF;
static const int no_policy = -EBADF;

struct result {
	bool done;
	int error;
	int64_t pid, spawner, jobs, fds;
	unsigned order; /* when it finished, counted from 1 */
};

struct fixture {
	sd_event *event;
	struct worker_pool *pool;
	unsigned fds_before;
	unsigned finished;
	int64_t next_id;
};

static unsigned count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* How many of our fds are pidfds of pid (fdinfo "Pid:"). */
static unsigned pidfds_of(pid_t pid)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			long p;

			if (sscanf(line, "Pid: %ld", &p) == 1 && p == pid)
				n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static struct fixture F;

static void pool_start(const struct worker_pool_config *extra)
{
	static char *const argv[] = {"fakeworker", NULL};
	struct worker_pool_config cfg = {.max_workers = 2,
					 .max_jobs_per_uid = 0,
					 .job_timeout_usec = 5 * 1000 * 1000,
					 .max_jobs_per_worker = 64,
					 .worker_idle_usec = 5 * 1000 * 1000,
					 .worker_exe_fd = exe_fd,
					 .worker_argv = argv,
					 .policy_fd = &no_policy};

	if (extra) {
		cfg.max_workers = extra->max_workers ?: cfg.max_workers;
		cfg.max_jobs_per_uid = extra->max_jobs_per_uid;
		cfg.job_timeout_usec = extra->job_timeout_usec ?: cfg.job_timeout_usec;
		cfg.max_jobs_per_worker = extra->max_jobs_per_worker ?: cfg.max_jobs_per_worker;
		cfg.spawner_max_workers = extra->spawner_max_workers;
	}
	F = (struct fixture){.fds_before = count_fds(), .next_id = 1};
	assert_int_equal(sd_event_new(&F.event), 0);
	assert_int_equal(worker_pool_new(F.event, &cfg, &F.pool), 0);
}

/* Freed, the pool leaves nothing: every fd it had is closed, every process reaped. */
static int teardown(void **state)
{
	F.pool = worker_pool_free(F.pool);
	F.event = sd_event_unref(F.event);
	assert_int_equal(count_fds(), F.fds_before);
	return 0;
}

static void on_done(void *userdata, struct proto_raw *reply, int error)
{
	struct result *r = userdata;

	r->done = true;
	r->error = error;
	r->order = ++F.finished;
	if (reply) {
		/* The reply's bytes as received: not NUL-terminated. */
		_cleanup_free_ char *text = strndup(reply->buf, reply->len);
		json_object *o = text ? json_tokener_parse(text) : NULL, *res, *v;

		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "result", &res));
		assert_true(json_object_object_get_ex(res, "pid", &v));
		r->pid = json_object_get_int64(v);
		assert_true(json_object_object_get_ex(res, "spawner", &v));
		r->spawner = json_object_get_int64(v);
		assert_true(json_object_object_get_ex(res, "jobs", &v));
		r->jobs = json_object_get_int64(v);
		assert_true(json_object_object_get_ex(res, "fds", &v));
		r->fds = json_object_get_int64(v);
		json_object_put(o);
	}
}

/* A job for the fake worker: method "echo", "sleep" (ms), "crash" or "hang". */
static struct worker_job *submit_fds(uid_t uid, uint64_t conn, const char *method, int ms, int *fds,
				     size_t n_fds, struct result *r)
{
	struct worker_request req = {.uid = uid, .pid = getpid(), .event = "test", .conn = conn};
	json_object *job = json_object_new_object();
	struct worker_job *j = NULL;

	*r = (struct result){};
	json_object_object_add(job, "id", json_object_new_int64(F.next_id++));
	json_object_object_add(job, "method", json_object_new_string(method));
	json_object_object_add(job, "ms", json_object_new_int64(ms));
	/* The pool hands the job on as opaque bytes (jobmsg.h in the broker; JSON for the fake). */
	char *text = strdup(json_object_to_json_string(job));

	assert_non_null(text);
	json_object_put(job);
	assert_int_equal(
		worker_pool_submit(F.pool, &req, text, strlen(text), fds, n_fds, on_done, r, &j),
		0);
	return j;
}

static struct worker_job *submit(uid_t uid, uint64_t conn, const char *method, int ms,
				 struct result *r)
{
	return submit_fds(uid, conn, method, ms, NULL, 0, r);
}

/* Run the loop until cond(arg) holds; fail after timeout_ms. */
static void run_until(bool (*cond)(void *), void *arg, unsigned timeout_ms)
{
	uint64_t start = 0, now = 0;

	sd_event_now(F.event, CLOCK_MONOTONIC, &start);
	while (!cond(arg)) {
		assert_true(sd_event_run(F.event, 10 * 1000) >= 0);
		assert_int_equal(sd_event_now(F.event, CLOCK_MONOTONIC, &now), 0);
		if (now - start > timeout_ms * 1000ull)
			fail_msg("timed out after %u ms", timeout_ms);
	}
}

static bool is_done(void *arg)
{
	return ((struct result *)arg)->done;
}

static void wait_done(struct result *r)
{
	run_until(is_done, r, 5000);
}

static bool process_gone(void *arg)
{
	return kill((pid_t)(intptr_t)arg, 0) < 0 && errno == ESRCH;
}

static bool pool_has_idle(void *arg)
{
	return worker_pool_n_idle(F.pool) >= (unsigned)(intptr_t)arg;
}

/* ---- the tests ---- */

/* A job goes to a worker with its fds, and its reply comes back. */
static void test_answered(void **state)
{
	struct result r;
	int *fds = malloc(2 * sizeof(int));

	assert_non_null(fds);
	pool_start(NULL);
	fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	submit_fds(1000, 1, "echo", 0, fds, 2, &r);
	wait_done(&r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.jobs, 1);
	assert_int_equal(r.fds, 2);
	assert_true(r.pid > 0 && r.spawner > 0 && r.pid != r.spawner);
}

/* With one worker slot, jobs start (and so end) in the order they came. */
static void test_queue_order(void **state)
{
	struct result r[4];

	pool_start(&(struct worker_pool_config){.max_workers = 1, .max_jobs_per_worker = 1});
	for (int i = 0; i < 4; i++)
		submit(1000 + i, 0, "sleep", 20, &r[i]);
	wait_done(&r[3]);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].error, 0);
		assert_int_equal(r[i].order, i + 1);
	}
}

/* A user at max_jobs_per_uid waits while another user's later job goes first. */
static void test_per_uid_limit(void **state)
{
	struct result slow, second, other;

	pool_start(&(struct worker_pool_config){.max_workers = 2, .max_jobs_per_uid = 1});
	run_until(pool_has_idle, (void *)2, 5000);
	submit(1000, 1, "sleep", 1000, &slow); /* long past the others, on a slow machine too */
	submit(1000, 2, "echo", 0, &second);
	submit(2000, 3, "echo", 0, &other);
	wait_done(&second);
	assert_true(other.done);
	assert_true(other.order < slow.order);
	assert_true(slow.order < second.order);
}

/* A worker that crashes answers its job with an error; the next job gets a fresh one. */
static void test_crash(void **state)
{
	struct result crash, next;

	pool_start(NULL);
	submit(1000, 1, "crash", 0, &crash);
	wait_done(&crash);
	assert_int_equal(crash.error, -EPIPE);
	submit(1000, 1, "echo", 0, &next);
	wait_done(&next);
	assert_int_equal(next.error, 0);
	assert_int_equal(next.jobs, 1);
}

/*
 * A worker that hangs is killed at the job's time limit, and the job ends with -ETIME.
 * The limit holds for the next job too, which waits for a fresh worker to start and
 * answer: 2 s, so a slow machine (sanitizers, a loaded CI) does not time that out.
 */
static void test_timeout(void **state)
{
	struct result hang, next;

	pool_start(&(struct worker_pool_config){.job_timeout_usec = 2 * 1000 * 1000});
	submit(1000, 1, "hang", 0, &hang);
	run_until(is_done, &hang, 20 * 1000);
	assert_int_equal(hang.error, -ETIME);
	submit(1000, 2, "echo", 0, &next);
	wait_done(&next);
	assert_int_equal(next.error, 0);
}

/*
 * A connection's jobs go to its worker, and to no other connection's;
 * past POOL_MAX_BOUND bound workers the one idle longest is evicted; a
 * connection closed takes its worker with it.
 */
static void test_binding_and_eviction(void **state)
{
	struct result r[6], again;
	unsigned max_bound = 4; /* POOL_MAX_BOUND with one worker slot */

	pool_start(&(struct worker_pool_config){.max_workers = 1});
	for (unsigned c = 1; c <= max_bound; c++) {
		submit(1000, c, "echo", 0, &r[c]);
		wait_done(&r[c]);
		assert_int_equal(r[c].jobs, 1);
		for (unsigned o = 1; o < c; o++)
			assert_true(r[c].pid != r[o].pid);
	}
	/* Bound: its second job, same worker. */
	submit(1000, max_bound, "echo", 0, &again);
	wait_done(&again);
	assert_int_equal(again.pid, r[max_bound].pid);
	assert_int_equal(again.jobs, 2);
	/* One more connection: connection 1, quiet longest, loses its worker. */
	submit(1000, max_bound + 1, "echo", 0, &r[5]);
	wait_done(&r[5]);
	run_until(process_gone, (void *)(intptr_t)r[1].pid, 5000);
	submit(1000, 2, "echo", 0, &again);
	wait_done(&again);
	assert_int_equal(again.pid, r[2].pid);
	/* Closed: its worker goes. */
	worker_pool_conn_closed(F.pool, 2);
	run_until(process_gone, (void *)(intptr_t)r[2].pid, 5000);
}

static bool spawner_changed(void *arg)
{
	return F.pool->spawner_pid > 0 && F.pool->spawner_pid != (pid_t)(intptr_t)arg;
}

static bool no_retired(void *arg)
{
	return F.pool->retired == NULL;
}

/*
 * After spawner_max_workers workers, the spawner is replaced: workers bound
 * to a connection keep serving it from the old spawner, which the event
 * loop holds no fd of meanwhile, and which is reaped, with nothing left,
 * once its last worker is gone.
 */
static void test_spawner_replacement(void **state)
{
	struct result a, b, r, a2, b2;
	pid_t old;

	pool_start(&(struct worker_pool_config){.max_workers = 2, .spawner_max_workers = 4});
	submit(1000, 1, "echo", 0, &a);
	submit(2000, 2, "echo", 0, &b);
	wait_done(&a);
	wait_done(&b);
	old = (pid_t)a.spawner;
	assert_int_equal(b.spawner, old);
	/* One-off connections use up the spawner's count. */
	for (uint64_t c = 10; !spawner_changed((void *)(intptr_t)old); c++) {
		assert_true(c < 30);
		submit(3000, c, "echo", 0, &r);
		wait_done(&r);
		worker_pool_conn_closed(F.pool, c);
		sd_event_run(F.event, 0);
	}
	run_until(pool_has_idle, (void *)1, 5000);
	/* The bound workers still serve their connections, from the old spawner. */
	submit(1000, 1, "echo", 0, &a2);
	submit(2000, 2, "echo", 0, &b2);
	wait_done(&a2);
	wait_done(&b2);
	assert_int_equal(a2.pid, a.pid);
	assert_int_equal(a2.jobs, 2);
	assert_int_equal(b2.pid, b.pid);
	assert_int_equal(a2.spawner, old);
	/* Alive, waiting for them, and nothing of it open in the event loop. */
	assert_int_equal(kill(old, 0), 0);
	assert_int_equal(pidfds_of(old), 0);
	/* Their connections end: the old spawner exits after them, and is reaped. */
	worker_pool_conn_closed(F.pool, 1);
	worker_pool_conn_closed(F.pool, 2);
	run_until(no_retired, NULL, 5000);
	assert_true(process_gone((void *)(intptr_t)old));
	assert_int_equal(pidfds_of(old), 0);
	/* And a new connection's job is served by the new spawner's workers. */
	submit(1000, 99, "echo", 0, &r);
	wait_done(&r);
	assert_int_equal(r.error, 0);
	assert_true(r.spawner != old);
}

/* A policy reload retires bound workers too: their next job gets a fresh worker. */
static void test_refresh_retires_bound(void **state)
{
	struct result a, a2;

	pool_start(NULL);
	submit(1000, 1, "echo", 0, &a);
	wait_done(&a);
	worker_pool_refresh(F.pool);
	submit(1000, 1, "echo", 0, &a2);
	wait_done(&a2);
	assert_true(a2.pid != a.pid);
	assert_true(a2.spawner != a.spawner);
	run_until(no_retired, NULL, 5000);
}

static void on_drained(void *userdata)
{
	*(bool *)userdata = true;
}

static bool flag_set(void *arg)
{
	return *(bool *)arg;
}

/* Draining: a running job finishes, a waiting one gets -ESHUTDOWN, then drained() once. */
static void test_drain(void **state)
{
	struct result running, waiting;
	bool drained = false;

	pool_start(&(struct worker_pool_config){.max_workers = 1});
	run_until(pool_has_idle, (void *)1, 5000);
	submit(1000, 1, "sleep", 100, &running);
	sd_event_run(F.event, 0);
	submit(2000, 2, "echo", 0, &waiting);
	worker_pool_drain(F.pool, on_drained, &drained);
	assert_true(waiting.done);
	assert_int_equal(waiting.error, -ESHUTDOWN);
	run_until(flag_set, &drained, 5000);
	assert_true(running.done);
	assert_int_equal(running.error, 0);
}

static int group_setup(void **state)
{
	const char *build = getenv("BPFBROKER_BUILD_DIR");
	char path[4096];
	sigset_t chld;

	/* Nobody, with no groups: the pool needs no privilege. */
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0))
		return -1;
	snprintf(path, sizeof(path), "%s/tests/unit/fakeworker", build ? build : ".");
	exe_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (exe_fd < 0) {
		fprintf(stderr, "%s: %m\n", path);
		return -1;
	}
	/* sd-event watches children by pidfd and SIGCHLD, which must be blocked. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	audit_force_stderr(true);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_answered, teardown),
		cmocka_unit_test_teardown(test_queue_order, teardown),
		cmocka_unit_test_teardown(test_per_uid_limit, teardown),
		cmocka_unit_test_teardown(test_crash, teardown),
		cmocka_unit_test_teardown(test_timeout, teardown),
		cmocka_unit_test_teardown(test_binding_and_eviction, teardown),
		cmocka_unit_test_teardown(test_spawner_replacement, teardown),
		cmocka_unit_test_teardown(test_refresh_retires_bound, teardown),
		cmocka_unit_test_teardown(test_drain, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
