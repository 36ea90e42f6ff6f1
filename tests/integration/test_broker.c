/* SPDX-License-Identifier: MIT */
/*
 * End to end: the real daemon as root, real clients as unprivileged uids,
 * the real kernel. Every security promise of the core broker is tried here by
 * a client that would profit from breaking it.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"
#include "proto/proto.h"

#define UID_NOBODY 65534
#define UID_TRACER 4242 /* may load tracing types, fds withheld */
#define UID_ATTACHER 4243 /* granted raw_tracepoint fds */
#define UID_STRANGER 4244 /* no rule matches */
#define UID_GROUPIE 4245 /* matches only through a supplementary group */
#define UID_MAPPED 100500 /* inside a container's mapped range */

static const struct user nobody = {UID_NOBODY, UID_NOBODY};
static const struct user tracer = {UID_TRACER, UID_TRACER};
static const struct user attacher = {UID_ATTACHER, UID_ATTACHER};
static const struct user stranger = {UID_STRANGER, UID_STRANGER};
static const struct user mapped = {UID_MAPPED, UID_MAPPED};
static gid_t group_gid;

static int connect_broker(struct bpfbroker **b)
{
	return bpfbroker_connect(H.socket, b);
}

static int expect_denied(const char *name, const char *code, const char *needle)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = harness_load(name, NULL, &res, &err);

	CHECK(k < 0, "%s loaded, but should be denied", name);
	CHECK(err, "%s: no error reply (%s)", name, strerror(-k));
	CHECK(strcmp(err->code, code) == 0, "%s: code %s, expected %s (%s)", name, err->code, code,
	      err->message);
	CHECK(strstr(err->message, needle), "%s: message \"%s\" lacks \"%s\"", name, err->message,
	      needle);
	bpfbroker_error_free(err);
	return 0;
}

/* ---- an allowed object, and the access of each fd in the kernel ---- */

static int client_counter_modes(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *cfg, *counts, *secret, *wo;
	const struct bpfbroker_program *prog;
	__u32 key = 0;
	__u64 value = 5;
	int k = harness_load("counter", NULL, &res, &err);

	CHECK(k == 0, "load failed: %s", err ? err->message : strerror(-k));
	cfg = bpfbroker_result_map(res, "config_map");
	counts = bpfbroker_result_map(res, "counts");
	secret = bpfbroker_result_map(res, "secret");
	wo = bpfbroker_result_map(res, "events_wo");
	prog = bpfbroker_result_program(res, "count_packets");
	CHECK(cfg && counts && secret && wo && prog, "result lacks a map or program");

	/* ro: lookup works, update is refused by the kernel itself. */
	CHECK(cfg->access == BPFBROKER_ACCESS_RO && cfg->fd >= 0, "config_map not ro");
	CHECK((fcntl(cfg->fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "config_map fd not O_RDONLY");
	CHECK(bpf_map_lookup_elem(cfg->fd, &key, &value) == 0, "ro lookup: %m");
	CHECK(bpf_map_update_elem(cfg->fd, &key, &value, BPF_ANY) < 0 && errno == EPERM,
	      "ro update was not refused with EPERM: %m");

	/* wo: the reverse. */
	CHECK(wo->access == BPFBROKER_ACCESS_WO && wo->fd >= 0, "events_wo not wo");
	CHECK(bpf_map_update_elem(wo->fd, &key, &value, BPF_ANY) == 0, "wo update: %m");
	CHECK(bpf_map_lookup_elem(wo->fd, &key, &value) < 0 && errno == EPERM,
	      "wo lookup was not refused with EPERM: %m");

	/* rw: both. */
	CHECK(counts->access == BPFBROKER_ACCESS_RW && counts->fd >= 0, "counts not rw");
	value = 5;
	CHECK(bpf_map_update_elem(counts->fd, &key, &value, BPF_ANY) == 0, "rw update: %m");
	value = 0;
	CHECK(bpf_map_lookup_elem(counts->fd, &key, &value) == 0, "rw lookup: %m");
	CHECK(value == 5, "rw lookup read %llu", (unsigned long long)value);

	/* none: no fd at all, and no way to get one by id. */
	CHECK(secret->access == BPFBROKER_ACCESS_NONE && secret->fd < 0, "secret got an fd");
	CHECK(secret->id > 0, "secret has no id");
	CHECK(bpf_map_get_fd_by_id(secret->id) < 0 && errno == EPERM,
	      "BPF_MAP_GET_FD_BY_ID was not refused: %m");
	CHECK(bpf_map_get_fd_by_id(cfg->id) < 0, "could reopen the ro map read-write by id");

	/* A socket filter's fd is handed out: attaching it needs a socket the holder owns. */
	CHECK(prog->fd >= 0 && prog->id > 0 && prog->tag, "socket filter fd withheld");
	{
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		CHECK(s >= 0 && setsockopt(s, SOL_SOCKET, SO_ATTACH_BPF, &prog->fd,
					   sizeof(prog->fd)) == 0,
		      "cannot attach the socket filter to an own socket: %m");
		close(s);
	}
	bpfbroker_result_free(res);
	return 0;
}

static void test_counter_modes(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_counter_modes, NULL), 0);
}

