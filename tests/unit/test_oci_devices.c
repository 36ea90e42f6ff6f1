// SPDX-License-Identifier: MIT
/*
 * Unit tests for oci/devices.c: the generated cgroup_device programs run in a
 * small interpreter of the instructions they use, against a table of (rules,
 * device, access) -> verdict written from runc 1.1.5's and crun 1.8.1's
 * semantics, for each runtime and for both at once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/macro.h"
#include "oci/devices.h"

/*
 * Runs prog on struct bpf_cgroup_dev_ctx {access_type, major, minor}; returns
 * r0, or -1 for an instruction the generator should never emit, a backward
 * or out-of-range jump, a read not through the context pointer, or running
 * off the end.
 */
static int64_t run(const struct bpf_insn *prog, size_t n, uint32_t type, uint32_t access,
		   uint32_t major, uint32_t minor)
{
	const uint32_t ctx[3] = {(access << 16) | type, major, minor};
	uint64_t r[11] = {0};
	bool is_ctx[11] = {[1] = true};

	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &prog[pc];
		uint64_t src = r[i->src_reg];
		uint64_t imm = (uint64_t)(int64_t)i->imm;
		bool taken = false;

		if (i->dst_reg > 10 || i->src_reg > 10)
			return -1;
		switch (i->code) {
		case BPF_LDX | BPF_MEM | BPF_W:
			if (!is_ctx[i->src_reg] || i->off < 0 || i->off > 8 || i->off % 4)
				return -1;
			r[i->dst_reg] = ctx[i->off / 4];
			is_ctx[i->dst_reg] = false;
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			r[i->dst_reg] = (uint32_t)(r[i->dst_reg] & (uint32_t)i->imm);
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
			r[i->dst_reg] = (uint32_t)r[i->dst_reg] >> i->imm;
			break;
		case BPF_ALU | BPF_MOV | BPF_X:
			r[i->dst_reg] = (uint32_t)src;
			break;
		case BPF_ALU | BPF_MOV | BPF_K:
			r[i->dst_reg] = (uint32_t)i->imm;
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
			taken = r[i->dst_reg] != imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_X:
			taken = r[i->dst_reg] != src;
			break;
		case BPF_JMP | BPF_JA:
			taken = true;
			break;
		case BPF_JMP | BPF_EXIT:
			return (int64_t)r[0];
		default:
			return -1;
		}
		is_ctx[i->dst_reg] = false;
		if (taken) {
			if (i->off < 0 || pc + 1 + (size_t)i->off >= n)
				return -1;
			pc += (size_t)i->off;
		}
	}
	return -1;
}

#define C 'c'
#define B 'b'
#define R BPF_DEVCG_ACC_READ
#define W BPF_DEVCG_ACC_WRITE
#define M BPF_DEVCG_ACC_MKNOD
#define DENY_ALL                                                                                   \
	{                                                                                          \
		.allow = false, .access = "rwm"                                                    \
	}
#define ANY -1
/* A rule with its type, numbers (ANY: absent) and access. */
#define RULE(a, t, ma, mi, acc)                                                                    \
	{                                                                                          \
		.allow = (a), .type = (t), .has_major = (ma) != ANY, .major = (ma),                \
		.has_minor = (mi) != ANY, .minor = (mi), .access = (acc)                           \
	}

/* The end-to-end test's config: /dev/null only. */
static const struct oci_device_rule only_null[] = {DENY_ALL, RULE(true, "c", 1, 3, "rwm")};
/* Allow "a" with access r: runc resets to allow-all, crun allows reads of anything. */
static const struct oci_device_rule allow_a_read[] = {{.allow = true, .access = "r"}};
static const struct oci_device_rule fuse_rw[] = {DENY_ALL, RULE(true, "c", 10, 229, "rw")};
/* A deny inside a wildcard allow: runc refuses it, crun's last rule wins. */
static const struct oci_device_rule hole[] = {DENY_ALL, RULE(true, "c", 10, ANY, "rwm"),
					      RULE(false, "c", 10, 229, "rwm")};
