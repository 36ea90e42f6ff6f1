/* SPDX-License-Identifier: MIT */
/*
 * Everything an object brings is default-deny (issue 17, classes 1, 3, 5
 * and 12): map types, every instruction encoding on both load paths,
 * references to kernel symbols, kernel addresses in what comes back, names,
 * helper classes that act on the current task, and inputs known to crash
 * libbpf. Each test is an unprivileged uid trying to get past one check of
 * the real daemon, on the real kernel.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "daemon/worker/kaddr.h"
#include "harness.h"
#include "harness_client.h"

#define UID_PLAIN 65534 /* socket filters, base helpers, every map rw */
#define UID_TYPES 4501 /* the same, and map types by name: cpumap, prog_array, struct_ops */
#define UID_KREAD 4502 /* the same, and read_kernel_memory */
#define UID_NESTER 4503 /* maps of maps */
#define UID_TRACER 4504 /* tracepoints with read_user_memory */
#define UID_ANYTASK 4505 /* tracepoints with read_user_memory_any_task */

static const struct user plain = {UID_PLAIN, UID_PLAIN};
static const struct user types = {UID_TYPES, UID_TYPES};
static const struct user kread = {UID_KREAD, UID_KREAD};
static const struct user nester = {UID_NESTER, UID_NESTER};
static const struct user tracer = {UID_TRACER, UID_TRACER};
static const struct user anytask = {UID_ANYTASK, UID_ANYTASK};

static const uint8_t marker[16] = {0x18, 0x01, 0x00, 0x00, 0x88, 0x77, 0x66, 0x55,
				   0x00, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11};

/* ---- objects, and objects rewritten in memory ---- */

struct blob {
	uint8_t *data;
	size_t size;
};

static int blob_read(const char *name, struct blob *b)
{
	int fd = open(harness_object(name), O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	b->size = (size_t)st.st_size;
	b->data = malloc(b->size);
	n = b->data ? read(fd, b->data, b->size) : -1;
	close(fd);
	return n == (ssize_t)b->size ? 0 : -1;
}

/* The n-th (from 0) place where needle starts, or NULL. */
static uint8_t *blob_find(const struct blob *b, const void *needle, size_t len, int n)
{
	for (size_t i = 0; i + len <= b->size; i++)
		if (memcmp(b->data + i, needle, len) == 0 && n-- == 0)
			return b->data + i;
	return NULL;
}

/* The BTF id of a function in the running kernel's BTF, or -1. */
static int kernel_func_id(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) : -1;

	btf__free(vmlinux);
	return id;
}

/* The address of a kernel symbol as root sees it in /proc/kallsyms, or 0. */
static unsigned long long kallsyms_address(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], sym[256], type;
	unsigned long long addr, found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    strcmp(sym, name) == 0) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

/* Does text hold a number that is a kernel address (kaddr.h), or this one in hex? */
static bool holds_kernel_address(const char *text, unsigned long long addr)
{
	char hex[32];
	size_t len;
	char *scrubbed;
	bool changed;

	if (!text)
		return false;
	snprintf(hex, sizeof(hex), "%llx", addr);
	if (addr && strstr(text, hex))
		return true;
	scrubbed = kaddr_scrub(text, strlen(text), &len);
	changed = !scrubbed || strcmp(scrubbed, text) != 0;
	free(scrubbed);
	return changed;
}

/* Load a blob (only program prog, if given) as the current user: 0, or the error's code. */
struct outcome {
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
};

static void outcome_done(struct outcome *o)
{
	bpfbroker_result_free(o->res);
	bpfbroker_error_free(o->err);
	*o = (struct outcome){};
}

static int load_blob(const struct blob *b, const char *prog, bool check_only, struct outcome *o)
{
	struct bpfbroker_program_select sel = {.name = prog};
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts),
					   .check_only = check_only,
					   .programs = prog ? &sel : NULL,
					   .n_programs = prog ? 1 : 0};
	struct bpfbroker *broker;
	int k = bpfbroker_connect(H.socket, &broker);

	if (k < 0)
		return k;
	*o = (struct outcome){};
	k = bpfbroker_load_mem(broker, b->data, b->size, &opts, &o->res, &o->err);
	bpfbroker_close(broker);
	return k;
}