/* Whatever the broker loaded for a client lives only as long as the client's fds. */
static int client_load_and_report_ids(void *arg)
{
	int *pipe_w = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	__u32 ids[2];
	int k = harness_load("counter", NULL, &res, &err);

	CHECK(k == 0, "load failed: %s", err ? err->message : strerror(-k));
	ids[0] = bpfbroker_result_map(res, "counts")->id;
	ids[1] = bpfbroker_result_program(res, "count_packets")->id;
	CHECK(write(*pipe_w, ids, sizeof(ids)) == sizeof(ids), "write: %m");
	bpfbroker_result_free(res);
	return 0;
}

static void test_objects_die_with_client(void **state)
{
	int p[2];
	__u32 ids[2] = {};
	bool gone = false;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(harness_as_user(&nobody, client_load_and_report_ids, &p[1]), 0);
	assert_int_equal(read(p[0], ids, sizeof(ids)), sizeof(ids));
	close(p[0]);
	close(p[1]);
	/* Freed after an RCU grace period: poll for a while. */
	for (int i = 0; i < 200 && !gone; i++) {
		int m = bpf_map_get_fd_by_id(ids[0]), q = bpf_prog_get_fd_by_id(ids[1]);

		gone = m < 0 && q < 0;
		if (m >= 0)
			close(m);
		if (q >= 0)
			close(q);
		if (!gone)
			usleep(10000);
	}
	assert_true(gone);
}

/* ---- denials ---- */

static int client_denials(void *arg)
{
	if (expect_denied("rawtp", PROTO_E_DENIED,
			  "program \"rawtp_count\" has type raw_tracepoint, which your policy does "
			  "not allow"))
		return 1;
	/* The helper sits only in a subprogram in .text. */
	if (expect_denied("subprog_kernel", PROTO_E_DENIED,
			  "program \"uses_subprog\" calls bpf_probe_read_kernel (class "
			  "read_kernel_memory), which your policy does not allow"))
		return 1;
	/* ... or only in a bpf_loop callback: ktime and prandom are base, so it loads. */
	{
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		int k = harness_load("callback", NULL, &res, &err);

		CHECK(k == 0, "callback: %s", err ? err->message : strerror(-k));
		bpfbroker_result_free(res);
	}
	return 0;
}

static int client_kfunc(void *arg)
{
	/* tracer may load tracing programs, but kfunc calls are a class of their own (all named).
	 */
	return expect_denied("kfunc", PROTO_E_DENIED,
			     "program \"kfunc_prog\" calls kfuncs bpf_rcu_read_lock, "
			     "bpf_rcu_read_unlock (class kfunc), which your policy does not allow "
			     "(policy key helper_classes: kfunc)");
}

static void test_denials(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_denials, NULL), 0);
	assert_int_equal(harness_as_user(&tracer, client_kfunc, NULL), 0);
}

static int client_stranger(void *arg)
{
	return expect_denied("counter", PROTO_E_DENIED, "no policy rule matches uid 4244");
}

static void test_no_rule_no_load(void **state)
{
	assert_int_equal(harness_as_user(&stranger, client_stranger, NULL), 0);
}

static int client_groupie(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	bool expect = *(bool *)arg;
	int k = harness_load("counter", NULL, &res, &err);

	if (!expect) {
		CHECK(k < 0 && err && strcmp(err->code, PROTO_E_DENIED) == 0,
		      "loaded without the group");
		bpfbroker_error_free(err);
		return 0;
	}
	CHECK(k == 0, "with the group: %s", err ? err->message : strerror(-k));
	/* The group's rule grants every map read-only. */
	CHECK(bpfbroker_result_map(res, "counts")->access == BPFBROKER_ACCESS_RO, "not ro");
	bpfbroker_result_free(res);
	return 0;
}

static void test_group_rule(void **state)
{
	struct user with = {UID_GROUPIE, UID_GROUPIE, &group_gid, 1};
	struct user without = {UID_GROUPIE, UID_GROUPIE, NULL, 0};
	bool yes = true, no = false;

	assert_int_equal(harness_as_user(&with, client_groupie, &yes), 0);
	assert_int_equal(harness_as_user(&without, client_groupie, &no), 0);
}

/* ---- program fds mean attach rights ---- */

static int client_prog_fds(void *arg)
{
	bool granted = *(bool *)arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_program *p;
	int k = harness_load("rawtp", NULL, &res, &err);

	CHECK(k == 0, "rawtp: %s", err ? err->message : strerror(-k));
	p = bpfbroker_result_program(res, "rawtp_count");
	CHECK(p && p->id > 0, "not loaded");
	if (!granted) {
		CHECK(p->fd < 0, "raw_tracepoint fd handed out without a grant");
		CHECK(bpf_prog_get_fd_by_id(p->id) < 0, "reopened the program by id");
	} else {
		/* The grant is real: holding the fd is enough to attach it. */
		int link;

		CHECK(p->fd >= 0, "raw_tracepoint fd withheld despite program_fds");
		link = bpf_raw_tracepoint_open("sys_enter", p->fd);
		CHECK(link >= 0, "cannot attach the granted fd: %m");
		close(link);
	}
	bpfbroker_result_free(res);
	if (!granted) {
		k = harness_load("kprobe", NULL, &res, &err);
		CHECK(k == 0, "kprobe: %s", err ? err->message : strerror(-k));
		p = bpfbroker_result_program(res, "kprobe_count");
		CHECK(p && p->id > 0 && p->fd < 0, "kprobe fd handed out without a grant");
		bpfbroker_result_free(res);
	}
	return 0;
}