/* A partial deny: runc removes w from the exception, crun's deny w never matches rw. */
static const struct oci_device_rule partial[] = {DENY_ALL, RULE(true, "c", 10, 229, "rwm"),
						 RULE(false, "c", 10, 229, "w")};
static const struct oci_device_rule blacklist[] = {RULE(true, NULL, ANY, ANY, "rwm"),
						   RULE(false, "c", 10, 229, "rwm")};
/* Denying a default device: both runtimes allow it anyway (their defaults win). */
static const struct oci_device_rule deny_null[] = {RULE(true, NULL, ANY, ANY, "rwm"),
						   RULE(false, "c", 1, 3, "rwm")};
static const struct oci_device_rule deny_all[] = {DENY_ALL};
static const struct oci_device_rule bad_type[] = {DENY_ALL, RULE(true, "x", 10, 229, "rwm")};
static const struct oci_device_rule empty_access[] = {DENY_ALL, RULE(true, "c", 10, 229, "")};
/* crun stops at a rule without conditions (the last one to match, read backwards). */
static const struct oci_device_rule wildcard_end[] = {DENY_ALL, RULE(true, NULL, ANY, ANY, "rwm"),
						      RULE(false, "c", 10, 229, "rwm")};
/* "a" with a major: runc ignores the number (allow-all), crun matches both types. */
static const struct oci_device_rule a_major[] = {DENY_ALL, RULE(true, "a", 10, ANY, "rwm")};
static const struct oci_device_rule block_minor[] = {DENY_ALL, RULE(true, "b", 8, ANY, "r"),
						     RULE(true, "b", 8, 0, "w")};

static const char *const lists_full[] = {"/dev/full"};

#define RULES(x) .rules = (x), .n_rules = ARRAY_SIZE(x)
enum { DEN = 0, ALW = 1, ERR = -2 };

struct expect {
	const char *what;
	struct oci_device_config config;
	char type;
	uint32_t major, minor, access;
	int runc, crun, both;
};

