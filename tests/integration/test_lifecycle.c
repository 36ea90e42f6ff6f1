/* SPDX-License-Identifier: MIT */
/*
 * Lifecycle and bounds, against the real daemon and kernel with real
 * unprivileged uids:
 *  - state changes finish and are audited whatever the client does: clients
 *    that hang up in the middle of an unload or a named load, workers killed
 *    at their time limit in the middle of a change (the debris is swept and
 *    the sweep audited), SIGTERM while requests run;
 *  - every size a client controls is bounded before it is used: 30,000
 *    supplementary groups, requests whose job would grow past what a worker
 *    takes, lists of named objects larger than one reply, an object memfd
 *    shrunk and sealed while the worker reads it.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/memfd.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"

#define UID_TRACER 4401 /* tracepoint programs, attached to sched:sched_process_fork */
#define UID_LOADER 4402 /* socket filters, many named objects */
#define UID_OTHER 4403 /* socket filters; the policy shares LOADER's lp-* objects with it */
#define UID_GROUPS 4404 /* socket filters; runs with many supplementary groups */

#define MAX_GROUPS 4096 /* what the daemon accepts (SERVER_MAX_GROUPS, daemon/loop/server.h) */
#define N_LIST_OBJECTS 100 /* of manymaps (~11 KiB of JSON each): over 1 MiB in all */
#define WATCHDOG 20 /* seconds any one client request may take */

static const struct user tracer = {UID_TRACER, UID_TRACER};
static const struct user loader = {UID_LOADER, UID_LOADER};
static const struct user other = {UID_OTHER, UID_OTHER};
static const struct user root = {0, 0};

static char daemon_log[400];

#define ctl harness_ctl
#define out harness_out

/* ---- the daemon and its log ---- */

static void restart(const char *args)
{
	/* A test that failed half-way may have left it stopped. */
	if (H.daemon > 0) {
		int status = harness_kill(SIGTERM);

		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(harness_start(args), 0);
}

/* Lines of the daemon's log containing every string given (NULL-terminated). */
static unsigned log_count(const char *first, ...)
{
	static char line[8192];
	unsigned n = 0;
	FILE *f = fopen(daemon_log, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		va_list ap;
		bool all = strstr(line, first) != NULL;
		const char *want;

		va_start(ap, first);
		while (all && (want = va_arg(ap, const char *)))
			all = strstr(line, want) != NULL;
		va_end(ap);
		n += all;
	}
	fclose(f);
	return n;
}

/* An audit record of event for OWNER/NAME (exactly that name) with these words too. */
static bool audited(const char *event, uid_t owner, const char *name, const char *also)
{
	char ev[64], obj[128];

	snprintf(ev, sizeof(ev), "audit: event=%s ", event);
	snprintf(obj, sizeof(obj), " object=%u/%s ", (unsigned)owner, name);
	if (log_count(ev, obj, also, NULL) > 0)
		return true;
	/* The object field may end the line. */
	snprintf(obj, sizeof(obj), " object=%u/%s\n", (unsigned)owner, name);
	return log_count(ev, obj, also, NULL) > 0;
}

static bool meta_exists(uid_t uid, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%u/%s.json", H.state_dir, (unsigned)uid, name);
	return access(path, F_OK) == 0;
}

static bool pins_exist(uid_t uid, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%u/%s", H.pin_root, (unsigned)uid, name);
	return access(path, F_OK) == 0;
}

/* Does any link in the kernel run this program? */
static bool prog_has_link(__u32 prog_id)
{
	__u32 id = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.prog_id == prog_id) {
			close(fd);
			return true;
		}
		close(fd);
	}
	return false;
}

/* A link is released once its last pin and fd are gone, which the kernel does a little later. */
static bool prog_link_gone(__u32 prog_id)
{
	for (int i = 0; i < 100; i++) {
		if (!prog_has_link(prog_id))
			return true;
		usleep(10000);
	}
	return false;
}

/* The kernel id of the first program of u's object NAME, from bpfctl -j show; 0 if none. */
static __u32 object_prog_id(const struct user *u, const char *name)
{
	json_object *o, *obj, *progs, *id;
	__u32 ret = 0;

	if (ctl(u, "-j", "show", name, NULL) != 0)
		return 0;
	o = json_tokener_parse(out);
	if (o && json_object_object_get_ex(o, "object", &obj) &&
	    json_object_object_get_ex(obj, "programs", &progs) &&
	    json_object_array_length(progs) > 0 &&
	    json_object_object_get_ex(json_object_array_get_idx(progs, 0), "id", &id))
		ret = (__u32)json_object_get_int64(id);
	json_object_put(o);
	return ret;
}

/* ---- raw clients ---- */

/* Send a request (JSON text) with fd, if fd >= 0. */
static int raw_send(int sock, const char *json, int fd)
{
	struct iovec iov = {.iov_base = (void *)json, .iov_len = strlen(json)};
	char control[CMSG_SPACE(sizeof(int))] = {};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = control;
		mh.msg_controllen = sizeof(control);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) > 0 ? 0 : -1;
}

/* One reply, as text into buf (fds closed); -ETIMEDOUT, or -ECONNRESET at end of stream. */
static int raw_recv(int sock, char *buf, size_t size, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	char control[CMSG_SPACE(sizeof(int) * 253)];
	struct iovec iov = {.iov_base = buf, .iov_len = size - 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = control,
			    .msg_controllen = sizeof(control)};
	ssize_t n;

	if (poll(&p, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n == 0 ? -ECONNRESET : -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)CMSG_DATA(cm))[i]);
	buf[n] = '\0';
	return (int)n;
}