static void test_prog_fds(void **state)
{
	bool no = false, yes = true;

	assert_int_equal(harness_as_user(&tracer, client_prog_fds, &no), 0);
	assert_int_equal(harness_as_user(&attacher, client_prog_fds, &yes), 0);
}

/* ---- pins are per user ---- */

static int client_pinned(void *arg)
{
	__u32 *ret_id = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	int k = harness_load("pinned", NULL, &res, &err);

	CHECK(k == 0, "pinned: %s", err ? err->message : strerror(-k));
	m = bpfbroker_result_map(res, "shared_pin");
	CHECK(m && m->pinned && m->id > 0, "shared_pin not pinned");
	*ret_id = m->id;
	bpfbroker_result_free(res);
	return 0;
}

static int pinned_pipe = -1;

static int client_pinned_report(void *arg)
{
	__u32 got = 0;
	int r = client_pinned(&got);

	return r ? r : write(pinned_pipe, &got, sizeof(got)) == sizeof(got) ? 0 : 1;
}

static int run_pinned(const struct user *u, __u32 *id)
{
	int p[2], k;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pinned_pipe = p[1];
	k = harness_as_user(u, client_pinned_report, NULL);
	if (k == 0 && read(p[0], id, sizeof(*id)) != sizeof(*id))
		k = -1;
	close(p[0]);
	close(p[1]);
	return k;
}

static void test_pins_are_per_user(void **state)
{
	__u32 a1 = 0, a2 = 0, b1 = 0;
	char path[512];
	struct stat st;

	assert_int_equal(run_pinned(&nobody, &a1), 0);
	assert_int_equal(run_pinned(&nobody, &a2), 0);
	assert_int_equal(run_pinned(&tracer, &b1), 0);
	/* Same user, same name: the pin is reused. Another user: a map of its own. */
	assert_int_equal(a1, a2);
	assert_int_not_equal(a1, b1);
	snprintf(path, sizeof(path), "%s/%u/-pinned/shared_pin", H.pin_root, UID_NOBODY);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/%u", H.pin_root, UID_NOBODY);
	assert_int_equal(stat(path, &st), 0);
	/* Only root can enter the per-user directory. */
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 0777, 0700);
}

/* ---- configuration before load ---- */

static int client_configure(void *arg)
{
	static const __u64 cfg_value = 0x1122334455667788ull;
	struct bpfbroker_global globals[] = {{"cfg_value", &cfg_value, sizeof(cfg_value)}};
	struct bpfbroker_map_size sizes[] = {{"sized_later", 4}};
	struct bpfbroker_program_select progs[] = {{"cfg_prog", NULL, NULL},
						   {"custom_prog", "socket_filter", NULL}};
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts),
					   .globals = globals,
					   .n_globals = 1,
					   .map_sizes = sizes,
					   .n_map_sizes = 1,
					   .programs = progs,
					   .n_programs = 2};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *sized, *rodata = NULL;
	__u32 key = 0;
	__u64 v = 0;
	int k;

	/* Without a type, custom_prog's unknown section is an error that says what to do. */
	struct bpfbroker_program_select bare[] = {{"custom_prog", NULL, NULL}};
	struct bpfbroker_load_opts bare_opts = {
		.sz = sizeof(opts), .programs = bare, .n_programs = 1};

	k = harness_load("configurable", &bare_opts, &res, &err);
	CHECK(k < 0 && err && strstr(err->message, "--program custom_prog:TYPE"),
	      "unknown section not explained: %s", err ? err->message : "loaded");
	bpfbroker_error_free(err);

	k = harness_load("configurable", &opts, &res, &err);
	CHECK(k == 0, "configurable: %s", err ? err->message : strerror(-k));
	sized = bpfbroker_result_map(res, "sized_later");
	CHECK(sized && sized->max_entries == 4, "map size not applied");
	for (size_t i = 0; i < res->n_maps; i++)
		if (strstr(bpfbroker_result_map_at(res, i)->name, ".rodata"))
			rodata = bpfbroker_result_map_at(res, i);
	CHECK(rodata && rodata->fd >= 0, "no .rodata map fd");
	CHECK(bpf_map_lookup_elem(rodata->fd, &key, &v) == 0 && v == cfg_value,
	      "cfg_value not set: %llx", (unsigned long long)v);
	CHECK(bpfbroker_result_program(res, "custom_prog")->id > 0, "custom_prog not loaded");
	bpfbroker_result_free(res);

	/* Policy limits apply to the result: too large a map is refused. */
	sizes[0].max_entries = 1000000;
	k = harness_load("configurable", &opts, &res, &err);
	CHECK(k < 0 && err && strstr(err->message, "map \"sized_later\" has 1000000 entries"),
	      "oversized map not refused: %s", err ? err->message : "loaded");
	bpfbroker_error_free(err);
	return 0;
}