static const char *code_of(const struct outcome *o)
{
	return o->err && o->err->code ? o->err->code : "(loaded)";
}

/* Refused with code, the message naming needle. */
static int expect_refused(const struct blob *b, const char *prog, const char *code,
			  const char *needle)
{
	struct outcome o;
	int k = load_blob(b, prog, false, &o);

	CHECK(k < 0 && o.err, "loaded, but should be refused with %s (%s)", code, needle);
	CHECK(strcmp(o.err->code, code) == 0, "code %s, expected %s: %s", o.err->code, code,
	      o.err->message);
	CHECK(strstr(o.err->message, needle), "message \"%s\" lacks \"%s\"", o.err->message,
	      needle);
	/* Every refusal names its policy key ("" where no policy allows it). */
	CHECK(strcmp(code, "policy-denied") != 0 ||
		      harness_denial_has_key(o.err, strstr(needle, "without a relocation") ||
								    strstr(needle, "by fd")
							    ? ""
							    : NULL),
	      "refused without its key: %s", o.err->message);
	outcome_done(&o);
	return 0;
}

static int expect_refused_file(const char *object, const char *code, const char *needle)
{
	struct blob b = {};
	int k;

	CHECK(blob_read(object, &b) == 0, "reading %s", object);
	k = expect_refused(&b, NULL, code, needle);
	free(b.data);
	return k;
}

/* ---- class 1: map types are granted as program types are ---- */

static int client_map_types_refused(void *arg)
{
	/* A cpumap starts a kernel thread per entry; a prog_array's values are programs. */
	return expect_refused_file("maptypes", "policy-denied",
				   "which your policy does not allow (types beyond plain data are "
				   "granted by name, in map_types)");
}

static int client_map_types_named(void *arg)
{
	struct blob b = {};
	struct outcome o;
	int k;

	CHECK(blob_read("maptypes", &b) == 0, "reading maptypes");
	k = load_blob(&b, NULL, false, &o);
	free(b.data);
	CHECK(k == 0, "named map types refused: %s %s", code_of(&o), o.err ? o.err->message : "");
	CHECK(o.res->n_maps == 2, "%zu maps", o.res->n_maps);
	outcome_done(&o);
	return 0;
}

static void test_map_types(void **state)
{
	assert_int_equal(harness_as_user(&plain, client_map_types_refused, NULL), 0);
	assert_int_equal(harness_as_user(&types, client_map_types_named, NULL), 0);
}

/*
 * What a map carries beyond its own type: flags the broker doesn't allow (a
 * token passed by fd, which the kernel would take from the worker's table),
 * and a map of maps whose inner maps are of a type not granted.
 */
static int client_map_flags_and_inner_types(void *arg)
{
	struct blob b = {};
	struct outcome o;
	bool flags = false, inner = false;
	int k;

	CHECK(blob_read("mapflags", &b) == 0, "reading mapflags");
	k = load_blob(&b, NULL, true, &o);
	free(b.data);
	CHECK(k == 0 && o.res, "check: %s", o.err ? o.err->message : strerror(-k));
	CHECK(!o.res->allowed, "a map with a token flag and prog array inner maps is allowed");
	for (const char *const *r = o.res->reasons; r && *r; r++) {
		flags = flags || (strstr(*r, "\"token_flag\" has flags 0x10000") != NULL);
		inner = inner ||
			(strstr(*r, "\"outer_jumps\"'s inner map has type prog_array") != NULL);
	}
	CHECK(flags && inner, "reasons lack the flags (%d) or the inner type (%d)", flags, inner);
	outcome_done(&o);
	return 0;
}

static void test_map_flags_and_inner_types(void **state)
{
	assert_int_equal(harness_as_user(&nester, client_map_flags_and_inner_types, NULL), 0);
}

/* ---- class 12: known libbpf crash inputs never reach libbpf ---- */

static int client_struct_ops(void *arg)
{
	/* Even with struct_ops granted: refused before libbpf, not a crashed worker. */
	return expect_refused_file("structops", "bad-object",
				   "a struct_ops map but no struct_ops program");
}