static const struct expect table[] = {
	{"null rw", {RULES(only_null)}, C, 1, 3, R | W, ALW, ALW, ALW},
	{"fuse rw denied", {RULES(only_null)}, C, 10, 229, R | W, DEN, DEN, DEN},
	{"fuse mknod: default c *:* m", {RULES(only_null)}, C, 10, 229, M, ALW, ALW, ALW},
	{"full: a default", {RULES(only_null)}, C, 1, 7, R | W, ALW, ALW, ALW},
	{"pts: a default", {RULES(only_null)}, C, 136, 5, R | W, ALW, ALW, ALW},
	{"tun: a default", {RULES(only_null)}, C, 10, 200, R | W, ALW, ALW, ALW},
	{"console: crun's default only", {RULES(only_null)}, C, 5, 1, R | W, DEN, ALW, DEN},
	{"block read", {RULES(only_null)}, B, 8, 0, R, DEN, DEN, DEN},
	{"block mknod: default b *:* m", {RULES(only_null)}, B, 8, 0, M, ALW, ALW, ALW},
	{"null's numbers as a block device", {RULES(only_null)}, B, 1, 3, R, DEN, DEN, DEN},
	{"allow a r: read", {RULES(allow_a_read)}, C, 10, 229, R, ALW, ALW, ALW},
	{"allow a r: rw", {RULES(allow_a_read)}, C, 10, 229, R | W, ALW, DEN, DEN},
	{"allow a r: block w", {RULES(allow_a_read)}, B, 8, 0, W, ALW, DEN, DEN},
	{"rw rule: rw", {RULES(fuse_rw)}, C, 10, 229, R | W, ALW, ALW, ALW},
	{"rw rule: r", {RULES(fuse_rw)}, C, 10, 229, R, ALW, ALW, ALW},
	{"rw rule: other minor", {RULES(fuse_rw)}, C, 10, 228, R, DEN, DEN, DEN},
	{"hole: runc refuses", {RULES(hole)}, C, 10, 229, R | W, ERR, DEN, ERR},
	{"hole: crun, another minor", {RULES(hole)}, C, 10, 1, R | W, ERR, ALW, ERR},
	{"partial deny: r", {RULES(partial)}, C, 10, 229, R, ALW, ALW, ALW},
	{"partial deny: rw", {RULES(partial)}, C, 10, 229, R | W, DEN, ALW, DEN},
	{"partial deny: w", {RULES(partial)}, C, 10, 229, W, DEN, DEN, DEN},
	{"blacklist: denied device", {RULES(blacklist)}, C, 10, 229, R, DEN, DEN, DEN},
	{"blacklist: others", {RULES(blacklist)}, B, 8, 0, R | W, ALW, ALW, ALW},
	{"deny null: defaults win", {RULES(deny_null)}, C, 1, 3, R | W, ALW, ALW, ALW},
	{"deny all: full", {RULES(deny_all)}, C, 1, 7, R | W, ALW, ALW, ALW},
	{"listed /dev/full: runc drops its default",
	 {RULES(deny_all), .device_paths = lists_full, .n_device_paths = 1},
	 C,
	 1,
	 7,
	 R | W,
	 DEN,
	 ALW,
	 DEN},
	{"listed /dev/full: null stays",
	 {RULES(deny_all), .device_paths = lists_full, .n_device_paths = 1},
	 C,
	 1,
	 3,
	 R | W,
	 ALW,
	 ALW,
	 ALW},
	{"no rules at all", {0}, C, 10, 229, R, DEN, DEN, DEN},
	{"no rules at all: null", {0}, C, 1, 3, R | W | M, ALW, ALW, ALW},
	{"type x: runc refuses, crun: char", {RULES(bad_type)}, C, 10, 229, R, ERR, ALW, ERR},
	{"empty access: runc refuses, crun: never matches",
	 {RULES(empty_access)},
	 C,
	 10,
	 229,
	 R,
	 ERR,
	 DEN,
	 ERR},
	{"wildcard ends crun's program: the deny",
	 {RULES(wildcard_end)},
	 C,
	 10,
	 229,
	 R,
	 DEN,
	 DEN,
	 DEN},
	{"wildcard ends crun's program: others", {RULES(wildcard_end)}, B, 8, 0, R, ALW, ALW, ALW},
	{"a with a major: same major", {RULES(a_major)}, B, 10, 1, R, ALW, ALW, ALW},
	{"a with a major: other", {RULES(a_major)}, B, 8, 0, R, ALW, DEN, DEN},
	{"two rules do not add up: rw", {RULES(block_minor)}, B, 8, 0, R | W, DEN, DEN, DEN},
	{"two rules: r", {RULES(block_minor)}, B, 8, 0, R, ALW, ALW, ALW},
	{"two rules: another minor w", {RULES(block_minor)}, B, 8, 1, W, DEN, DEN, DEN},
};

static void check(const struct expect *e, enum oci_runtime rt, int want)
{
	struct bpf_insn *prog = NULL;
	size_t n = 0;
	char err[256] = "";
	int k = oci_devices_program(&e->config, rt, &prog, &n, err, sizeof(err));
	int64_t got;

	if (want == ERR) {
		if (k != -EINVAL)
			fail_msg("%s (%s): expected runc's refusal, got %d", e->what,
				 oci_runtime_name(rt), k);
		assert_true(strlen(err) > 0);
		return;
	}
	if (k < 0)
		fail_msg("%s (%s): %d %s", e->what, oci_runtime_name(rt), k, err);
	got = run(prog, n, e->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, e->access,
		  e->major, e->minor);
	free(prog);
	if (got != want)
		fail_msg("%s (%s): %c %u:%u access %u: got %lld, want %d", e->what,
			 oci_runtime_name(rt), e->type, e->major, e->minor, e->access,
			 (long long)got, want);
}

static void test_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		check(&table[i], OCI_RUNTIME_RUNC, table[i].runc);
		check(&table[i], OCI_RUNTIME_CRUN, table[i].crun);
		check(&table[i], OCI_RUNTIME_BOTH, table[i].both);
	}
}

