/* SPDX-License-Identifier: MIT */
/*
 * Brokered uprobes on the caller's own processes, end to end: clients as
 * real unprivileged uids start the process to probe themselves, the real
 * daemon attaches, the real kernel counts. Only the bound process counts;
 * every process the caller may not look into is refused, and so is a stale
 * pidfd, a program reading kernel memory and a caller without the grant.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"
#include "uprobe_target_proc.h"

#define UID_PROBER 65534 /* nobody: kprobe type, attach.uprobes */
#define UID_NOGRANT 4341 /* kprobe type, but not attach.uprobes */
#define UID_KREADER 4342 /* also read_kernel_memory */
#define UID_STRANGER 4343 /* owns processes the prober may not probe */

static const struct user prober = {UID_PROBER, UID_PROBER};
static const struct user nogrant = {UID_NOGRANT, UID_NOGRANT};
static const struct user kreader = {UID_KREADER, UID_KREADER};
static const struct user stranger = {UID_STRANGER, UID_STRANGER};

#define SYMBOL "uprobe_target_work"
#define SEMAPHORE "uprobe_target_semaphore"

static char target_exe[512]; /* the test binary to probe */
static char setuid_exe[512]; /* a copy, setuid to UID_STRANGER */
static char own_exe[512]; /* a copy the prober owns: USDT semaphores only in one's own binaries */

/* bpfctl as u; stdout in out. */
#define ctl harness_ctl
#define out harness_out

/*
 * An attach of a probe where one with another USDT semaphore (or none) was
 * just detached: the kernel frees the old probe in the background, and
 * refuses (EINVAL) a different semaphore at the same place until then.
 */
static int ctl_attach_retrying(const struct user *u, const char *prog, const char *where,
			       const char *pid, const char *semaphore)
{
	int k = 2;

	for (int i = 0; i < 100 && k == 2; i++) {
		if (i)
			usleep(50000);
		k = semaphore
			    ? ctl(u, "attach", prog, "uprobe", where, "--pid", pid, "--semaphore",
				  semaphore, "--pin", NULL)
			    : ctl(u, "attach", prog, "uprobe", where, "--pid", pid, "--pin", NULL);
	}
	return k;
}

/* ---- the library, as a client uses it ---- */

/* Load object by name; only whether it loaded matters here. */
static int lib_load(const char *object, const char *name, struct bpfbroker_error **err)
{
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .name = name};
	struct bpfbroker_result *res = NULL;
	int k = harness_load(object, &opts, &res, err);

	bpfbroker_result_free(res);
	return k;
}

struct probe {
	const char *object, *program;
	const char *symbol; /* or NULL: offset is a file offset */
	uint64_t offset;
	bool retprobe;
	const char *semaphore;
	int pidfd; /* or -1: pidfd_open(pid) */
	pid_t pid;
	int binary_fd; /* or -1: target_exe */
};

