// SPDX-License-Identifier: MIT
/*
 * Unit tests for daemon/worker/insns.c: raw instruction blobs described as one
 * program for the policy, and everything refused before the kernel sees it.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/worker/insns.h"
#include "policy/helpers.h"

#define INSN(c, d, s, o, i)                                                                        \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV0(v) INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, (v))
#define EXIT INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define CALL(id) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, (id))
#define LD_IMM64(src, imm)                                                                         \
	INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, (src), 0, (imm)), INSN(0, 0, 0, 0, 0)

static int describe(const struct bpf_insn *insns, size_t n, const char *type, const char *attach,
		    struct object_desc *d, char **error)
{
	return insns_describe(insns, n * sizeof(*insns), "prog", type, attach, false, d, error);
}

static void expect_error(const struct bpf_insn *insns, size_t n, const char *type, int err,
			 const char *text)
{
	struct object_desc d = {};
	char *error = NULL;
	int r = describe(insns, n, type, NULL, &d, &error);

	if (r != err)
		fail_msg("got %d (%s), expected %d (%s)", r, error ? error : "no message", err,
			 text);
	assert_null(d.programs);
	assert_non_null(error);
	if (!strstr(error, text))
		fail_msg("error \"%s\" lacks \"%s\"", error, text);
	free(error);
}

static void test_describe(void **state)
{
	/* A subprogram calling a helper, a callback reference, a constant: all seen. */
	static const struct bpf_insn prog[] = {
		LD_IMM64(0, 42),
		LD_IMM64(BPF_PSEUDO_FUNC, 5), /* the callback at 8 */
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), /* the subprogram at 6 */
		EXIT,
		CALL(BPF_FUNC_ktime_get_ns),
		EXIT,
		CALL(BPF_FUNC_get_prandom_u32),
		EXIT,
		CALL(BPF_FUNC_ktime_get_ns),
		EXIT,
	};
	struct object_desc d = {};
	char *error = NULL;

	assert_int_equal(describe(prog, sizeof(prog) / sizeof(prog[0]), "cgroup_device",
				  "cgroup_device", &d, &error),
			 0);
	assert_null(error);
	assert_int_equal(d.n_programs, 1);
	assert_int_equal(d.n_maps, 0);
	assert_int_equal(d.object_bytes, sizeof(prog));
	assert_string_equal(d.programs[0].name, "prog");
	assert_int_equal(d.programs[0].prog_type, BPF_PROG_TYPE_CGROUP_DEVICE);
	assert_int_equal(d.programs[0].attach_type, BPF_CGROUP_DEVICE);
	assert_true(d.programs[0].load);
	assert_int_equal(d.programs[0].insn_cnt, 12);
	/* Every helper, once, sorted. */
	assert_int_equal(d.programs[0].n_helpers, 2);
	assert_int_equal(d.programs[0].helpers[0], BPF_FUNC_ktime_get_ns);
	assert_int_equal(d.programs[0].helpers[1], BPF_FUNC_get_prandom_u32);
	assert_int_equal(d.programs[0].n_kfuncs, 0);
	object_desc_done(&d);
}

static void test_kfuncs(void **state)
{
	static const struct bpf_insn prog[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 77),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 5),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 77),
		MOV0(0),
		EXIT,
	};
	static const struct bpf_insn module[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 1, 77),
		EXIT,
	};
	struct object_desc d = {};
	char *error = NULL;

	assert_int_equal(describe(prog, 5, "socket_filter", NULL, &d, &error), 0);
	assert_int_equal(d.programs[0].n_kfuncs, 2);
	assert_string_equal(d.programs[0].kfuncs[0], "btf_id:77");
	assert_string_equal(d.programs[0].kfuncs[1], "btf_id:5");
	assert_int_equal(d.programs[0].attach_type, 0);
	object_desc_done(&d);
	expect_error(module, 2, "socket_filter", -EPERM, "calls a kfunc of a kernel module");
}

static void test_refused(void **state)
{
	static const struct bpf_insn map_fd[] = {LD_IMM64(BPF_PSEUDO_MAP_FD, 3), EXIT};
	static const struct bpf_insn map_idx[] = {LD_IMM64(BPF_PSEUDO_MAP_IDX, 0), EXIT};
	static const struct bpf_insn map_value[] = {LD_IMM64(BPF_PSEUDO_MAP_VALUE, 3), EXIT};
	static const struct bpf_insn map_idx_value[] = {LD_IMM64(BPF_PSEUDO_MAP_IDX_VALUE, 0),
							EXIT};
	static const struct bpf_insn btf_id[] = {LD_IMM64(BPF_PSEUDO_BTF_ID, 3), EXIT};
	static const struct bpf_insn module_var[] = {
		INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_BTF_ID, 0, 3),
		INSN(0, 0, 0, 0, 4 /* a module's BTF, by fd */), EXIT};
	struct object_desc d = {};
	char *error = NULL;

	expect_error(map_fd, 3, "socket_filter", -EPERM,
		     "instruction 0 references a map (BPF_PSEUDO_MAP_FD); raw instruction loads "
		     "cannot use maps");
	expect_error(map_idx, 3, "socket_filter", -EPERM, "(BPF_PSEUDO_MAP_IDX)");
	expect_error(map_value, 3, "socket_filter", -EPERM, "(BPF_PSEUDO_MAP_VALUE)");
	expect_error(map_idx_value, 3, "socket_filter", -EPERM, "(BPF_PSEUDO_MAP_IDX_VALUE)");
	/* A kernel variable is read_kernel_memory for the policy, as in an ELF object. */
	assert_int_equal(describe(btf_id, 3, "socket_filter", NULL, &d, &error), 0);
	assert_int_equal(d.programs[0].n_ksyms, 1);
	assert_string_equal(d.programs[0].ksyms[0], "btf_id:3");
	object_desc_done(&d);
	expect_error(module_var, 3, "socket_filter", -EPERM,
		     "references a kernel module's variable");
}