/* The same crash when the struct_ops program is there but not among the programs loaded. */
static int client_struct_ops_deselected(void *arg)
{
	struct blob b = {};
	int k;

	CHECK(blob_read("structops_prog", &b) == 0, "reading structops_prog");
	k = expect_refused(&b, "plain_filter", "bad-object", "loads no struct_ops program");
	free(b.data);
	return k;
}

static void test_struct_ops_never_reaches_libbpf(void **state)
{
	assert_int_equal(harness_as_user(&plain, client_struct_ops, NULL), 0);
	assert_int_equal(harness_as_user(&types, client_struct_ops, NULL), 0);
	assert_int_equal(harness_as_user(&types, client_struct_ops_deselected, NULL), 0);
}

/* ---- class 1: one instruction allow-list for both load paths ---- */

/*
 * marked_fail with its 64-bit load turned into a reference to the kernel's
 * schedule() (BPF_PSEUDO_BTF_ID, no relocation), exiting without r0: the
 * verifier refuses it, and its log would print the function's address.
 */
static int make_kernel_ref(struct blob *b, int32_t module_btf_fd)
{
	int id = kernel_func_id("schedule");
	uint8_t *p;

	if (id <= 0 || blob_read("insnmarks", b) < 0 || !(p = blob_find(b, marker, 16, 0)))
		return -1;
	p[1] = (uint8_t)(BPF_PSEUDO_BTF_ID << 4 | 1); /* src_reg 3, dst_reg r1 */
	memcpy(p + 4, &id, 4);
	/* The second half: 0 for vmlinux, else a module's BTF by fd. */
	memcpy(p + 12, &module_btf_fd, 4);
	return 0;
}

static int client_kernel_ref(void *arg)
{
	bool granted = *(bool *)arg;
	unsigned long long addr = kallsyms_address("schedule");
	struct blob b = {};
	struct outcome o;
	int k;

	CHECK(make_kernel_ref(&b, 0) == 0, "building the object");
	k = load_blob(&b, "marked_fail", false, &o);
	free(b.data);
	CHECK(k < 0 && o.err, "a kernel reference loaded");
	if (!granted) {
		/* Refused before the kernel sees it: no log, no address. */
		CHECK(strcmp(o.err->code, "policy-denied") == 0 &&
			      strstr(o.err->message, "references kernel symbol btf_id:") &&
			      strstr(o.err->message, "read_kernel_memory"),
		      "%s: %s", o.err->code, o.err->message);
		CHECK(!holds_kernel_address(o.err->message, addr) &&
			      !holds_kernel_address(o.err->verifier_log, addr),
		      "a kernel address came back: %s\n%s", o.err->message,
		      o.err->verifier_log ?: "");
	} else {
		/* Granted read_kernel_memory: the kernel decides, and its log is whole. */
		CHECK(strcmp(o.err->code, "load-failed") == 0, "%s: %s", o.err->code,
		      o.err->message);
	}
	outcome_done(&o);
	return 0;
}

/* The 64-bit load's second half, then the call: re-encoded as code (0x86, 0x8d). */
static int client_call_encoding(void *arg)
{
	uint8_t code = *(uint8_t *)arg;
	struct blob b = {};
	uint8_t *p;
	int k;

	CHECK(blob_read("insnmarks", &b) == 0 && (p = blob_find(&b, marker, 16, 1)),
	      "building the object");
	CHECK(p[16] == (BPF_JMP | BPF_CALL), "no call after the marker");
	p[16] = code;
	k = expect_refused(&b, "marked_call", "bad-object", "opcode");
	free(b.data);
	if (k)
		return k;
	{
		/* The same instructions as a raw load: the same answer. */
		struct bpf_insn insns[5] = {
			{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns},
			{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0},
			{.code = BPF_JMP | BPF_EXIT},
		};
		struct bpfbroker_insns_opts opts = {
			.sz = sizeof(opts), .prog_type = "socket_filter", .license = "GPL"};
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		struct bpfbroker *broker;

		insns[0].code = code;
		CHECK(bpfbroker_connect(H.socket, &broker) == 0, "connect");
		k = bpfbroker_load_insns(broker, insns, 3, &opts, &res, &err);
		bpfbroker_close(broker);
		CHECK(k < 0 && err && strcmp(err->code, "bad-object") == 0 &&
			      strstr(err->message, "opcode"),
		      "raw: %s %s", err ? err->code : "(loaded)", err ? err->message : "");
		bpfbroker_error_free(err);
		bpfbroker_result_free(res);
	}
	return 0;
}