static void spin_us(unsigned us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_watchdog(int sig)
{
	static const char msg[] = "client: no answer within the watchdog's time\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(99);
}

static void watchdog(unsigned sec)
{
	signal(SIGALRM, on_watchdog);
	alarm(sec);
}

/* A request sent, then the connection closed after delay_us: the client is gone. */
struct hangup {
	const char *request;
	const char *object; /* sent as the request's fd, or NULL */
	unsigned delay_us;
};

static int client_hang_up(void *arg)
{
	const struct hangup *h = arg;
	int fd = h->object ? open(h->object, O_RDONLY | O_CLOEXEC) : -1;
	int s = harness_connect();

	CHECK(s >= 0 && (!h->object || fd >= 0), "connect or open: %m");
	CHECK(raw_send(s, h->request, fd) == 0, "send: %m");
	spin_us(h->delay_us);
	close(s);
	return 0;
}

/*
 * With --max-jobs-per-uid=1 a request of u's waits for every job of u's that
 * still runs, also one whose client is gone: when this returns, such a job
 * has finished (or was never started).
 */
static void settle(const struct user *u)
{
	assert_int_equal(ctl(u, "list", NULL), 0);
}

/* ---- class 7: an unload whose client hangs up finishes, and is audited ---- */

static void load_and_attach(const char *name, __u32 *prog_id)
{
	char ref[80];

	snprintf(ref, sizeof(ref), "%s/count_forks", name);
	assert_int_equal(ctl(&tracer, "load", harness_object("tracepoint"), "--name", name, NULL),
			 0);
	assert_int_equal(ctl(&tracer, "attach", ref, "tracepoint", "sched:sched_process_fork",
			     "--pin", NULL),
			 0);
	*prog_id = object_prog_id(&tracer, name);
	assert_int_not_equal(*prog_id, 0);
	assert_true(prog_has_link(*prog_id));
}

/*
 * Either nothing happened (the object is all there) or the unload finished:
 * metadata, pins and link gone, and the unload audited. Never pins or a link
 * without metadata: nobody could see, count or remove those.
 */
static int check_unload_atomic(const char *name, __u32 prog_id, bool *ret_gone)
{
	bool meta = meta_exists(UID_TRACER, name);

	if (meta) {
		CHECK(pins_exist(UID_TRACER, name), "%s: metadata without pins", name);
		CHECK(prog_has_link(prog_id), "%s: still loaded, but its link is gone", name);
		*ret_gone = false;
		return 0;
	}
	CHECK(!pins_exist(UID_TRACER, name), "%s: metadata gone, pins left behind", name);
	CHECK(prog_link_gone(prog_id), "%s: metadata gone, its tracepoint link still attached",
	      name);
	CHECK(audited("unload", UID_TRACER, name, "decision=allow"), "%s: unloaded, not audited",
	      name);
	*ret_gone = true;
	return 0;
}

static void test_unload_hangup(void **state)
{
	unsigned gone = 0, n = 60;

	restart("--max-jobs-per-uid=1");
	assert_int_equal(harness_tracefs_ready(), 0);
	for (unsigned i = 0; i < n; i++) {
		char name[32], req[256];
		struct hangup h = {.request = req, .delay_us = (i % 30) * 60};
		__u32 prog_id;
		bool g = false;

		snprintf(name, sizeof(name), "hu%03u", i);
		load_and_attach(name, &prog_id);
		snprintf(req, sizeof(req),
			 "{\"bpfbroker\":1,\"id\":1,\"method\":\"unload\",\"params\":{\"object\":"
			 "\"%s\"}}",
			 name);
		assert_int_equal(harness_as_user(&tracer, client_hang_up, &h), 0);
		settle(&tracer);
		if (check_unload_atomic(name, prog_id, &g) != 0)
			fail_msg("unload %u of %u, hung up after %u us", i, n, h.delay_us);
		if (!g)
			assert_int_equal(ctl(&tracer, "unload", name, NULL), 0);
		gone += g;
	}
	fprintf(stderr, "unload hang-ups: %u of %u unloads finished, the rest never started\n",
		gone, n);
}

/*
 * The same, deterministically: the hang-up comes while the unload is between
 * its commit (metadata removed) and the removal of its pins and link, held
 * there by a delay (fault injection).
 */
struct hangup_sync {
	int to_parent, from_parent;
	int parent_ends[2]; /* closed in the child: a parent gone is then an end of file */
	const char *request;
};

static int client_hang_up_when_told(void *arg)
{
	const struct hangup_sync *h = arg;
	char c = 0;
	int s = harness_connect();

	watchdog(WATCHDOG);
	close(h->parent_ends[0]);
	close(h->parent_ends[1]);
	CHECK(s >= 0, "connect: %m");
	CHECK(raw_send(s, h->request, -1) == 0, "send: %m");
	CHECK(write(h->to_parent, &c, 1) == 1, "write: %m");
	CHECK(read(h->from_parent, &c, 1) == 1, "read: %m");
	close(s);
	return 0;
}

static void test_unload_hangup_mid_change(void **state)
{
	int up[2], down[2];
	char c = 0, req[256];
	struct hangup_sync h = {.request = req};
	__u32 prog_id;
	bool g = false;
	pid_t pid;
	int i;

	restart("--max-jobs-per-uid=1 --fault-inject=delay:unload-committed");
	load_and_attach("midway", &prog_id);
	snprintf(req, sizeof(req),
		 "{\"bpfbroker\":1,\"id\":1,\"method\":\"unload\",\"params\":{\"object\":"
		 "\"midway\"}}");
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	h.to_parent = up[1];
	h.from_parent = down[0];
	h.parent_ends[0] = up[0];
	h.parent_ends[1] = down[1];
	pid = harness_spawn_as(&tracer, client_hang_up_when_told, &h);
	assert_true(pid > 0);
	assert_int_equal(read(up[0], &c, 1), 1);
	/* Committed: the metadata is gone, the pins and link are still there. */
	for (i = 0; i < 500 && meta_exists(UID_TRACER, "midway"); i++)
		usleep(1000);
	assert_false(meta_exists(UID_TRACER, "midway"));
	assert_true(pins_exist(UID_TRACER, "midway"));
	assert_int_equal(write(down[1], &c, 1), 1);
	assert_int_equal(harness_reap(pid), 0);
	settle(&tracer);
	assert_int_equal(check_unload_atomic("midway", prog_id, &g), 0);
	assert_true(g);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* ---- class 7: a named load whose client hangs up: committed and audited, or neither ---- */

static void test_load_hangup(void **state)
{
	unsigned n = 80, loaded = 0;

	restart("--max-jobs-per-uid=1");
	for (unsigned i = 0; i < n; i++) {
		char name[32], req[256];
		struct hangup h = {.request = req,
				   .object = harness_object("counter"),
				   .delay_us = (i % 40) * 120};
		bool meta, audit;

		snprintf(name, sizeof(name), "hl%03u", i);
		snprintf(
			req, sizeof(req),
			"{\"bpfbroker\":1,\"id\":1,\"method\":\"load\",\"params\":{\"object_fd\":0,"
			"\"name\":\"%s\"}}",
			name);
		assert_int_equal(harness_as_user(&loader, client_hang_up, &h), 0);
		settle(&loader);
		meta = meta_exists(UID_LOADER, name);
		audit = audited("load", UID_LOADER, name, "decision=allow");
		if (meta != audit)
			fail_msg("named load %s (hang-up after %u us): %s", name, h.delay_us,
				 meta ? "loaded, not audited" : "audited, not loaded");
		if (!meta && pins_exist(UID_LOADER, name))
			fail_msg("named load %s: pins without metadata", name);
		loaded += meta;
	}
	fprintf(stderr, "load hang-ups: %u of %u named loads committed, the rest never started\n",
		loaded, n);
	for (unsigned i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "hl%03u", i);
		if (meta_exists(UID_LOADER, name))
			assert_int_equal(ctl(&loader, "unload", name, NULL), 0);
	}
}

/* ---- class 7: a worker killed at its time limit mid-change: swept and audited ---- */

static bool wait_until_gone(uid_t uid, const char *name)
{
	for (int i = 0; i < 1000; i++) {
		if (!meta_exists(uid, name) && !pins_exist(uid, name))
			return true;
		usleep(10000);
	}
	return false;
}

static void test_deadline_kill_swept(void **state)
{
	__u32 prog_id;
	double t0;

	/* An unload stalled after its commit, before its pins are removed. */
	restart("--timeout=2 --verifier-timeout=1 --fault-inject=stall:unload-committed");
	load_and_attach("dk", &prog_id);
	t0 = now_s();
	assert_int_not_equal(ctl(&tracer, "unload", "dk", NULL), 0);
	assert_true(now_s() - t0 >= 1.5);
	assert_true(wait_until_gone(UID_TRACER, "dk"));
	assert_true(prog_link_gone(prog_id));
	assert_true(audited("unload", UID_TRACER, "dk", "decision=error"));
	assert_true(log_count("audit: event=unload ", "object=4401/dk", "time limit", NULL) > 0);
	assert_true(audited("sweep", UID_TRACER, "dk", "decision=allow"));

	/* A named load stalled with its pins made, before its commit. */
	restart("--timeout=2 --verifier-timeout=1 --fault-inject=stall:load-pinned");
	t0 = now_s();
	assert_int_not_equal(ctl(&loader, "load", harness_object("counter"), "--name", "dl", NULL),
			     0);
	assert_true(now_s() - t0 >= 1.5);
	assert_true(wait_until_gone(UID_LOADER, "dl"));
	assert_true(audited("load", UID_LOADER, "dl", "decision=error"));
	assert_true(audited("sweep", UID_LOADER, "dl", "decision=allow"));
	/* And the name is free, nothing of it left. */
	assert_int_not_equal(ctl(&loader, "show", "dl", NULL), 0);
	restart(NULL);
	assert_int_equal(ctl(&loader, "load", harness_object("counter"), "--name", "dl", NULL), 0);
	assert_int_equal(ctl(&loader, "unload", "dl", NULL), 0);
}

/* ---- class 7: SIGTERM lets running requests finish ---- */

struct sync_client {
	int to_parent;
	const char *object, *name; /* a named load of object, or an unload of name */
	int result;
};

static int client_request_across_sigterm(void *arg)
{
	struct sync_client *sc = arg;
	struct bpfbroker *b = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .name = sc->name};
	char c = 0;
	int k;

	watchdog(WATCHDOG);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	CHECK(write(sc->to_parent, &c, 1) == 1, "write: %m");
	if (sc->object)
		k = bpfbroker_load_file(b, sc->object, &opts, &res, &err);
	else
		k = bpfbroker_unload(b, sc->name, &err);
	/* Any reply will do (the slow object fails verification): not the end of the stream. */
	CHECK(k == 0 || err, "%s: no reply: %s", sc->name, strerror(-k));
	if (err)
		fprintf(stderr, "%s across SIGTERM: %s: %s\n", sc->name, err->code, err->message);
	bpfbroker_result_free(res);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return k == 0 ? 0 : 2;
}