static void test_configure(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_configure, NULL), 0);
}

static int client_verifier_log(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = harness_load("reject", NULL, &res, &err);

	CHECK(k < 0 && err, "reject loaded");
	CHECK(strcmp(err->code, PROTO_E_LOAD) == 0, "code %s: %s", err->code, err->message);
	CHECK(err->verifier_log && strstr(err->verifier_log, "map_value_or_null"),
	      "no verifier log: %s", err->verifier_log ? err->verifier_log : "(none)");
	CHECK(strlen(err->verifier_log) < PROTO_MAX_VERIFIER_LOG, "log not bounded");
	bpfbroker_error_free(err);
	return 0;
}

static void test_verifier_log(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_verifier_log, NULL), 0);
}

/* ---- hostile input: every bad message gets an error, and the broker goes on ---- */

/* Send raw bytes with n_fds copies of fd; return the reply's error code (static buffer). */
static const char *raw_exchange(int sock, const void *buf, size_t len, int fd, size_t n_fds)
{
	static char code[64];
	int fds[16];
	char control[CMSG_SPACE(sizeof(fds))] = {};
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct proto_msg reply = {};
	json_object *e;
	const char *c = NULL;

	if (n_fds) {
		struct cmsghdr *cm;

		for (size_t i = 0; i < n_fds; i++)
			fds[i] = fd;
		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		return "send-failed";
	for (int i = 0; i < 500; i++) {
		int k = proto_recv(sock, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &reply, NULL);

		if (k == -EAGAIN) {
			usleep(10000);
			continue;
		}
		if (k <= 0)
			return "no-reply";
		break;
	}
	if (!reply.json)
		return "no-reply";
	if (json_object_object_get_ex(reply.json, "error", &e) &&
	    json_object_object_get_ex(e, "code", &e))
		c = json_object_get_string(e);
	snprintf(code, sizeof(code), "%s", c ? c : "ok");
	proto_msg_done(&reply);
	return code;
}

static int client_hostile(void *arg)
{
	static char big[PROTO_MAX_REQUEST_BYTES + 100];
	const char *load_req =
		"{\"bpfbroker\":1,\"id\":3,\"method\":\"load\",\"params\":{\"object_fd\":0}}";
	int sock = harness_connect(), obj = open(harness_object("counter"), O_RDONLY | O_CLOEXEC);
	int pfd[2];
	const char *c;

	CHECK(sock >= 0 && obj >= 0, "setup: %m");
	CHECK(pipe2(pfd, O_CLOEXEC) == 0, "pipe: %m");
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 1] = '}';

	c = raw_exchange(sock, "garbage", 7, -1, 0);
	CHECK(strcmp(c, PROTO_E_INVALID) == 0, "garbage: %s", c);
	c = raw_exchange(sock, "{\"bpfbroker\":1,\"id\":1", strlen("{\"bpfbroker\":1,\"id\":1"), -1,
			 0);
	CHECK(strcmp(c, PROTO_E_INVALID) == 0, "truncated JSON: %s", c);
	c = raw_exchange(sock, "{\"a\":1}\0{}", 10, -1, 0);
	CHECK(strcmp(c, PROTO_E_INVALID) == 0, "NUL byte: %s", c);
	c = raw_exchange(sock, big, sizeof(big), -1, 0);
	CHECK(strcmp(c, PROTO_E_TOO_LARGE) == 0, "oversized: %s", c);
	c = raw_exchange(
		sock,
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
		80, -1, 0);
	CHECK(strcmp(c, PROTO_E_INVALID) == 0, "deep nesting: %s", c);
	/*
	 * One container more than PROTO_MAX_JSON_DEPTH, the innermost empty:
	 * refused like any deeper one (json-c alone let it through).
	 */
	{
		char deep[256];
		int n = snprintf(
			deep, sizeof(deep),
			"{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\",\"params\":{\"a\":");

		for (int i = 0; i < PROTO_MAX_JSON_DEPTH - 1; i++)
			deep[n++] = '[';
		for (int i = 0; i < PROTO_MAX_JSON_DEPTH - 1; i++)
			deep[n++] = ']';
		n += snprintf(deep + n, sizeof(deep) - (size_t)n, "}}");
		c = raw_exchange(sock, deep, (size_t)n, -1, 0);
		CHECK(strcmp(c, PROTO_E_INVALID) == 0, "one container too deep: %s", c);
	}
	/* A named method's string params are bounded like load's names (NAMED.md). */
	{
		char req[512];
		int n = snprintf(req, sizeof(req),
				 "{\"bpfbroker\":1,\"id\":1,\"method\":\"list\",\"params\":{"
				 "\"user\":\"%0256d\"}}",
				 0);

		c = raw_exchange(sock, req, (size_t)n, -1, 0);
		CHECK(strcmp(c, PROTO_E_INVALID) == 0, "list with a 256-character user: %s", c);
	}
	c = raw_exchange(sock, "{\"bpfbroker\":2,\"id\":1,\"method\":\"hello\"}",
			 strlen("{\"bpfbroker\":2,\"id\":1,\"method\":\"hello\"}"), -1, 0);
	CHECK(strcmp(c, PROTO_E_VERSION) == 0, "version 2: %s", c);
	c = raw_exchange(sock, "{\"bpfbroker\":1,\"id\":1,\"method\":\"frobnicate\"}",
			 strlen("{\"bpfbroker\":1,\"id\":1,\"method\":\"frobnicate\"}"), -1, 0);
	CHECK(strcmp(c, PROTO_E_METHOD) == 0, "unknown method: %s", c);
	c = raw_exchange(sock, "{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\",\"x\":1}",
			 strlen("{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\",\"x\":1}"), -1, 0);
	CHECK(strcmp(c, PROTO_E_INVALID) == 0, "unknown key: %s", c);
	/* fds: a surplus one, one where none is expected, too many (truncated control message). */
	c = raw_exchange(sock, load_req, strlen(load_req), obj, 2);
	CHECK(strcmp(c, PROTO_E_FDS) == 0, "surplus fd: %s", c);
	c = raw_exchange(sock, "{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\"}",
			 strlen("{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\"}"), obj, 1);
	CHECK(strcmp(c, PROTO_E_FDS) == 0, "fd to hello: %s", c);
	c = raw_exchange(sock, load_req, strlen(load_req), obj, PROTO_MAX_REQUEST_FDS + 3);
	CHECK(strcmp(c, PROTO_E_FDS) == 0, "too many fds: %s", c);
	c = raw_exchange(sock, load_req, strlen(load_req), -1, 0);
	CHECK(strcmp(c, PROTO_E_FDS) == 0, "missing fd: %s", c);
	/* Objects must come as regular files: a pipe could make the worker wait forever. */
	c = raw_exchange(sock, load_req, strlen(load_req), pfd[0], 1);
	CHECK(strcmp(c, PROTO_E_OBJECT) == 0, "pipe as object: %s", c);
	/* Random bytes in a regular file. */
	{
		int mfd = memfd_create("junk", MFD_CLOEXEC);

		CHECK(mfd >= 0 && write(mfd, big, 4096) == 4096, "memfd: %m");
		c = raw_exchange(sock, load_req, strlen(load_req), mfd, 1);
		CHECK(strcmp(c, PROTO_E_OBJECT) == 0, "junk object: %s", c);
		close(mfd);
	}
	/* The same connection still works. */
	c = raw_exchange(sock, load_req, strlen(load_req), obj, 1);
	CHECK(strcmp(c, "ok") == 0, "valid load after abuse: %s", c);

	/* A client that sends a load and hangs up at once costs nothing lasting. */
	for (int i = 0; i < 5; i++) {
		int s2 = harness_connect();
		struct iovec iov = {.iov_base = (void *)load_req, .iov_len = strlen(load_req)};
		char control[CMSG_SPACE(sizeof(int))] = {};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = control,
				    .msg_controllen = sizeof(control)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &obj, sizeof(int));
		CHECK(s2 >= 0 && sendmsg(s2, &mh, MSG_NOSIGNAL) > 0, "send: %m");
		close(s2);
	}
	close(sock);
	close(obj);
	close(pfd[0]);
	close(pfd[1]);
	/* And everyone else is still served. */
	return client_counter_modes(NULL);
}