/*
 * A map referenced in the code by fd, with no relocation: the kernel would
 * look the fd up in the broker's worker. Refused, as a raw load's would be.
 */
static int client_unrelocated_map_ref(void *arg)
{
	struct blob b = {};
	uint8_t *p;
	int k;

	CHECK(blob_read("insnmarks", &b) == 0 && (p = blob_find(&b, marker, 16, 1)),
	      "building the object");
	p[1] = (uint8_t)(BPF_PSEUDO_MAP_FD << 4 | 1); /* src_reg 1, dst_reg r1 */
	memcpy(p + 4, &(int32_t){3}, 4);
	memset(p + 12, 0, 4);
	k = expect_refused(&b, "marked_call", "policy-denied",
			   "references a map without a relocation");
	free(b.data);
	return k;
}

/*
 * A kernel reference whose second half names a module's BTF by fd (3): the
 * kernel would look that fd up in the broker's worker. Refused even with
 * read_kernel_memory, which grants the kernel's own symbols only.
 */
static int client_module_kernel_ref(void *arg)
{
	struct blob b = {};
	int k;

	CHECK(make_kernel_ref(&b, 3) == 0, "building the object");
	k = expect_refused(&b, "marked_fail", "policy-denied",
			   "references a kernel module's variable by fd");
	free(b.data);
	return k;
}

static void test_instructions(void **state)
{
	static bool no = false, yes = true;
	static uint8_t jmp32_call = BPF_JMP32 | BPF_CALL, call_x = BPF_JMP | BPF_CALL | BPF_X;

	assert_int_equal(harness_as_user(&plain, client_kernel_ref, &no), 0);
	assert_int_equal(harness_as_user(&kread, client_kernel_ref, &yes), 0);
	assert_int_equal(harness_as_user(&plain, client_call_encoding, &jmp32_call), 0);
	assert_int_equal(harness_as_user(&plain, client_call_encoding, &call_x), 0);
	assert_int_equal(harness_as_user(&plain, client_unrelocated_map_ref, NULL), 0);
	assert_int_equal(harness_as_user(&kread, client_module_kernel_ref, NULL), 0);
}

/* A typed __ksym extern: libbpf makes it a kernel reference, through a relocation. */
static int client_ksym(void *arg)
{
	bool granted = *(bool *)arg;
	struct blob b = {};
	struct outcome o;
	int k;

	if (!granted)
		return expect_refused_file(
			"ksym", "policy-denied",
			"references kernel symbol max_threads (class read_kernel_memory)");
	CHECK(blob_read("ksym", &b) == 0, "reading ksym");
	k = load_blob(&b, NULL, true, &o);
	free(b.data);
	CHECK(k == 0 && o.res->allowed, "read_kernel_memory does not allow a kernel variable: %s",
	      o.err ? o.err->message : "");
	outcome_done(&o);
	return 0;
}

static void test_kernel_symbols(void **state)
{
	static bool no = false, yes = true;

	assert_int_equal(harness_as_user(&plain, client_ksym, &no), 0);
	assert_int_equal(harness_as_user(&kread, client_ksym, &yes), 0);
}

/* ---- class 1: kernel addresses in verifier logs ---- */