static int wait_daemon_exit(int timeout_ms)
{
	int status = -1;

	for (int t = 0; t < timeout_ms; t++) {
		if (waitpid(H.daemon, &status, WNOHANG) == H.daemon) {
			H.daemon = -1;
			return status;
		}
		usleep(1000);
	}
	kill(H.daemon, SIGKILL);
	waitpid(H.daemon, &status, 0);
	H.daemon = -1;
	return -1;
}

/*
 * A daemon started with args, and sc's request as u to it (sc->to_parent is
 * p[1]): the client has connected when this returns; its pid.
 */
static pid_t start_request_across_sigterm(const char *args, const struct user *u,
					  struct sync_client *sc, int p[2])
{
	pid_t pid;
	char c;

	sc->to_parent = p[1];
	restart(args);
	pid = harness_spawn_as(u, client_request_across_sigterm, sc);
	assert_true(pid > 0);
	assert_int_equal(read(p[0], &c, 1), 1);
	return pid;
}

static void test_sigterm_drains(void **state)
{
	struct sync_client sc = {.object = harness_object("slow"), .name = "slowterm"};
	int p[2], status, k;
	__u32 prog_id;
	char c;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	/* A load the verifier is busy with when SIGTERM comes: its client gets the answer. */
	pid = start_request_across_sigterm("--fault-inject=delay:unload-committed", &loader, &sc,
					   p);
	usleep(150000);
	assert_int_equal(kill(H.daemon, SIGTERM), 0);
	k = harness_reap(pid);
	assert_true(k == 0 || k == 2);
	status = wait_daemon_exit(10000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(audited("load", UID_LOADER, "slowterm", "decision="));
	if (meta_exists(UID_LOADER, "slowterm")) {
		assert_int_equal(harness_start(NULL), 0);
		assert_int_equal(ctl(&loader, "unload", "slowterm", NULL), 0);
		assert_true(WIFEXITED(harness_kill(SIGTERM)));
	}

	/* An unload between its commit and its pins' removal when SIGTERM comes: it finishes. */
	assert_int_equal(harness_start("--fault-inject=delay:unload-committed"), 0);
	load_and_attach("term", &prog_id);
	sc = (struct sync_client){.to_parent = p[1], .name = "term"};
	pid = harness_spawn_as(&tracer, client_request_across_sigterm, &sc);
	assert_true(pid > 0);
	assert_int_equal(read(p[0], &c, 1), 1);
	for (int i = 0; i < 2000 && meta_exists(UID_TRACER, "term"); i++)
		usleep(1000);
	assert_false(meta_exists(UID_TRACER, "term"));
	assert_int_equal(kill(H.daemon, SIGTERM), 0);
	/* Draining: no new connections meanwhile. */
	usleep(20000);
	{
		int s = harness_connect();

		assert_true(s < 0);
	}
	assert_int_equal(harness_reap(pid), 0);
	status = wait_daemon_exit(10000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(pins_exist(UID_TRACER, "term"));
	assert_true(prog_link_gone(prog_id));
	assert_true(audited("unload", UID_TRACER, "term", "decision=allow"));
	close(p[0]);
	close(p[1]);
	assert_int_equal(harness_start(NULL), 0);
}

/* The state letter of /proc/PID/stat ('T': stopped), 0 if unreadable. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/*
 * A reload just before a stop, while a request runs: the stop waits for that
 * request only, not for a worker started after the drain began. The reload
 * retires the idle workers and asks for new ones (a step at idle priority);
 * SIGTERM, pending at the same time, is handled before that step runs, so the
 * step finds the pool draining. The daemon is stopped while both signals are
 * sent, so both are pending when it resumes: the kernel hands the lower
 * (SIGHUP) over first. The running request is a named load stalled after
 * pinning, killed at --timeout (2 s); the daemon exits then, not at its stop
 * deadline (--timeout + 5 s).
 */
static void test_sigterm_after_reload(void **state)
{
	struct sync_client sc = {.object = harness_object("counter"), .name = "reloadterm"};
	unsigned drained, past;
	int p[2], status, k;
	double t0;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = start_request_across_sigterm(
		"--timeout=2 --verifier-timeout=1 --fault-inject=stall:load-pinned", &loader, &sc,
		p);
	/* This start's log lines are already there; the stop adds its own. */
	drained = log_count("every running request has finished", NULL);
	past = log_count("past the time limit", NULL);
	for (int i = 0; i < 5000 && !pins_exist(UID_LOADER, "reloadterm"); i++)
		usleep(1000);
	assert_true(pins_exist(UID_LOADER, "reloadterm"));
	/* A worker has the request and stalls: the others are idle (the pool refills). */
	usleep(200000);
	assert_int_equal(kill(H.daemon, SIGSTOP), 0);
	for (int i = 0; i < 2000 && proc_state(H.daemon) != 'T'; i++)
		usleep(1000);
	assert_int_equal(proc_state(H.daemon), 'T');
	assert_int_equal(kill(H.daemon, SIGHUP), 0);
	assert_int_equal(kill(H.daemon, SIGTERM), 0);
	t0 = now_s();
	assert_int_equal(kill(H.daemon, SIGCONT), 0);
	/* The stalled request gets its time-limit answer; the connection then closes. */
	k = harness_reap(pid);
	assert_true(k == 0 || k == 2);
	status = wait_daemon_exit(10000);
	fprintf(stderr, "reload, then SIGTERM: exited after %.1f s\n", now_s() - t0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(log_count("every running request has finished", NULL), drained + 1);
	assert_int_equal(log_count("past the time limit", NULL), past);
	close(p[0]);
	close(p[1]);
	/* The start sweeps what the killed load had pinned. */
	assert_int_equal(harness_start(NULL), 0);
	assert_true(wait_until_gone(UID_LOADER, "reloadterm"));
}

/* ---- class 7: the internal sweep is no client method ---- */

static int client_calls_sweep(void *arg)
{
	struct bpfbroker *b = NULL;
	char *reply = NULL;
	int *fds = NULL;
	size_t n_fds = 0;
	int k;

	watchdog(WATCHDOG);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_call_raw(b, "{\"bpfbroker\":1,\"id\":1,\"method\":\"sweep\",\"params\":{}}",
			       NULL, 0, &reply, &fds, &n_fds);
	CHECK(k == 0 && strstr(reply, "unknown-method"), "sweep: %d %s", k, reply ? reply : "");
	free(reply);
	free(fds);
	reply = NULL;
	k = bpfbroker_call_raw(b, "{\"bpfbroker\":1,\"id\":2,\"method\":\"hello\"}", NULL, 0,
			       &reply, &fds, &n_fds);
	CHECK(k == 0 && strstr(reply, "\"unload\"") && !strstr(reply, "sweep"), "hello: %s",
	      reply ? reply : "");
	free(reply);
	free(fds);
	bpfbroker_close(b);
	return 0;
}

static void test_sweep_not_a_client_method(void **state)
{
	restart(NULL);
	assert_int_equal(harness_as_user(&loader, client_calls_sweep, NULL), 0);
}

/* ---- class 8: supplementary groups ---- */

struct load_loop {
	volatile int stop;
	volatile unsigned ok, failed;
	volatile double slowest;
};

/* Load (check_only: no quota, no kernel objects) until told to stop; every one must succeed. */
static int client_load_loop(void *arg)
{
	struct load_loop *l = arg;
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .check_only = true};
	double end = now_s() + 120; /* should the test fail before it says stop */

	while (!l->stop && now_s() < end) {
		struct bpfbroker *b = NULL;
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		double t0 = now_s(), dt;
		int k;

		watchdog(WATCHDOG);
		k = bpfbroker_connect(H.socket, &b);
		if (k == 0)
			k = bpfbroker_load_file(b, harness_object("counter"), &opts, &res, &err);
		alarm(0);
		dt = now_s() - t0;
		if (dt > l->slowest)
			l->slowest = dt;
		if (k == 0)
			l->ok++;
		else
			l->failed++;
		if (!b)
			l->stop = 1; /* no daemon */
		bpfbroker_result_free(res);
		bpfbroker_error_free(err);
		bpfbroker_close(b);
	}
	return 0;
}

struct group_try {
	bool expect_ok;
	double elapsed;
};

static int client_with_groups(void *arg)
{
	struct group_try *g = arg;
	struct bpfbroker *b = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .check_only = true};
	double t0 = now_s();
	int k;

	watchdog(WATCHDOG);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_load_file(b, harness_object("counter"), &opts, &res, &err);
	alarm(0);
	g->elapsed = now_s() - t0;
	if (g->expect_ok) {
		CHECK(k == 0, "load with %d groups: %s", getgroups(0, NULL),
		      err ? err->message : strerror(-k));
	} else {
		CHECK(k < 0 && err, "load with %d groups: %d, no error", getgroups(0, NULL), k);
		fprintf(stderr, "%d groups: %s: %s\n", getgroups(0, NULL), err->code, err->message);
		CHECK(strcmp(err->code, "too-large") == 0 && strstr(err->message, "groups"),
		      "got %s: %s", err->code, err->message);
	}
	bpfbroker_result_free(res);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return 0;
}

static gid_t *groups_new(size_t n, gid_t first)
{
	gid_t *g = calloc(n, sizeof(gid_t));

	for (size_t i = 0; g && i < n; i++)
		g[i] = first + (gid_t)i;
	return g;
}

static void test_many_groups(void **state)
{
	struct load_loop *l =
		mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct group_try *g =
		mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gid_t *groups = groups_new(30000, 200000);
	struct user many = {UID_GROUPS, UID_GROUPS, groups, 30000};
	unsigned churn_before = log_count("cannot hand a job", NULL);
	pid_t pid;
	int k;

	assert_true(l != MAP_FAILED && g != MAP_FAILED && groups);
	memset(l, 0, sizeof(*l));
	restart(NULL);
	/* Another user loads all along. */
	pid = harness_spawn_as(&other, client_load_loop, l);
	assert_true(pid > 0);
	usleep(200000);

	/* 30,000 groups: refused at once, clearly. */
	*g = (struct group_try){.expect_ok = false};
	k = harness_as_user(&many, client_with_groups, g);
	fprintf(stderr,
		"30000 groups: client status %d after %.3f s; workers that could not "
		"take a job meanwhile: %u\n",
		k, g->elapsed, log_count("cannot hand a job", NULL) - churn_before);
	assert_int_equal(k, 0);
	assert_true(g->elapsed < 2.0);
	/* Just over the bound, refused; at the bound, served. */
	many.n_groups = MAX_GROUPS + 1;
	assert_int_equal(harness_as_user(&many, client_with_groups, g), 0);
	many.n_groups = MAX_GROUPS;
	*g = (struct group_try){.expect_ok = true};
	assert_int_equal(harness_as_user(&many, client_with_groups, g), 0);

	usleep(200000);
	l->stop = 1;
	assert_int_equal(harness_reap(pid), 0);
	fprintf(stderr, "another user meanwhile: %u loads, %u failed, slowest %.3f s\n", l->ok,
		l->failed, l->slowest);
	assert_int_equal(l->failed, 0);
	assert_true(l->ok > 0);
	assert_true(l->slowest < 5.0);
	/* No worker was killed for a job it could not take. */
	assert_int_equal(log_count("cannot hand a job", NULL), churn_before);
	munmap(l, sizeof(*l));
	munmap(g, sizeof(*g));
	free(groups);
}

/*
 * The largest identity (MAX_GROUPS groups of ten digits) with the largest
 * request: json-c would re-encode each "/" as "\/", doubling the params on the
 * way to the worker. The job must still fit and be answered by the worker.
 */
static char big_request[65536]; /* PROTO_MAX_REQUEST_BYTES, with its NUL */

static int client_big_job(void *arg)
{
	static char reply[1 << 20];
	double t0 = now_s();
	int s = harness_connect(), k;

	watchdog(WATCHDOG);
	CHECK(s >= 0, "connect: %m");
	/* Raw: the library would re-encode it first. */
	CHECK(raw_send(s, big_request, -1) == 0, "send: %m");
	k = raw_recv(s, reply, sizeof(reply), WATCHDOG * 1000);
	CHECK(k > 0, "the largest job: no reply: %s", strerror(-k));
	fprintf(stderr, "largest job: answered in %.3f s: %.100s\n", now_s() - t0, reply);
	/*
	 * Any answer of the worker's: list's params are decoded there only,
	 * which refuses a user name this long (NAMED.md).
	 */
	CHECK(strstr(reply, "user\\\" must be 1 to 255 characters"), "reply: %.200s", reply);
	close(s);
	return 0;
}

static void test_largest_job_fits(void **state)
{
	gid_t *groups = groups_new(MAX_GROUPS, 1000000000u);
	struct user many = {UID_GROUPS, UID_GROUPS, groups, MAX_GROUPS};
	const char *head = "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{\"user\":\"";
	size_t len = strlen(head);
	unsigned churn_before = log_count("cannot hand a job", NULL);

	assert_non_null(groups);
	memcpy(big_request, head, len);
	memset(big_request + len, '/', sizeof(big_request) - len - 8);
	strcpy(big_request + sizeof(big_request) - 8, "\"}}");
	assert_true(strlen(big_request) <= 65536);
	assert_int_equal(harness_as_user(&many, client_big_job, NULL), 0);
	assert_int_equal(log_count("cannot hand a job", NULL), churn_before);
	free(groups);
}

/* ---- class 8: lists larger than one reply ---- */

/* bpfctl ARGS as u with stdout in a file (a pipe would fill up); its text in *ret. */
static int ctl_big(const struct user *u, char **ret, ...)
{
	char exe[512], path[400], *argv[32];
	int n = 0, fd, saved, k;
	va_list ap;
	FILE *f;
	long size;

	snprintf(exe, sizeof(exe), "%s/client/bpfctl", H.build_dir);
	snprintf(path, sizeof(path), "%s/ctl.out", H.dir);
	argv[n++] = exe;
	argv[n++] = "--socket";
	argv[n++] = H.socket;
	va_start(ap, ret);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	k = harness_exec_as(u, argv);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	f = fopen(path, "re");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	*ret = calloc(1, (size_t)size + 1);
	if (*ret && fread(*ret, 1, (size_t)size, f) != (size_t)size) {
		free(*ret);
		*ret = NULL;
	}
	fclose(f);
	return *ret ? k : -1;
}

/* In bpfctl -j list output, every lp-NNN object, once; maps per object at least min_maps. */
static int check_listed(const char *what, const char *text, size_t min_maps)
{
	json_object *o = json_tokener_parse(text), *objects;
	bool seen[N_LIST_OBJECTS] = {};
	size_t n;

	CHECK(o && json_object_object_get_ex(o, "objects", &objects), "%s: no objects in %.200s",
	      what, text);
	n = json_object_array_length(objects);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(objects, i), *v, *maps;
		const char *name;
		unsigned idx;

		if (!json_object_object_get_ex(e, "name", &v))
			continue;
		name = json_object_get_string(v);
		if (sscanf(name, "lp-%u", &idx) != 1 || idx >= N_LIST_OBJECTS)
			continue;
		CHECK(!seen[idx], "%s: %s listed twice", what, name);
		seen[idx] = true;
		CHECK(json_object_object_get_ex(e, "maps", &maps) &&
			      json_object_array_length(maps) >= min_maps,
		      "%s: %s with too few maps", what, name);
	}
	for (size_t i = 0; i < N_LIST_OBJECTS; i++)
		CHECK(seen[i], "%s: lp-%03zu missing", what, i);
	fprintf(stderr, "%s: %zu objects, %zu bytes of JSON\n", what, n, strlen(text));
	json_object_put(o);
	return 0;
}