static void test_malformed(void **state)
{
	static const struct bpf_insn half[] = {MOV0(0), EXIT,
					       INSN(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 0)};
	static const struct bpf_insn second[] = {INSN(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 0),
						 INSN(0, 2, 0, 0, 0), EXIT};
	static const struct bpf_insn kind[] = {LD_IMM64(7, 0), EXIT};
	static const struct bpf_insn call_back[] = {
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, -2), EXIT};
	static const struct bpf_insn call_kind[] = {INSN(BPF_JMP | BPF_CALL, 0, 9, 0, 0), EXIT};
	static const struct bpf_insn callback[] = {LD_IMM64(BPF_PSEUDO_FUNC, 5), EXIT};
	struct object_desc d = {};
	char *error = NULL;

	expect_error(half, 3, "socket_filter", -EBADMSG,
		     "instruction 2 is a 64-bit load whose second half is missing");
	expect_error(second, 3, "socket_filter", -EBADMSG,
		     "instruction 1 is the second half of a 64-bit load");
	expect_error(kind, 3, "socket_filter", -EBADMSG,
		     "instruction 0 is a 64-bit load of unknown kind 7");
	expect_error(call_back, 2, "socket_filter", -EBADMSG,
		     "instruction 0 calls a subprogram outside the instructions");
	expect_error(call_kind, 2, "socket_filter", -EBADMSG,
		     "instruction 0 is a call of unknown kind 9");
	expect_error(callback, 3, "socket_filter", -EBADMSG,
		     "instruction 0 refers to a callback outside the instructions");
	expect_error(half, 2, "no_such_type", -EINVAL, "unknown program type \"no_such_type\"");
	assert_int_equal(insns_describe(half, 16, "prog", "socket_filter", "no_such_attach", false,
					&d, &error),
			 -EINVAL);
	assert_string_equal(error, "unknown attach type \"no_such_attach\"");
	free(error);
	error = NULL;
	/* Sizes: empty, not whole instructions. */
	assert_int_equal(insns_describe(half, 0, "prog", "socket_filter", NULL, false, &d, &error),
			 -EBADMSG);
	assert_string_equal(error, "the instructions are empty");
	free(error);
	error = NULL;
	assert_int_equal(insns_describe(half, 12, "prog", "socket_filter", NULL, false, &d, &error),
			 -EBADMSG);
	assert_string_equal(error, "the instructions are 12 bytes, not a multiple of 8 (the size "
				   "of one struct bpf_insn)");
	free(error);
	assert_null(d.programs);
}

static void test_check_size(void **state)
{
	char *error = NULL;

	assert_int_equal(insns_check_size(8 * 4096, 4096, "p", &error), 0);
	assert_null(error);
	assert_int_equal(insns_check_size(8 * 4097, 4096, "dev", &error), -E2BIG);
	assert_string_equal(error,
			    "program \"dev\" has 4097 instructions, over your limit of 4096");
	free(error);
	error = NULL;
	assert_int_equal(insns_check_size(9, 4096, "p", &error), -EBADMSG);
	free(error);
	assert_int_equal(insns_check_size(0, 4096, "p", NULL), -EBADMSG);
}

/* The policy decides on a raw program as on an object's. */
static void test_policy_decides(void **state)
{
	static const struct bpf_insn prog[] = {CALL(BPF_FUNC_probe_read_kernel), MOV0(0), EXIT};
	struct policy *p = policy_new();
	struct policy_identity id = {.uid = 1, .gid = 1};
	struct policy_grant *g = NULL;
	struct policy_verdict v = {};
	struct object_desc d = {};
	char *error = NULL;

	assert_int_equal(policy_load_string(p, "t.json",
					    "{\"rules\":[{\"match\":{\"uids\":[\"1\"]},"
					    "\"allow\":{\"program_types\":[\"socket_filter\"],"
					    "\"helper_classes\":[\"base\"]},"
					    "\"limits\":{\"max_insns_per_program\":2}}]}",
					    NULL, NULL, &error),
			 0);
	assert_int_equal(policy_resolve(p, &id, &g), 0);
	assert_int_equal(describe(prog, 3, "socket_filter", NULL, &d, &error), 0);
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(policy_verdict_first_reason(&v),
			    "program \"prog\" has 3 instructions, over your limit of 2 (policy key "
			    "max_insns_per_program)");
	policy_verdict_done(&v);
	d.programs[0].insn_cnt = 2;
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_string_equal(policy_verdict_first_reason(&v),
			    "program \"prog\" calls bpf_probe_read_kernel (class "
			    "read_kernel_memory), which your policy does not allow (policy key "
			    "helper_classes: read_kernel_memory)");
	/* Socket filter fds are always handed out; no maps to decide on. */
	assert_true(v.prog_fd[0]);
	assert_int_equal(v.n_maps, 0);
	policy_verdict_done(&v);
	object_desc_done(&d);
	policy_grant_free(g);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),   cmocka_unit_test(test_kfuncs),
		cmocka_unit_test(test_refused),	   cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_check_size), cmocka_unit_test(test_policy_decides),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