static void test_hostile_input(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_hostile, NULL), 0);
}

/* ---- bpfctl ---- */

static void test_bpfctl(void **state)
{
	char out[16384];
	const char *check_ok[] = {"check", harness_object("counter"), NULL};
	const char *check_no[] = {"check", harness_object("subprog_kernel"), NULL};
	const char *policy[] = {"policy", NULL};
	const char *run[] = {"run",
			     harness_object("counter"),
			     "--",
			     "/bin/sh",
			     "-c",
			     "echo \"$LISTEN_PID $$ $LISTEN_FDS $LISTEN_FDNAMES\"; "
			     "for fd in 3 4 5 6; do [ -e /proc/self/fd/$fd ] && echo fd$fd; done",
			     NULL};
	char expect[256];

	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), check_ok), 0);
	assert_non_null(strstr(out, "allowed"));
	assert_non_null(strstr(out, "map config_map (array, 1 entries): access ro"));
	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), check_no), 1);
	assert_non_null(strstr(out, "calls bpf_probe_read_kernel (class read_kernel_memory)"));
	assert_int_equal(harness_bpfctl(&stranger, out, sizeof(out), check_ok), 1);
	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), policy), 0);
	assert_non_null(strstr(out, "\"uid\": 65534"));
	assert_non_null(strstr(out, "socket_filter"));

	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), run), 0);
	/* LISTEN_PID is the shell's own pid: bpfctl exec'd it in place. */
	{
		int a = 0, b = 0;

		assert_int_equal(sscanf(out, "%d %d", &a, &b), 2);
		assert_int_equal(a, b);
	}
	snprintf(
		expect, sizeof(expect),
		" 4 "
		"map/config_map:map/counts:map/events_wo:prog/count_packets\nfd3\nfd4\nfd5\nfd6\n");
	assert_non_null(strstr(out, expect));
}