/* Page by hand: limit 7, following next, as the protocol says. */
static int client_pages(void *arg)
{
	struct bpfbroker *b = NULL;
	char req[512], cursor[160] = "";
	unsigned pages = 0, total = 0;
	int k;

	watchdog(60);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	for (;;) {
		char *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		json_object *o, *result, *objects, *next;

		if (cursor[0])
			snprintf(req, sizeof(req),
				 "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{"
				 "\"limit\":"
				 "7,\"cursor\":\"%s\"}}",
				 cursor);
		else
			snprintf(req, sizeof(req),
				 "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\","
				 "\"params\":{\"limit\":7}}");
		k = bpfbroker_call_raw(b, req, NULL, 0, &reply, &fds, &n_fds);
		CHECK(k == 0, "page %u: %s", pages, strerror(-k));
		o = json_tokener_parse(reply);
		CHECK(o && json_object_object_get_ex(o, "result", &result) &&
			      json_object_object_get_ex(result, "objects", &objects),
		      "page %u: %.300s", pages, reply);
		CHECK(json_object_array_length(objects) <= 7, "page of %zu",
		      json_object_array_length(objects));
		total += (unsigned)json_object_array_length(objects);
		pages++;
		cursor[0] = '\0';
		if (json_object_object_get_ex(result, "next", &next))
			snprintf(cursor, sizeof(cursor), "%s", json_object_get_string(next));
		json_object_put(o);
		free(reply);
		free(fds);
		if (!cursor[0])
			break;
		CHECK(pages < 1000, "no end to the pages");
	}
	CHECK(total == N_LIST_OBJECTS, "%u objects in %u pages", total, pages);
	/* A cursor that is no OWNER/NAME, and a limit out of range, are refused. */
	{
		static const char *const bad[] = {
			"{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{\"cursor\":"
			"\"x\"}}",
			"{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{\"limit\":0}}",
			"{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{\"cursor\":7}}",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char *reply = NULL;
			int *fds = NULL;
			size_t n_fds = 0;

			k = bpfbroker_call_raw(b, bad[i], NULL, 0, &reply, &fds, &n_fds);
			CHECK(k == 0 && strstr(reply, "invalid-request"), "%s: %s", bad[i],
			      reply ? reply : strerror(-k));
			free(reply);
			free(fds);
		}
	}
	bpfbroker_close(b);
	return 0;
}