/* Attach as the client: we open the binary and the pidfd ourselves. */
static int lib_attach(const struct probe *p, struct bpfbroker_error **err)
{
	struct bpfbroker_attach_opts o = {
		.sz = sizeof(o),
		.object = p->object,
		.program = p->program,
		.target_type = "uprobe",
		.cgroup_fd = -1,
		.name = p->symbol,
		.pin = true,
		.uprobe_offset = p->offset,
		.retprobe = p->retprobe,
		.semaphore = p->semaphore,
	};
	struct bpfbroker *b;
	int k;

	*err = NULL;
	o.binary_fd =
		p->binary_fd >= 0 ? dup(p->binary_fd) : open(target_exe, O_RDONLY | O_CLOEXEC);
	o.pidfd = p->pidfd >= 0 ? dup(p->pidfd) : (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (o.binary_fd < 0 || o.pidfd < 0)
		return -errno;
	k = bpfbroker_connect(H.socket, &b);
	if (k == 0) {
		k = bpfbroker_attach(b, &o, NULL, NULL, err);
		bpfbroker_close(b);
	}
	close(o.binary_fd);
	close(o.pidfd);
	return k;
}

/*
 * The error of an attach that must fail: its code is code and its message has
 * what; a refusal names key (harness_denial_has_key(): NULL any, "" none).
 */
static int refused(int k, struct bpfbroker_error *e, const char *code, const char *what,
		   const char *key)
{
	int ok = k < 0 && e && strcmp(e->code, code) == 0 && strstr(e->message, what) &&
		 (strcmp(code, "policy-denied") != 0 || harness_denial_has_key(e, key));

	if (!ok)
		fprintf(stderr, "expected %s (\"%s\"), got %d: %s: %s\n", code, what, k,
			e ? e->code : "-", e ? e->message : strerror(-k));
	bpfbroker_error_free(e);
	return ok ? 0 : -1;
}

/* A map of the caller's object, read through the read-only fd the broker hands out. */
static int lib_count(const char *object, const char *map, uint64_t *ret)
{
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *m;
	struct bpfbroker *b;
	uint32_t key = 0;
	uint64_t v = 1;
	int k = bpfbroker_connect(H.socket, &b);

	if (k < 0)
		return k;
	k = bpfbroker_fds(b, object, &res, &err);
	bpfbroker_close(b);
	bpfbroker_error_free(err);
	if (k < 0)
		return k;
	m = bpfbroker_result_map(res, map);
	if (!m || m->access != BPFBROKER_ACCESS_RO || m->fd < 0 ||
	    bpf_map_lookup_elem(m->fd, &key, ret) < 0 ||
	    /* ro: the kernel refuses writes through this fd */
	    bpf_map_update_elem(m->fd, &key, &v, BPF_ANY) == 0 || errno != EPERM)
		k = -EPERM;
	bpfbroker_result_free(res);
	return k;
}

/* ---- counting exactly, and only in the bound process ---- */

static int client_counts_own_process(void *arg)
{
	struct target a = {}, b = {};
	struct bpfbroker_error *err = NULL;
	uint64_t calls = 0, returns = 0;
	int k;

	CHECK(target_start(&prober, true, target_exe, &a) == 0, "start a");
	CHECK(target_start(&prober, true, target_exe, &b) == 0, "start b");
	/* Calls before the attach are not counted. */
	CHECK(target_call(&a, 5) == 0, "call");
	k = lib_load("uprobe", "up", &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	k = lib_attach(&(struct probe){.object = "up",
				       .program = "count_calls",
				       .symbol = SYMBOL,
				       .pid = a.pid,
				       .pidfd = -1,
				       .binary_fd = -1},
		       &err);
	CHECK(k == 0, "attach: %s", err ? err->message : strerror(-k));
	k = lib_attach(&(struct probe){.object = "up",
				       .program = "count_returns",
				       .symbol = SYMBOL,
				       .retprobe = true,
				       .pid = a.pid,
				       .pidfd = -1,
				       .binary_fd = -1},
		       &err);
	CHECK(k == 0, "attach retprobe: %s", err ? err->message : strerror(-k));
	/* The second instance runs the same binary: the pid binding keeps it out. */
	CHECK(target_call(&a, 1000) == 0 && target_call(&b, 777) == 0, "calls");
	CHECK(lib_count("up", "uprobe_calls", &calls) == 0, "read calls");
	CHECK(lib_count("up", "uprobe_returns", &returns) == 0, "read returns");
	CHECK(calls == 1000, "counted %llu calls, want 1000", (unsigned long long)calls);
	CHECK(returns == 1000, "counted %llu returns, want 1000", (unsigned long long)returns);
	CHECK(target_call(&a, 1) == 0 && lib_count("up", "uprobe_calls", &calls) == 0 &&
		      calls == 1001,
	      "one more call: %llu", (unsigned long long)calls);
	CHECK(harness_unload("up") == 0, "unload");
	/* Unloaded: the probes are gone (the process goes on without them). */
	CHECK(target_call(&a, 3) == 0, "calls after unload");
	target_stop(&a);
	target_stop(&b);
	return 0;
}

static void test_counts_own_process(void **state)
{
	assert_int_equal(harness_as_user(&prober, client_counts_own_process, NULL), 0);
}

/* ---- bpfctl: symbol, file offset, semaphore, pinning, show ---- */

static uint64_t map_value(const struct user *u, const char *ref)
{
	const char *p;

	if (ctl(u, "-j", "map", "dump", ref, NULL) != 0 || !(p = strstr(out, "\"value\": \"")))
		return UINT64_MAX;
	p += strlen("\"value\": \"");
	/* Little-endian bytes as hex. */
	{
		uint64_t v = 0;

		for (int i = 7; i >= 0; i--) {
			unsigned byte;

			if (sscanf(p + 2 * i, "%2x", &byte) != 1)
				return UINT64_MAX;
			v = v << 8 | byte;
		}
		return v;
	}
}

static void test_bpfctl_attach(void **state)
{
	struct target t = {};
	char where[600], pid[16], off[32];
	const char *p;

	assert_int_equal(target_start(&prober, true, own_exe, &t), 0);
	snprintf(pid, sizeof(pid), "%d", (int)t.pid);
	snprintf(where, sizeof(where), "%s:%s", own_exe, SYMBOL);
	assert_int_equal(ctl(&prober, "load", harness_object("uprobe"), "--name", "cli", NULL), 0);
	/* Always pinned: the kernel cannot detach a uprobe link from a held fd. */
	assert_int_not_equal(ctl(&prober, "attach", "cli/count_calls", "uprobe", where, "--pid",
				 pid, "--", "/bin/true", NULL),
			     0);
	assert_int_not_equal(
		ctl(&prober, "attach", "cli/count_calls", "uprobe", where, "--pin", NULL),
		0); /* no --pid */
	/* A USDT semaphore: the kernel counts it up while the probe is attached. */
	assert_int_equal(target_semaphore(&t), 0);
	assert_int_equal(ctl_attach_retrying(&prober, "cli/count_calls", where, pid, SEMAPHORE), 0);
	assert_int_equal(target_semaphore(&t), 1);
	assert_int_equal(ctl(&prober, "show", "cli", NULL), 0);
	p = strstr(out, "uprobe at file offset ");
	assert_non_null(p);
	snprintf(off, sizeof(off), "%s", p + strlen("uprobe at file offset "));
	off[strcspn(off, " \n")] = '\0';
	assert_int_equal(ctl(&prober, "detach", "cli/count_calls", NULL), 0);
	assert_int_equal(target_semaphore_becomes(&t, 0), 0);
	/* The same place by file offset, as USDT notes and uprobe_events give it. */
	snprintf(where, sizeof(where), "%s:%s", own_exe, off);
	assert_int_equal(ctl_attach_retrying(&prober, "cli/count_calls", where, pid, NULL), 0);
	assert_int_equal(target_call(&t, 42), 0);
	assert_int_equal(map_value(&prober, "cli/uprobe_calls"), 42);
	/* Probes go on functions only: a data symbol is none, nor is a name the binary lacks. */
	snprintf(where, sizeof(where), "%s:%s", own_exe, SEMAPHORE);
	assert_int_equal(ctl(&prober, "attach", "cli/count_returns", "uprobe", where, "--pid", pid,
			     "--retprobe", "--pin", NULL),
			 2);
	snprintf(where, sizeof(where), "%s:no_such_function", own_exe);
	assert_int_equal(ctl(&prober, "-j", "attach", "cli/count_returns", "uprobe", where, "--pid",
			     pid, "--pin", NULL),
			 2);
	assert_non_null(strstr(out, "not-found"));
	assert_int_equal(ctl(&prober, "unload", "cli", NULL), 0);
	target_stop(&t);
}

/* ---- refusals ---- */

struct refusal_args {
	pid_t stranger, setuid_pid;
};

static int client_refusals(void *arg)
{
	const struct refusal_args *a = arg;
	struct bpfbroker_error *err = NULL;
	struct target t = {};
	char reply[64];
	int k, pidfd, binary;

	k = lib_load("uprobe", "ref", &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
#define ATTACH_TO(p_, pidfd_)                                                                      \
	lib_attach(&(struct probe){.object = "ref",                                                \
				   .program = "count_calls",                                       \
				   .symbol = SYMBOL,                                               \
				   .pid = (p_),                                                    \
				   .pidfd = (pidfd_),                                              \
				   .binary_fd = -1},                                               \
		   &err)

	/* Another user's process. */
	k = ATTACH_TO(a->stranger, -1);
	CHECK(refused(k, err, "policy-denied", "is not yours", "") == 0, "stranger");
	/* A setuid program the caller started: its effective uid is not the caller's. */
	k = ATTACH_TO(a->setuid_pid, -1);
	CHECK(refused(k, err, "policy-denied", "effective uid", "") == 0, "setuid");
	/* init. */
	k = ATTACH_TO(1, -1);
	CHECK(refused(k, err, "policy-denied", "init", "") == 0, "pid 1");

	/* My own process, but it could still exec a setuid program. */
	CHECK(target_start(&prober, false, target_exe, &t) == 0, "start");
	k = ATTACH_TO(t.pid, -1);
	CHECK(refused(k, err, "policy-denied", "no_new_privs", "") == 0, "without no_new_privs");
	target_stop(&t);

	/* My own, with no_new_privs, but not dumpable (as ssh-agent makes itself). */
	CHECK(target_start(&prober, true, target_exe, &t) == 0, "start");
	CHECK(target_cmd(&t, "nodump", reply, sizeof(reply)) == 0 && strcmp(reply, "ok") == 0,
	      "nodump");
	k = ATTACH_TO(t.pid, -1);
	CHECK(refused(k, err, "policy-denied", "not dumpable", "") == 0, "not dumpable");
	target_stop(&t);

	/* A stale pidfd: the process exited (a zombie), then was reaped. */
	CHECK(target_start(&prober, true, target_exe, &t) == 0, "start");
	pidfd = (int)syscall(SYS_pidfd_open, t.pid, 0);
	CHECK(pidfd >= 0, "pidfd_open: %m");
	close(t.cmds);
	{
		siginfo_t si = {};

		/* Exited, not reaped: the pid is still its own. */
		CHECK(waitid(P_PID, (id_t)t.pid, &si, WEXITED | WNOWAIT) == 0, "waitid");
	}
	k = ATTACH_TO(t.pid, pidfd);
	CHECK(refused(k, err, "not-found", "exited", NULL) == 0, "zombie");
	close(t.replies);
	CHECK(waitpid(t.pid, NULL, 0) == t.pid, "reap");
	t.pid = 0;
	k = ATTACH_TO(0, pidfd);
	CHECK(refused(k, err, "not-found", "stale", NULL) == 0, "reaped");
	close(pidfd);

	/* Not a pidfd; not an ELF file. */
	CHECK(target_start(&prober, true, target_exe, &t) == 0, "start");
	binary = open(target_exe, O_RDONLY | O_CLOEXEC);
	k = ATTACH_TO(t.pid, binary);
	CHECK(refused(k, err, "invalid-request", "not a pidfd", NULL) == 0, "not a pidfd");
	close(binary);
	binary = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	k = lib_attach(&(struct probe){.object = "ref",
				       .program = "count_calls",
				       .symbol = SYMBOL,
				       .pid = t.pid,
				       .pidfd = -1,
				       .binary_fd = binary},
		       &err);
	CHECK(refused(k, err, "invalid-request", "not an ELF", NULL) == 0, "not an ELF");
	close(binary);
	target_stop(&t);
#undef ATTACH_TO

	/* Reading kernel memory needs its own class, uprobe or not. */
	k = lib_load("uprobe_kread", "kr", &err);
	CHECK(refused(k, err, "policy-denied", "read_kernel_memory",
		      "helper_classes: read_kernel_memory") == 0,
	      "kread");
	CHECK(harness_unload("ref") == 0, "unload");
	return 0;
}

/* Granted the type, not the attach; and granted read_kernel_memory. */
static int client_other_grants(void *arg)
{
	const bool kread = *(const bool *)arg;
	struct bpfbroker_error *err = NULL;
	struct target t = {};
	int k;

	CHECK(target_start(kread ? &kreader : &nogrant, true, target_exe, &t) == 0, "start");
	k = lib_load(kread ? "uprobe_kread" : "uprobe", "g", &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	k = lib_attach(&(struct probe){.object = "g",
				       .program = kread ? "peek_kernel" : "count_calls",
				       .symbol = SYMBOL,
				       .pid = t.pid,
				       .pidfd = -1,
				       .binary_fd = -1},
		       &err);
	if (kread)
		CHECK(k == 0, "attach: %s", err ? err->message : strerror(-k));
	else
		CHECK(refused(k, err, "policy-denied",
			      "does not allow attaching uprobes (policy key attach.uprobes)",
			      "attach.uprobes") == 0,
		      "no grant");
	CHECK(harness_unload("g") == 0, "unload");
	target_stop(&t);
	return 0;
}

static void test_refusals(void **state)
{
	struct target stranger_t = {}, setuid_t = {};
	struct refusal_args a;
	bool kread;

	/* A process of another user, and a setuid one the prober starts (no no_new_privs). */
	assert_int_equal(target_start(&stranger, true, target_exe, &stranger_t), 0);
	assert_int_equal(target_start(&prober, false, setuid_exe, &setuid_t), 0);
	a.stranger = stranger_t.pid;
	a.setuid_pid = setuid_t.pid;
	assert_int_equal(harness_as_user(&prober, client_refusals, &a), 0);
	target_stop(&stranger_t);
	target_stop(&setuid_t);
	kread = false;
	assert_int_equal(harness_as_user(&nogrant, client_other_grants, &kread), 0);
	kread = true;
	assert_int_equal(harness_as_user(&kreader, client_other_grants, &kread), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	snprintf(target_exe, sizeof(target_exe), "%s/tests/integration/uprobe_target", H.build_dir);
	snprintf(setuid_exe, sizeof(setuid_exe), "%s/uprobe_target_setuid", H.dir);
	snprintf(own_exe, sizeof(own_exe), "%s/uprobe_target_own", H.dir);
	if (harness_copy_file(target_exe, setuid_exe, UID_STRANGER, 04755) < 0 ||
	    harness_copy_file(target_exe, own_exe, UID_PROBER, 0755) < 0) {
		fprintf(stderr, "cannot copy %s: %m\n", target_exe);
		return -1;
	}
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"kprobe\"], \"helper_classes\": [\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}],"
		 "   \"attach\": {\"uprobes\": true}}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"kprobe\"], \"helper_classes\": [\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"kprobe\"],"
		 "   \"helper_classes\": [\"base\", \"read_kernel_memory\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}],"
		 "   \"attach\": {\"uprobes\": true}}}"
		 "]}",
		 UID_PROBER, UID_NOGRANT, UID_KREADER);
	return harness_start_with_policy(policy);
}

static int teardown(void **state)
{
	return harness_finish() < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_own_process),
		cmocka_unit_test(test_bpfctl_attach),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
