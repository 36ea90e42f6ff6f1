/* SPDX-License-Identifier: MIT */
/*
 * Raw instruction loads (load_insns), end to end: a rootless container
 * runtime's cgroup device program built as raw instructions
 * (examples/device-allow.c and bpfctl load-insns), loaded through the broker
 * by an unprivileged uid of a container range, attached to the cgroup
 * delegated to it, and enforced by the kernel on a process in that cgroup;
 * gone after unload. Then everything a raw load must be refused for.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"

#define UID_RUNTIME 100000 /* a container runtime's mapped range: 100000-165535 */
#define UID_SMALL 4321 /* socket filters only, 16 instructions */
#define UID_KERNEL 4322 /* socket filters with kfuncs and kernel symbols: only the kernel's own */
/* A runtime's program with its default rules, for runc and crun at once (examples/device-allow). */
#define RUNTIME_MAX_INSNS 256

static const struct user runtime = {UID_RUNTIME, UID_RUNTIME};
static const struct user small = {UID_SMALL, UID_SMALL};
static const struct user kernel_user = {UID_KERNEL, UID_KERNEL};
static const struct user root_user = {0, 0};

static char cg_ctr[PATH_MAX], insns_file[128];
/* A device no runtime allows by default that anyone may open: /dev/fuse's numbers, mode 0666. */
static char fuse_node[128];

struct ask_fn {
	int (*fn)(void *);
	void *arg;
};

/* ---- the delegated cgroup ---- */

/* Delegated as a runtime's cgroup is: directory, cgroup.procs, threads, subtree_control. */
static int cgroups_create(void)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "bpfbroker-test-insns-%d/ctr", (int)getpid());
	return harness_cgroup_make(rel, UID_RUNTIME, cg_ctr, sizeof(cg_ctr));
}

/* ---- processes ---- */

/* bpfctl as u; the exit status, with stdout in out. */
#define ctl harness_ctl
#define out harness_out

/* examples/device-allow with args, as u: its exit status. */
static int device_allow(const struct user *u, const char *a1, const char *a2, const char *a3)
{
	char exe[512];
	char *argv[] = {exe, "--socket", H.socket, (char *)a1, (char *)a2, (char *)a3, NULL};

	snprintf(exe, sizeof(exe), "%s/examples/device-allow", H.build_dir);
	return harness_exec_as(u, argv);
}

/* The container's process: in its cgroup, as the runtime's uid. */
static int as_runtime(void *arg)
{
	const struct ask_fn *a = arg;

	return harness_as_user(&runtime, a->fn, a->arg);
}

static int in_container(int (*fn)(void *), void *arg)
{
	struct ask_fn a = {fn, arg};

	return harness_in_cgroup(cg_ctr, as_runtime, &a);
}

/*
 * arg non-NULL: the device program is attached. Allowed: the rules' /dev/null and
 * /dev/zero, and /dev/full, a default rule of both runtimes.
 */