/*
 * A cursor is where a page starts, never whose objects it lists: another
 * user, whose objects are not shared as "list" asks (no "shared"), naming
 * the loader's uid or one below it in the cursor still gets none of them.
 */
static int client_foreign_cursor(void *arg)
{
	static const char *const cursors[] = {"4402/lp-000", "4402/a", "0/a", "4401/zzz"};
	struct bpfbroker *b = NULL;

	watchdog(60);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	for (size_t i = 0; i < sizeof(cursors) / sizeof(cursors[0]); i++) {
		char req[256], *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		json_object *o, *result, *objects;
		int k;

		snprintf(req, sizeof(req),
			 "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{"
			 "\"cursor\":\"%s\"}}",
			 cursors[i]);
		k = bpfbroker_call_raw(b, req, NULL, 0, &reply, &fds, &n_fds);
		CHECK(k == 0, "cursor %s: %s", cursors[i], strerror(-k));
		o = json_tokener_parse(reply);
		CHECK(o && json_object_object_get_ex(o, "result", &result) &&
			      json_object_object_get_ex(result, "objects", &objects),
		      "cursor %s: %.300s", cursors[i], reply);
		CHECK(json_object_array_length(objects) == 0,
		      "cursor %s listed %zu objects of another user: %.300s", cursors[i],
		      json_object_array_length(objects), reply);
		CHECK(!strstr(reply, "lp-"), "cursor %s: %.300s", cursors[i], reply);
		json_object_put(o);
		free(reply);
		free(fds);
	}
	bpfbroker_close(b);
	return 0;
}