/* ---- objects the fuzzer found crashing libbpf 1.1.2: refused before libbpf sees them ---- */

static int client_malformed_btf(void *arg)
{
	static const struct {
		const char *file, *says;
	} files[] = {
		{"btf-bad-name.bpf.elf", "BTF"},
		{"btf-bad-type.bpf.elf", "BTF"},
		{"sections-out-of-range.bpf.elf", "section headers"},
		/* A struct_ops map without a struct_ops program: NULL dereference in libbpf. */
		{"struct-ops-without-program.bpf.elf", "struct_ops map but no struct_ops program"},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		struct bpfbroker *b;
		char path[600];
		int k;

		snprintf(path, sizeof(path), "%s/tests/malformed/%s",
			 getenv("BPFBROKER_TEST_SRC_DIR"), files[i].file);
		CHECK(connect_broker(&b) == 0, "connect");
		k = bpfbroker_load_file(b, path, NULL, &res, &err);
		bpfbroker_close(b);
		CHECK(k < 0 && err && strcmp(err->code, "bad-object") == 0 &&
			      strstr(err->message, files[i].says),
		      "%s: %d %s", files[i].file, k, err ? err->message : "(no error reply)");
		bpfbroker_error_free(err);
	}
	return 0;
}

static void test_malformed_btf(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_malformed_btf, NULL), 0);
}

/* ---- least privilege, read back from the kernel ---- */

/* A "Key:\tvalue" line of /proc/PID/status, as a number in base. */
#define CAPS(...) caps_of((const int[]){__VA_ARGS__, -1})
static unsigned long long caps_of(const int *caps)
{
	unsigned long long m = 0;

	for (; *caps >= 0; caps++)
		m |= 1ull << *caps;
	return m;
}

/* Does /proc/PID/exe end in suffix? */
static bool exe_is(pid_t pid, const char *suffix)
{
	char path[64], target[512];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return (size_t)n >= strlen(suffix) && strcmp(target + n - strlen(suffix), suffix) == 0;
}

/* Has the process mapped a file whose path contains what? */
static bool maps_mention(pid_t pid, const char *what)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static void test_privileges(void **state)
{
	/*
	 * CAP_NET_ADMIN 12, CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39: the
	 * event loop holds what it passes on to workers, and no CAP_SYS_PTRACE
	 * (19): it opens nothing of another process's (SIOCGSKNS on the
	 * connection for its network namespace; the worker reads a uprobe
	 * target's /proc/PID/status with no capability).
	 */
	unsigned long long daemon = CAPS(12, 21, 38, 39), worker = CAPS(12, 21, 38, 39);
	char path[64], children[256] = "";
	pid_t w = 0;
	FILE *f;

	assert_int_equal(harness_status_field(H.daemon, "CapEff", 16), 0);
	assert_int_equal(harness_status_field(H.daemon, "CapPrm", 16), daemon);
	assert_int_equal(harness_status_field(H.daemon, "CapBnd", 16), daemon);
	assert_int_equal(harness_status_field(H.daemon, "CapInh", 16), 0);
	assert_int_equal(harness_status_field(H.daemon, "CapAmb", 16), 0);
	assert_int_equal(harness_status_field(H.daemon, "NoNewPrivs", 10), 1);
	assert_false(harness_status_field(H.daemon, "CapPrm", 16) & 1ull << 19);
	assert_false(harness_status_field(H.daemon, "CapBnd", 16) & 1ull << 19);
	/* The same from the kernel's capget() on its pid, not through /proc. */
	{
		struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3,
						     .pid = H.daemon};
		struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

		assert_int_equal(syscall(SYS_capget, &h, d), 0);
		assert_int_equal((unsigned long long)d[1].permitted << 32 | d[0].permitted, daemon);
		assert_int_equal((unsigned long long)d[1].effective << 32 | d[0].effective, 0);
		assert_int_equal((unsigned long long)d[1].inheritable << 32 | d[0].inheritable, 0);
		assert_false(d[0].permitted & 1u << CAP_SYS_PTRACE);
	}

	/*
	 * An idle worker, forked ahead of demand by the daemon's one child, the
	 * spawner, which already holds only what workers may: less than the
	 * daemon, and only its own socket. After a policy reload (test_reload) a
	 * retired spawner and its workers may still be on their way out: take the
	 * newest child, and look again if the one found is gone before it was
	 * checked.
	 */
	for (int attempt = 0; attempt < 50; attempt++) {
		unsigned n_fds;

		w = 0;
		for (int level = 0; level < 2; level++) {
			pid_t parent = w ? w : H.daemon;

			w = 0;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent,
				 (int)parent);
			for (int i = 0; i < 100 && !w; i++) {
				char *p = children, *end;

				f = fopen(path, "re");
				assert_non_null(f);
				if (!fgets(children, sizeof(children), f))
					children[0] = '\0';
				fclose(f);
				for (long pid; (pid = strtol(p, &end, 10)) > 0; p = end)
					w = (pid_t)pid;
				if (!w)
					usleep(10000);
			}
			assert_true(w > 0);
			if (level == 0 && harness_count_fds(w) > 0) { /* the spawner */
				unsigned long long eff = 1;

				assert_int_equal(harness_status_field(w, "CapPrm", 16), worker);
				/* Exec'd with them as ambient: made permitted-only at once. */
				assert_int_equal(harness_status_field(w, "CapAmb", 16), 0);
				assert_int_equal(harness_status_field(w, "CapInh", 16), 0);
				assert_true(exe_is(w, "/bpfbroker-worker"));
				/*
				 * While it makes a worker it raises CAP_NET_ADMIN for a
				 * moment (caps_sndbuf_force()): that one and no other,
				 * and none once it is idle again.
				 */
				for (int i = 0; i < 100 && eff; i++) {
					eff = harness_status_field(w, "CapEff", 16);
					assert_true(eff == 0 ||
						    eff == 1ull << 12 /* CAP_NET_ADMIN */);
					if (eff)
						usleep(10000);
				}
				assert_int_equal(eff, 0);
				assert_int_equal(harness_status_field(w, "NoNewPrivs", 10), 1);
			}
		}
		/*
		 * A live worker has at least stdio: none means it exited (or is a
		 * zombie). More than its four means it was caught between fork() and
		 * closing what it inherited from the spawner: look again.
		 */
		n_fds = harness_count_fds(w);
		if (n_fds != 4) {
			usleep(20000);
			continue;
		}
		assert_int_equal(harness_status_field(w, "CapEff", 16), 0);
		assert_int_equal(harness_status_field(w, "CapPrm", 16), worker);
		assert_int_equal(harness_status_field(w, "CapAmb", 16), 0);
		assert_int_equal(harness_status_field(w, "NoNewPrivs", 10), 1);
		/* Forked from the lean worker executable, not a copy of the daemon. */
		assert_true(exe_is(w, "/bpfbroker-worker"));
		assert_false(maps_mention(w, "libsystemd"));
		/* stdin, stdout, stderr and the socket to the event loop; nothing of anyone else.
		 */
		assert_int_equal(n_fds, 4);
		return;
	}
	fail_msg("no idle worker with exactly stdin, stdout, stderr and its socket was seen");
}