static int open_devices(void *arg)
{
	static const char *const allowed[] = {"/dev/null", "/dev/zero", "/dev/full"};
	const char *const denied[] = {fuse_node};
	int fd;

	for (size_t i = 0; i < 3; i++) {
		fd = open(allowed[i], O_RDWR | O_CLOEXEC);
		CHECK(fd >= 0, "%s refused: %m", allowed[i]);
		close(fd);
	}
	for (size_t i = 0; i < 1; i++) {
		fd = open(denied[i], O_RDONLY | O_CLOEXEC);
		if (arg)
			CHECK(fd < 0 && errno == EPERM, "%s was not refused (fd %d, %m)", denied[i],
			      fd);
		else
			CHECK(fd >= 0, "%s refused without a device program: %m", denied[i]);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* ---- the container runtime's device program ---- */

static void test_runtime_example(void **state)
{
	assert_int_equal(in_container(open_devices, NULL), 0);
	/* As a rootless runtime would: build, load as "devs", attach to its cgroup. */
	assert_int_equal(device_allow(&runtime, "--name", "devs", cg_ctr), 0);
	assert_int_equal(in_container(open_devices, "attached"), 0);
	assert_int_equal(ctl(&runtime, "show", "devs", NULL), 0);
	assert_non_null(strstr(out, "devices"));
	assert_non_null(strstr(out, "cgroup_device"));
	/* Unload detaches: the restriction is gone. */
	assert_int_equal(ctl(&runtime, "unload", "devs", NULL), 0);
	assert_int_equal(in_container(open_devices, NULL), 0);
}

static void test_bpfctl_load_insns(void **state)
{
	/* The same instructions from a file, through bpfctl. */
	assert_int_equal(device_allow(&root_user, "--dump", insns_file, NULL), 0);
	assert_int_equal(chmod(insns_file, 0644), 0);
	assert_int_equal(ctl(&runtime, "check-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", NULL),
			 0);
	assert_non_null(strstr(out, "allowed"));
	assert_int_equal(ctl(&runtime, "load-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", "--prog-name", "dev", "--name",
			     "devs2", NULL),
			 0);
	assert_non_null(strstr(out, "loaded devs2"));
	/* The program's own attach type is the default. */
	assert_int_equal(ctl(&runtime, "attach", "devs2/dev", "cgroup", cg_ctr, "--pin", NULL), 0);
	assert_int_equal(in_container(open_devices, "attached"), 0);
	assert_int_equal(ctl(&runtime, "unload", "devs2", NULL), 0);
	assert_int_equal(in_container(open_devices, NULL), 0);
	/* Without --type, or without --name for a load: refused by bpfctl itself. */
	assert_int_equal(ctl(&runtime, "load-insns", insns_file, "--name", "x", NULL), 2);
	assert_int_equal(ctl(&runtime, "load-insns", insns_file, "--type", "cgroup_device", NULL),
			 2);
}

/* ---- denials, through the library in a child ---- */

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV0(v) INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (v))
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * Expected attach types the kernel knows and libbpf 1.1.2 does not, by the
 * kernel's name or number: a socket address program on unix sockets, loaded
 * from raw instructions; it attaches where the policy grants its hook.
 */
static void test_kernel_attach_types(void **state)
{
	static const struct bpf_insn prog[] = {MOV0(1), EXIT};
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/sock_addr.insns", H.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, prog, sizeof(prog)), (ssize_t)sizeof(prog));
	close(fd);
	/* cgroup_unix_sendmsg (50), which the policy grants. */
	assert_int_equal(ctl(&runtime, "load-insns", path, "--type", "cgroup_sock_addr",
			     "--attach-type", "cgroup_unix_sendmsg", "--name", "unix_send", NULL),
			 0);
	assert_int_equal(ctl(&runtime, "-j", "show", "unix_send", NULL), 0);
	assert_non_null(strstr(out, "cgroup_unix_sendmsg"));
	assert_int_equal(ctl(&runtime, "attach", "unix_send/prog", "cgroup", cg_ctr, "--pin", NULL),
			 0);
	assert_int_equal(ctl(&runtime, "unload", "unix_send", NULL), 0);
	assert_int_equal(ctl(&runtime, "load-insns", path, "--type", "cgroup_sock_addr",
			     "--attach-type", "50", "--name", "unix_send50", NULL),
			 0);
	assert_int_equal(
		ctl(&runtime, "attach", "unix_send50/prog", "cgroup", cg_ctr, "--pin", NULL), 0);
	assert_int_equal(ctl(&runtime, "unload", "unix_send50", NULL), 0);
	/* cgroup_unix_connect (49): loads, but the policy grants no attaching it. */
	assert_int_equal(ctl(&runtime, "load-insns", path, "--type", "cgroup_sock_addr",
			     "--attach-type", "cgroup_unix_connect", "--name", "unix_conn", NULL),
			 0);
	assert_int_not_equal(
		ctl(&runtime, "attach", "unix_conn/prog", "cgroup", cg_ctr, "--pin", NULL), 0);
	assert_int_equal(ctl(&runtime, "unload", "unix_conn", NULL), 0);
	/* A number this kernel names no attach type by is an invalid request. */
	assert_int_equal(ctl(&runtime, "check-insns", path, "--type", "cgroup_sock_addr",
			     "--attach-type", "63", NULL),
			 2);
	/* Without the program type granted, the kernel's names don't help. */
	assert_int_equal(ctl(&small, "check-insns", path, "--type", "cgroup_sock_addr",
			     "--attach-type", "cgroup_unix_sendmsg", NULL),
			 1);
}

struct raw_case {
	const char *what;
	const struct user *as;
	const char *type;
	const void *bytes; /* sent as a memfd of size bytes */
	size_t size;
	const char *code; /* the expected error code, or NULL for success */
	const char *message; /* a part of the error message (or of the first reason) */
	int prog_fd; /* success: 1 the program's fd comes back, 0 it does not */
	bool check_only;
};

static int raw_case_run(void *arg)
{
	const struct raw_case *t = arg;
	struct bpfbroker_insns_opts o = {
		.sz = sizeof(o),
		.prog_type = t->type,
		.license = "GPL",
		.check_only = t->check_only,
	};
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_program *prog;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	int fd = memfd_create("insns", MFD_CLOEXEC), k;

	CHECK(fd >= 0 && write(fd, t->bytes, t->size) == (ssize_t)t->size, "memfd: %m");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_insns_fd(b, fd, &o, &res, &err);
	bpfbroker_close(b);
	close(fd);
	if (!t->code) {
		CHECK(k == 0, "%s: %s", t->what, err ? err->message : strerror(-k));
		CHECK(res->n_programs == 1 && res->n_maps == 0, "%s: %zu programs, %zu maps",
		      t->what, res->n_programs, res->n_maps);
		prog = bpfbroker_result_program_at(res, 0);
		CHECK((prog->fd >= 0) == (t->prog_fd == 1), "%s: program fd %d", t->what, prog->fd);
		CHECK(!t->check_only || prog->id == 0, "%s: a check loaded it", t->what);
		bpfbroker_result_free(res);
		return 0;
	}
	CHECK(k < 0 && err, "%s: not refused (%d)", t->what, k);
	CHECK(strcmp(err->code, t->code) == 0, "%s: code %s, expected %s: %s", t->what, err->code,
	      t->code, err->message);
	CHECK(strstr(err->message, t->message), "%s: message \"%s\" lacks \"%s\"", t->what,
	      err->message, t->message);
	if (strcmp(t->code, "load-failed") == 0)
		CHECK(err->verifier_log && *err->verifier_log, "%s: no verifier log", t->what);
	/* Every refusal names its key; references to maps and modules have none. */
	if (strcmp(t->code, "policy-denied") == 0)
		CHECK(harness_denial_has_key(err,
					     strstr(t->message, "references a map") ||
							     strstr(t->message, "kernel module")
						     ? ""
						     : NULL),
		      "%s: a refusal without its key", t->what);
	bpfbroker_error_free(err);
	return 0;
}

static void run(const struct raw_case *t)
{
	assert_int_equal(harness_as_user(t->as, raw_case_run, (void *)t), 0);
}

static void test_raw_loads(void **state)
{
	static const struct bpf_insn ok[] = {MOV0(0), EXIT};
	struct bpf_insn device[2] = {MOV0(1), EXIT};

	/* Socket filter fds are always handed out; cgroup_device fds only by program_fds. */
	run(&(struct raw_case){"socket filter", &runtime, "socket_filter", ok, sizeof(ok),
			       .prog_fd = 1});
	run(&(struct raw_case){"device", &runtime, "cgroup_device", device, sizeof(device),
			       .prog_fd = 0});
	run(&(struct raw_case){"check", &runtime, "cgroup_device", device, sizeof(device),
			       .check_only = true});
}

static void test_raw_denials(void **state)
{
	static const struct bpf_insn probe_read[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -8),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 8),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_kernel),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn map_fd[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, 3),
		INSN(0, 0, 0, 0, 0),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn map_value[] = {
		MOV0(0),
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, 0, 0),
		INSN(0, 0, 0, 0, 0),
		EXIT,
	};
	static const struct bpf_insn map_idx[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_IDX, 0, 0),
		INSN(0, 0, 0, 0, 0),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn btf_var[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_BTF_ID, 0, 1),
		INSN(0, 0, 0, 0, 0),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn kfunc[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1),
		MOV0(0),
		EXIT,
	};
	/* The same naming a module's BTF: by an fd of the worker's own, which no client may name.
	 */
	static const struct bpf_insn module_var[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_BTF_ID, 0, 1),
		INSN(0, 0, 0, 0, 3),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn module_kfunc[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 1, 1),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn half_constant[] = {
		MOV0(0),
		EXIT,
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, 0, 0, 0),
	};
	static const struct bpf_insn bad_second_half[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, 0, 0, 0),
		INSN(0, 0, BPF_PSEUDO_MAP_FD, 0, 0),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn call_outside[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 100),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn no_exit[] = {MOV0(0), MOV0(1)};
	struct bpf_insn many[RUNTIME_MAX_INSNS + 1];
	static const uint8_t thirteen[13] = {0};

	for (size_t i = 0; i < RUNTIME_MAX_INSNS; i++)
		many[i] = MOV0(0);
	many[RUNTIME_MAX_INSNS] = EXIT;

	run(&(struct raw_case){"helper", &runtime, "socket_filter", probe_read, sizeof(probe_read),
			       "policy-denied",
			       "calls bpf_probe_read_kernel (class read_kernel_memory), which "
			       "your policy does not allow"});
	run(&(struct raw_case){"type", &runtime, "kprobe", probe_read, sizeof(probe_read),
			       "policy-denied",
			       "has type kprobe, which your policy does not allow"});
	run(&(struct raw_case){"type for small", &small, "cgroup_device", probe_read + 5,
			       2 * sizeof(struct bpf_insn), "policy-denied",
			       "has type cgroup_device, which your policy does not allow"});
	run(&(struct raw_case){"too many", &runtime, "socket_filter", many, sizeof(many),
			       "policy-denied", "has 257 instructions, over your limit of 256"});
	run(&(struct raw_case){"too many for small", &small, "socket_filter", many,
			       17 * sizeof(struct bpf_insn), "policy-denied",
			       "has 17 instructions, over your limit of 16"});
	run(&(struct raw_case){"map fd", &runtime, "socket_filter", map_fd, sizeof(map_fd),
			       "policy-denied",
			       "instruction 0 references a map (BPF_PSEUDO_MAP_FD); raw "
			       "instruction loads cannot use maps"});
	run(&(struct raw_case){"map value", &runtime, "socket_filter", map_value, sizeof(map_value),
			       "policy-denied",
			       "instruction 1 references a map (BPF_PSEUDO_MAP_VALUE)"});
	run(&(struct raw_case){"map idx", &runtime, "socket_filter", map_idx, sizeof(map_idx),
			       "policy-denied", "references a map (BPF_PSEUDO_MAP_IDX)"});
	run(&(struct raw_case){"kernel variable", &runtime, "socket_filter", btf_var,
			       sizeof(btf_var), "policy-denied",
			       "references kernel symbol btf_id:1 (class read_kernel_memory)"});
	run(&(struct raw_case){"kfunc", &runtime, "socket_filter", kfunc, sizeof(kfunc),
			       "policy-denied", "(class kfunc), which your policy does not allow"});
	/* Granted kfuncs and kernel symbols, but never a module's through the worker's fds. */
	run(&(struct raw_case){"module variable", &kernel_user, "socket_filter", module_var,
			       sizeof(module_var), "policy-denied",
			       "instruction 0 references a kernel module's variable; raw "
			       "instruction loads can reference only the kernel's own"});
	run(&(struct raw_case){"module kfunc", &kernel_user, "socket_filter", module_kfunc,
			       sizeof(module_kfunc), "policy-denied",
			       "instruction 0 calls a kfunc of a kernel module; raw instruction "
			       "loads can call only the kernel's own"});
	run(&(struct raw_case){"13 bytes", &runtime, "socket_filter", thirteen, 13, "bad-object",
			       "are 13 bytes, not a multiple of 8"});
	run(&(struct raw_case){"empty", &runtime, "socket_filter", thirteen, 0, "bad-object",
			       "the instructions are empty"});
	run(&(struct raw_case){"half a constant", &runtime, "socket_filter", half_constant,
			       sizeof(half_constant), "bad-object",
			       "instruction 2 is a 64-bit load whose second half is missing"});
	run(&(struct raw_case){"bad second half", &runtime, "socket_filter", bad_second_half,
			       sizeof(bad_second_half), "bad-object",
			       "instruction 1 is the second half of a 64-bit load"});
	run(&(struct raw_case){"call outside", &runtime, "socket_filter", call_outside,
			       sizeof(call_outside), "bad-object",
			       "instruction 0 calls a subprogram outside the instructions"});
	run(&(struct raw_case){"unknown type", &runtime, "no_such_type", no_exit, sizeof(no_exit),
			       "invalid-request", "unknown program type \"no_such_type\""});
	/* Allowed by the policy, refused by the verifier: its log comes back. */
	run(&(struct raw_case){"verifier", &runtime, "socket_filter", no_exit, sizeof(no_exit),
			       "load-failed", "the kernel's verifier refused program 'prog'"});
}