static void test_list_pages(void **state)
{
	char *text = NULL;
	double t0;

	restart(NULL);
	t0 = now_s();
	for (unsigned i = 0; i < N_LIST_OBJECTS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "lp-%03u", i);
		assert_int_equal(
			ctl(&loader, "load", harness_object("manymaps"), "--name", name, NULL), 0);
	}
	fprintf(stderr, "%d named objects of 64 maps loaded in %.1f s\n", N_LIST_OBJECTS,
		now_s() - t0);

	/* The owner, the admin (everyone's, and the owner's), and a user they are shared with. */
	assert_int_equal(ctl_big(&loader, &text, "-j", "list", NULL), 0);
	assert_int_equal(check_listed("list as the owner", text, 64), 0);
	assert_true(strlen(text) > 1024 * 1024);
	free(text);
	assert_int_equal(ctl_big(&root, &text, "-j", "list", "--all", NULL), 0);
	assert_int_equal(check_listed("list --all as root", text, 64), 0);
	free(text);
	assert_int_equal(ctl_big(&root, &text, "-j", "list", "--user", "4402", NULL), 0);
	assert_int_equal(check_listed("list --user as root", text, 64), 0);
	free(text);
	assert_int_equal(ctl_big(&other, &text, "-j", "list", "--shared", NULL), 0);
	assert_int_equal(check_listed("list --shared", text, 64), 0);
	free(text);
	/* And as text. */
	assert_int_equal(ctl_big(&loader, &text, "list", NULL), 0);
	for (unsigned i = 0; i < N_LIST_OBJECTS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "lp-%03u", i);
		assert_non_null(strstr(text, name));
	}
	free(text);
	assert_int_equal(harness_as_user(&loader, client_pages, NULL), 0);
	assert_int_equal(harness_as_user(&other, client_foreign_cursor, NULL), 0);

	for (unsigned i = 0; i < N_LIST_OBJECTS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "lp-%03u", i);
		assert_int_equal(ctl(&loader, "unload", name, NULL), 0);
	}
}