static int client_log(void *arg)
{
	bool granted = *(bool *)arg;
	struct blob b = {};
	struct outcome o;
	int k;

	CHECK(blob_read("insnmarks", &b) == 0, "reading insnmarks");
	k = load_blob(&b, "kernelish_constant", false, &o);
	free(b.data);
	CHECK(k < 0 && o.err && strcmp(o.err->code, "load-failed") == 0 && o.err->verifier_log,
	      "expected the verifier's refusal with a log: %s", code_of(&o));
	if (granted) {
		CHECK(strstr(o.err->verifier_log, "0xffffffff81234560"),
		      "the log of a read_kernel_memory grant was changed:\n%s",
		      o.err->verifier_log);
	} else {
		CHECK(!holds_kernel_address(o.err->verifier_log, 0) &&
			      !holds_kernel_address(o.err->message, 0),
		      "a kernel address in what came back:\n%s", o.err->verifier_log);
		CHECK(strstr(o.err->verifier_log, KADDR_REPLACEMENT), "nothing replaced:\n%s",
		      o.err->verifier_log);
	}
	outcome_done(&o);
	return 0;
}

static void test_verifier_log_scrubbed(void **state)
{
	static bool no = false, yes = true;

	assert_int_equal(harness_as_user(&plain, client_log, &no), 0);
	assert_int_equal(harness_as_user(&kread, client_log, &yes), 0);
}

/* ---- class 3 and 8: names, bounded and unique ---- */

static int client_long_name(void *arg)
{
	return expect_refused_file("longname", "bad-object", "not 1 to 128");
}

/*
 * dup_b (an array of maps, never handed out writable) renamed dup_a: in a
 * linked object (BTF offsets filled in, which libbpf keeps) libbpf then
 * makes two maps called dup_a, and "by name" could mean either.
 */
static int client_duplicate_names(void *arg)
{
	struct blob b = {};
	uint8_t *p;
	int k;

	CHECK(blob_read("dupmaps_linked", &b) == 0, "reading dupmaps_linked");
	/*
	 * The BTF variable's name, which libbpf names the map after: the second
	 * occurrence (the ELF string table leads the linked file, and keeps
	 * dup_b's symbol; libbpf finds dup_a's for both and keeps the offsets).
	 */
	p = blob_find(&b, "dup_b", 6, 1);
	CHECK(p, "no dup_b in the object");
	memcpy(p, "dup_a", 6);
	k = expect_refused(&b, NULL, "bad-object", "more than one map is named dup_a");
	free(b.data);
	return k;
}

static void test_names(void **state)
{
	assert_int_equal(harness_as_user(&plain, client_long_name, NULL), 0);
	assert_int_equal(harness_as_user(&nester, client_duplicate_names, NULL), 0);
}

/* ---- class 5: helper classes that act on the current task ---- */

static int client_task_class(void *arg)
{
	bool any_task = *(bool *)arg;
	struct blob b = {};
	struct outcome o;
	int k;

	if (!any_task)
		return expect_refused_file(
			"userread", "policy-denied",
			"calls bpf_probe_read_user_str (class read_user_memory), which acts on "
			"the task the program runs in");
	CHECK(blob_read("userread", &b) == 0, "reading userread");
	k = load_blob(&b, NULL, true, &o);
	free(b.data);
	CHECK(k == 0 && o.res->allowed, "read_user_memory_any_task does not cover tracepoints: %s",
	      o.err ? o.err->message : "");
	outcome_done(&o);
	return 0;
}

static void test_task_classes(void **state)
{
	static bool no = false, yes = true;

	assert_int_equal(harness_as_user(&tracer, client_task_class, &no), 0);
	assert_int_equal(harness_as_user(&anytask, client_task_class, &yes), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\", \"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"map_types\": [\"cpumap\", \"prog_array\", \"struct_ops\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"helper_classes\": [\"read_kernel_memory\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"maps_of_maps\": true}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"tracepoint\"], \"helper_classes\": "
		 "[\"base\", \"current_task\", \"read_user_memory\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"helper_classes\": [\"read_user_memory_any_task\"]}}"
		 "]}",
		 UID_PLAIN, UID_TYPES, UID_KREAD, UID_NESTER, UID_TYPES, UID_KREAD, UID_NESTER,
		 UID_TRACER, UID_ANYTASK, UID_ANYTASK);
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_types),
		cmocka_unit_test(test_map_flags_and_inner_types),
		cmocka_unit_test(test_struct_ops_never_reaches_libbpf),
		cmocka_unit_test(test_instructions),
		cmocka_unit_test(test_kernel_symbols),
		cmocka_unit_test(test_verifier_log_scrubbed),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_task_classes),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