/* ---- load_with_perfmon ---- */

static int client_ptrleak(void *arg)
{
	bool granted = arg != NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("ptrleak", NULL, &r, &e);

	if (granted) {
		CHECK(k == 0, "with load_with_perfmon: %s", e ? e->message : strerror(-k));
		bpfbroker_result_free(r);
		return 0;
	}
	/* The verifier's own pointer-leak check, as for any unprivileged loader. */
	CHECK(k < 0 && e, "without load_with_perfmon the pointer leak loaded");
	CHECK(strcmp(e->code, "load-failed") == 0, "code %s: %s", e->code, e->message);
	CHECK(e->verifier_log && strstr(e->verifier_log, "leaks addr"), "verifier log: %s",
	      e->verifier_log ? e->verifier_log : "(none)");
	bpfbroker_error_free(e);
	return 0;
}

static void test_load_with_perfmon(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_ptrleak, NULL), 0);
	assert_int_equal(harness_as_user(&tracer, client_ptrleak, (void *)1), 0);
}

/* ---- the quickstart's example, policy reload, configuration check ---- */

static void test_example(void **state)
{
	char out[4096], obj[512], exe[512];
	const char *run[] = {"run", obj, "--", exe, NULL};

	snprintf(obj, sizeof(obj), "%s/examples/count_packets.bpf.o", H.build_dir);
	snprintf(exe, sizeof(exe), "%s/examples/socket-counter", H.build_dir);
	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), run), 0);
	assert_non_null(strstr(out, "counted 3 packets"));
	assert_non_null(strstr(out, "updating config_step was refused"));
}

static int client_counter_allowed(void *arg)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("counter", NULL, &r, &e);

	if (k < 0)
		fprintf(stderr, "load: %s\n", e ? e->message : strerror(-k));
	bpfbroker_result_free(r);
	bpfbroker_error_free(e);
	return k < 0 ? 1 : 0;
}

static void test_uid_range(void **state)
{
	/* 100500 is named by no rule except through the range "100000-165535". */
	assert_int_equal(harness_as_user(&mapped, client_counter_allowed, NULL), 0);
}

static void reload_and_wait(void)
{
	assert_int_equal(harness_reload(), 0);
}