/* ---- class 8: the object memfd shrunk and sealed while the worker looks ---- */

static void *object_bytes(const char *name, size_t *ret_len)
{
	int fd = open(harness_object(name), O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *buf = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size)) &&
	    read(fd, buf, (size_t)st.st_size) == st.st_size)
		*ret_len = (size_t)st.st_size;
	else {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

struct shrinker {
	unsigned tries, seed;
	unsigned answered, internal;
};

static int client_shrinks(void *arg)
{
	struct shrinker *s = arg;
	static const char req[] = "{\"bpfbroker\":1,\"id\":1,\"method\":\"load\",\"params\":"
				  "{\"object_fd\":0,\"check_only\":true}}";
	static char reply[1 << 20];
	size_t len = 0;
	void *obj = object_bytes("counter", &len);
	int sock = -1;

	CHECK(obj, "cannot read the object");
	srand(s->seed);
	for (unsigned i = 0; i < s->tries; i++) {
		int fd = memfd_create("object", MFD_CLOEXEC | MFD_ALLOW_SEALING), k;

		CHECK(fd >= 0 && write(fd, obj, len) == (ssize_t)len, "memfd: %m");
		if (sock < 0)
			sock = harness_connect();
		CHECK(sock >= 0, "connect: %m");
		CHECK(raw_send(sock, req, fd) == 0, "send: %m");
		/* Shrink and seal at some point while the worker starts on it. */
		spin_us((unsigned)rand() % 400);
		CHECK(ftruncate(fd, 0) == 0, "ftruncate: %m");
		CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0,
		      "seal: %m");
		close(fd);
		k = raw_recv(sock, reply, sizeof(reply), WATCHDOG * 1000);
		CHECK(k > 0 || k == -ECONNRESET, "no reply: %s", strerror(-k));
		if (k < 0) {
			close(sock);
			sock = -1;
			continue;
		}
		s->answered++;
		s->internal += strstr(reply, "\"internal\"") != NULL;
	}
	if (sock >= 0)
		close(sock);
	free(obj);
	return 0;
}