/* Params a raw load does not take, and ones it needs, straight on the wire. */
static int bad_params(void *arg)
{
	static const char *const requests[][2] = {
		{"{\"bpfbroker\":1,\"id\":1,\"method\":\"load_insns\",\"params\":{\"insns_fd\":0,"
		 "\"type\":\"socket_filter\",\"license\":\"GPL\",\"globals\":[]}}",
		 "load_insns: unknown key"},
		{"{\"bpfbroker\":1,\"id\":1,\"method\":\"load_insns\",\"params\":{\"insns_fd\":0,"
		 "\"type\":\"socket_filter\"}}",
		 "license"},
		{"{\"bpfbroker\":1,\"id\":1,\"method\":\"load_insns\",\"params\":{\"insns_fd\":0,"
		 "\"type\":\"socket_filter\",\"license\":\"GPL\",\"prog_name\":\"a-b\"}}",
		 "must be 1 to 15 letters, digits, '_' or '.'"},
	};
	struct bpfbroker *b;
	int fd = memfd_create("insns", MFD_CLOEXEC);

	CHECK(fd >= 0 && bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		char *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		int k = bpfbroker_call_raw(b, requests[i][0], &fd, 1, &reply, &fds, &n_fds);

		CHECK(k == 0 && reply && n_fds == 0, "call %zu: %d", i, k);
		CHECK(strstr(reply, "invalid-request") && strstr(reply, requests[i][1]),
		      "reply %zu: %s", i, reply);
		free(reply);
		free(fds);
	}
	/* hello tells clients that the daemon has the method. */
	{
		char *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		int k = bpfbroker_call_raw(b, "{\"bpfbroker\":1,\"id\":2,\"method\":\"hello\"}",
					   NULL, 0, &reply, &fds, &n_fds);

		CHECK(k == 0 && strstr(reply, "\"load_insns\""), "hello: %s", reply ?: "?");
		free(reply);
		free(fds);
	}
	bpfbroker_close(b);
	close(fd);
	return 0;
}