static void test_reload(void **state)
{
	char path[512];

	assert_int_not_equal(harness_as_user(&stranger, client_counter_allowed, NULL), 0);
	/* A broken file: the whole new policy is refused, the old one stays. */
	assert_int_equal(harness_write_policy("60-broken.json", "{\"rules\": [ {\"alow\": {}} ]}"),
			 0);
	reload_and_wait();
	assert_int_equal(harness_as_user(&nobody, client_counter_allowed, NULL), 0);
	assert_int_not_equal(harness_as_user(&stranger, client_counter_allowed, NULL), 0);
	/* A good new rule takes effect on reload... */
	assert_int_equal(
		harness_write_policy(
			"60-broken.json",
			"{\"rules\": [{\"match\": {\"uids\": [\"4244\"]}, \"allow\": "
			"{\"program_types\": [\"socket_filter\"], \"helper_classes\": [\"base\"], "
			"\"maps\": [{\"name\": \"*\", \"access\": \"ro\"}]}}]}"),
		0);
	reload_and_wait();
	assert_int_equal(harness_as_user(&stranger, client_counter_allowed, NULL), 0);
	/* ...and removing it takes the right away again. */
	snprintf(path, sizeof(path), "%s/60-broken.json", H.policy_dir);
	assert_int_equal(unlink(path), 0);
	reload_and_wait();
	assert_int_not_equal(harness_as_user(&stranger, client_counter_allowed, NULL), 0);
}

static void test_check_config(void **state)
{
	char cmd[1024], out[1024] = "";
	FILE *f;
	int status;

	assert_int_equal(harness_write_policy("70-bad.json", "{\"rules\": [ {\"match\": {\"uids\": "
							     "[\"x\"]}} ]}"),
			 0);
	snprintf(cmd, sizeof(cmd), "%s/daemon/bpfbrokerd --check-config --policy-dir %s 2>&1",
		 H.build_dir, H.policy_dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	status = pclose(f);
	snprintf(cmd, sizeof(cmd), "%s/70-bad.json", H.policy_dir);
	unlink(cmd);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	/* The error names the file and the place in it. */
	assert_non_null(strstr(out, "70-bad.json: rules[0].match.uids[0]"));
}

/* ---- nothing left behind ---- */

static unsigned daemon_fds_at_start;

/* After the first load: sd-event has made its timerfd for job timeouts by then. */
static void test_daemon_fds_baseline(void **state)
{
	usleep(200000); /* the pool refills, so idle workers' sockets are counted */
	daemon_fds_at_start = harness_count_fds(H.daemon);
	assert_int_not_equal(daemon_fds_at_start, 0);
}

static void test_daemon_fds_flat(void **state)
{
	/* Every connection the tests made is closed; idle workers are the same count. */
	usleep(100000);
	if (harness_count_fds(H.daemon) != daemon_fds_at_start) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd >&2", (int)H.daemon);
		fprintf(stderr, "daemon had %u fds at start\n", daemon_fds_at_start);
		(void)system(cmd);
	}
	assert_int_equal(harness_count_fds(H.daemon), daemon_fds_at_start);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];
	const char *group = harness_find_group(&group_gid);

	if (!group)
		return -1;
	if (harness_init() < 0)
		return -1;
	snprintf(
		policy, sizeof(policy),
		"{\"rules\": ["
		" {\"match\": {\"uids\": [\"65534\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"],"
		"   \"pinning\": true,"
		"   \"maps\": [{\"name\": \"config*\", \"access\": \"ro\"},"
		"            {\"name\": \"secret\", \"access\": \"none\"},"
		"            {\"name\": \"events_wo\", \"access\": \"wo\"},"
		"            {\"name\": \"*\", \"access\": \"rw\"}]},"
		"  \"limits\": {\"max_map_entries\": 1024}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\", \"raw_tracepoint\", "
		"\"kprobe\", \"tracing\"],"
		"   \"helper_classes\": [\"base\"], \"pinning\": true, \"load_with_perfmon\": true,"
		"   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"program_types\": [\"raw_tracepoint\"], \"program_fds\": "
		"[\"raw_tracepoint\"],"
		"   \"helper_classes\": [\"base\"], \"maps\": [{\"name\": \"*\", \"access\": "
		"\"rw\"}]}},"
		" {\"match\": {\"uids\": [\"100000-165535\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"],"
		"   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}]}},"
		" {\"match\": {\"groups\": [\"%s\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"],"
		"   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}]}}"
		"]}",
		UID_TRACER, UID_ATTACHER, group);
	if (harness_write_policy("50-test.json", policy) < 0)
		return -1;
	harness_mark_kernel_objects();
	if (harness_start(NULL) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	if (harness_stop() < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_modes),
		cmocka_unit_test(test_daemon_fds_baseline),
		cmocka_unit_test(test_objects_die_with_client),
		cmocka_unit_test(test_denials),
		cmocka_unit_test(test_no_rule_no_load),
		cmocka_unit_test(test_group_rule),
		cmocka_unit_test(test_prog_fds),
		cmocka_unit_test(test_pins_are_per_user),
		cmocka_unit_test(test_configure),
		cmocka_unit_test(test_verifier_log),
		cmocka_unit_test(test_hostile_input),
		cmocka_unit_test(test_bpfctl),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_uid_range),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_check_config),
		cmocka_unit_test(test_malformed_btf),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_load_with_perfmon),
		cmocka_unit_test(test_daemon_fds_flat),
	};

	return cmocka_run_group_tests_name("broker", tests, setup, teardown);
}