static void test_memfd_shrunk_while_read(void **state)
{
	struct shrinker *s = mmap(NULL, 2 * sizeof(*s), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned before = log_count("died of signal 7", NULL), after, tries = 4000;
	const char *env = getenv("LIFECYCLE_SHRINK_TRIES");
	pid_t a, b;

	if (env)
		tries = (unsigned)strtoul(env, NULL, 10);

	assert_true(s != MAP_FAILED);
	restart(NULL);
	/* The race is narrow (a few microseconds in the old code): LIFECYCLE_SHRINK_TRIES=N tries
	 * harder. */
	s[0] = (struct shrinker){.tries = tries, .seed = 1};
	s[1] = (struct shrinker){.tries = tries, .seed = 2};
	/* Two users, so both workers are busy with it. */
	a = harness_spawn_as(&loader, client_shrinks, &s[0]);
	b = harness_spawn_as(&other, client_shrinks, &s[1]);
	assert_int_equal(harness_reap(a), 0);
	assert_int_equal(harness_reap(b), 0);
	after = log_count("died of signal 7", NULL);
	fprintf(stderr,
		"memfd shrunk while read: %u tries, %u answered (%u internal), %u workers "
		"died of SIGBUS\n",
		2 * tries, s[0].answered + s[1].answered, s[0].internal + s[1].internal,
		after - before);
	assert_int_equal(after, before);
	assert_int_equal(s[0].internal + s[1].internal, 0);
	munmap(s, 2 * sizeof(*s));
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	snprintf(
		policy, sizeof(policy),
		"{\"rules\": ["
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"program_types\": [\"tracepoint\"], \"helper_classes\": [\"base\"],"
		"   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}],"
		"   \"attach\": {\"tracepoints\": [\"sched:sched_process_fork\"]}},"
		"  \"limits\": {\"max_named_objects\": 64, \"max_attachments\": 64,"
		"   \"max_loads_per_minute\": 100000}},"
		" {\"match\": {\"uids\": [\"%d\", \"%d\", \"%d\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"],"
		"   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		"  \"limits\": {\"max_named_objects\": 400, \"max_maps\": 120,"
		"   \"max_loaded_programs\": 400, \"max_map_memory_bytes\": 4294967296,"
		"   \"max_loads_per_minute\": 100000}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"shared\": [{\"owner\": \"%d\", \"object\": \"lp-*\", \"map\": "
		"\"*\","
		"   \"access\": \"ro\"}]}}"
		"]}",
		UID_TRACER, UID_LOADER, UID_OTHER, UID_GROUPS, UID_OTHER, UID_LOADER);
	return harness_start_with_policy(policy);
}

static int teardown(void **state)
{
	/* The daemon's stderr went to its log: what a sanitizer found there, too. */
	unsigned bad = log_count("Sanitizer", NULL) + log_count("runtime error", NULL);

	if (bad) {
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "grep -A30 -E 'Sanitizer|runtime error' %s >&2",
			 daemon_log);
		(void)!system(cmd);
	}
	return harness_finish() < 0 || bad ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unload_hangup),
		cmocka_unit_test(test_unload_hangup_mid_change),
		cmocka_unit_test(test_load_hangup),
		cmocka_unit_test(test_deadline_kill_swept),
		cmocka_unit_test(test_sigterm_drains),
		cmocka_unit_test(test_sigterm_after_reload),
		cmocka_unit_test(test_sweep_not_a_client_method),
		cmocka_unit_test(test_many_groups),
		cmocka_unit_test(test_largest_job_fits),
		cmocka_unit_test(test_list_pages),
		cmocka_unit_test(test_memfd_shrunk_while_read),
	};

	/* LIFECYCLE_TESTS=PATTERN runs only the tests whose names match. */
	if (getenv("LIFECYCLE_TESTS"))
		cmocka_set_test_filter(getenv("LIFECYCLE_TESTS"));
	return cmocka_run_group_tests_name("lifecycle", tests, setup, teardown);
}