static void test_raw_bad_params(void **state)
{
	assert_int_equal(harness_as_user(&runtime, bad_params, NULL), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	snprintf(insns_file, sizeof(insns_file), "%s/device.insns", H.dir);
	snprintf(fuse_node, sizeof(fuse_node), "%s/fuse", H.dir);
	if (mknod(fuse_node, S_IFCHR | 0666, makedev(10, 229)) < 0 || chmod(fuse_node, 0666) < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"100000-165535\"]},"
		 "  \"allow\": {\"program_types\": [\"cgroup_device\", \"socket_filter\","
		 "   \"cgroup_sock_addr\"],"
		 "   \"helper_classes\": [\"base\"], \"attach\": {\"cgroups\": "
		 "[\"cgroup_device\", \"cgroup_unix_sendmsg\"]}},"
		 "  \"limits\": {\"max_insns_per_program\": %d}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"]},"
		 "  \"limits\": {\"max_insns_per_program\": 16}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\", \"kfunc\", \"read_kernel_memory\"]}}"
		 "]}",
		 RUNTIME_MAX_INSNS, UID_SMALL, UID_KERNEL);
	if (harness_write_policy("50-insns.json", policy) < 0)
		return -1;
	if (cgroups_create() < 0) {
		fprintf(stderr, "cannot create test cgroups: %m\n");
		harness_cgroups_remove();
		return -1;
	}
	harness_mark_kernel_objects();
	if (harness_start(NULL) < 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_example), cmocka_unit_test(test_bpfctl_load_insns),
		cmocka_unit_test(test_raw_loads),	cmocka_unit_test(test_raw_denials),
		cmocka_unit_test(test_raw_bad_params),	cmocka_unit_test(test_kernel_attach_types),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