/* Every device number and access against the runtimes' defaults: no rules, deny all else. */
static void test_defaults_only(void **state)
{
	static const struct {
		uint32_t major, minor;
		bool runc, crun;
	} dev[] = {{1, 3, 1, 1},    {1, 5, 1, 1}, {1, 7, 1, 1},	 {1, 8, 1, 1},	  {1, 9, 1, 1},
		   {5, 0, 1, 1},    {5, 1, 0, 1}, {5, 2, 1, 1},	 {136, 0, 1, 1},  {136, 77, 1, 1},
		   {10, 200, 1, 1}, {1, 1, 0, 0}, {1, 11, 0, 0}, {10, 229, 0, 0}, {4, 0, 0, 0}};
	const struct oci_device_config none = {0};

	for (enum oci_runtime rt = OCI_RUNTIME_BOTH; rt <= OCI_RUNTIME_CRUN; rt++) {
		struct bpf_insn *prog;
		size_t n;
		char err[128];

		assert_int_equal(oci_devices_program(&none, rt, &prog, &n, err, sizeof(err)), 0);
		for (size_t i = 0; i < ARRAY_SIZE(dev); i++) {
			bool want = rt == OCI_RUNTIME_RUNC   ? dev[i].runc
				    : rt == OCI_RUNTIME_CRUN ? dev[i].crun
							     : dev[i].runc && dev[i].crun;

			for (uint32_t acc = 1; acc <= 7; acc++) {
				int64_t got = run(prog, n, BPF_DEVCG_DEV_CHAR, acc, dev[i].major,
						  dev[i].minor);

				/* mknod of any char device is a default of both. */
				if (got != ((acc == M) || want))
					fail_msg("%s: c %u:%u access %u: got %lld",
						 oci_runtime_name(rt), dev[i].major, dev[i].minor,
						 acc, (long long)got);
			}
		}
		free(prog);
	}
}

static void test_bounds_and_names(void **state)
{
	struct oci_device_config many = {.n_rules = OCI_DEVICES_MAX_RULES + 1};
	struct oci_device_rule *rules = calloc(OCI_DEVICES_MAX_RULES, sizeof(*rules));
	struct bpf_insn *prog = (struct bpf_insn *)"untouched";
	size_t n = 7;
	enum oci_runtime rt;
	char err[128];

	assert_int_equal(oci_devices_program(&many, OCI_RUNTIME_BOTH, &prog, &n, err, sizeof(err)),
			 -E2BIG);
	assert_int_equal(n, 7);
	/* The most rules, each with every condition: the buffer holds them (ASan checks). */
	for (size_t i = 0; i < OCI_DEVICES_MAX_RULES; i++)
		rules[i] = (struct oci_device_rule)RULE(true, "c", 300, (int64_t)i, "r");
	many = (struct oci_device_config){.rules = rules, .n_rules = OCI_DEVICES_MAX_RULES};
	assert_int_equal(oci_devices_program(&many, OCI_RUNTIME_BOTH, &prog, &n, err, sizeof(err)),
			 0);
	assert_int_equal(run(prog, n, BPF_DEVCG_DEV_CHAR, R, 300, OCI_DEVICES_MAX_RULES - 1), 1);
	assert_int_equal(run(prog, n, BPF_DEVCG_DEV_CHAR, R | W, 300, OCI_DEVICES_MAX_RULES - 1),
			 0);
	free(prog);
	free(rules);
	assert_int_equal(oci_runtime_from_name("crun", &rt), 0);
	assert_int_equal(rt, OCI_RUNTIME_CRUN);
	assert_int_equal(oci_runtime_from_name("both", &rt), 0);
	assert_int_equal(rt, OCI_RUNTIME_BOTH);
	assert_int_equal(oci_runtime_from_name("youki", &rt), -EINVAL);
	assert_int_equal(oci_runtime_from_name(NULL, &rt), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_defaults_only),
		cmocka_unit_test(test_bounds_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
