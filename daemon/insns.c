/* SPDX-License-Identifier: MIT */
#include "insns.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "inspect.h"

#define INSN_SIZE sizeof(struct bpf_insn)

int insns_check_size(uint64_t size, uint64_t max_insns, const char *prog_name, char **error)
{
	if (size == 0)
		return error_setf(error, -EBADMSG, "the instructions are empty");
	if (size % INSN_SIZE != 0)
		return error_setf(error, -EBADMSG,
				  "the instructions are %" PRIu64
				  " bytes, not a multiple of %zu (the size "
				  "of one struct bpf_insn)",
				  size, INSN_SIZE);
	/* The same words as policy_decide()'s, which checks the count again. */
	if (size / INSN_SIZE > max_insns)
		return error_setf(error, -E2BIG,
				  "program \"%s\" has %" PRIu64
				  " instructions, over your limit of %" PRIu64,
				  prog_name, size / INSN_SIZE, max_insns);
	return 0;
}

static const char *ld_imm64_kind(uint8_t src)
{
	switch (src) {
	case BPF_PSEUDO_MAP_FD:
		return "BPF_PSEUDO_MAP_FD";
	case BPF_PSEUDO_MAP_IDX:
		return "BPF_PSEUDO_MAP_IDX";
	case BPF_PSEUDO_MAP_VALUE:
		return "BPF_PSEUDO_MAP_VALUE";
	case BPF_PSEUDO_MAP_IDX_VALUE:
		return "BPF_PSEUDO_MAP_IDX_VALUE";
	default:
		return NULL;
	}
}

/* A call or callback at i refers to i + imm + 1, which must lie inside the blob. */
static bool target_in_blob(size_t i, int32_t imm, size_t n)
{
	int64_t t = (int64_t)i + imm + 1;

	return t >= 0 && (uint64_t)t < n;
}

/*
 * Walk every instruction: what may not be there is refused here, kfunc
 * calls are collected (helper calls come from inspect_insns_helpers()).
 */
static int scan(const uint8_t *p, size_t n, int32_t **ret_kfuncs, size_t *ret_n, char **error)
{
	_cleanup_free_ int32_t *kfuncs = NULL;
	size_t n_kfuncs = 0;

	for (size_t i = 0; i < n; i++) {
		struct bpf_insn insn, next;

		memcpy(&insn, p + i * INSN_SIZE, INSN_SIZE);
		if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (i + 1 >= n)
				return error_setf(
					error, -EBADMSG,
					"instruction %zu loads a 64-bit constant whose second "
					"half is missing",
					i);
			memcpy(&next, p + (i + 1) * INSN_SIZE, INSN_SIZE);
			if (next.code || next.dst_reg || next.src_reg || next.off)
				return error_setf(
					error, -EBADMSG,
					"instruction %zu is the second half of a 64-bit constant "
					"and must hold nothing but the immediate",
					i + 1);
			if (ld_imm64_kind(insn.src_reg))
				return error_setf(
					error, -EPERM,
					"instruction %zu references a map (%s); raw instruction "
					"loads cannot use maps",
					i, ld_imm64_kind(insn.src_reg));
			if (insn.src_reg == BPF_PSEUDO_BTF_ID)
				return error_setf(
					error, -EPERM,
					"instruction %zu references a kernel variable "
					"(BPF_PSEUDO_BTF_ID); raw instruction loads cannot use "
					"them",
					i);
			if (insn.src_reg == BPF_PSEUDO_FUNC && !target_in_blob(i, insn.imm, n))
				return error_setf(
					error, -EBADMSG,
					"instruction %zu refers to a callback outside the "
					"instructions",
					i);
			if (insn.src_reg != 0 && insn.src_reg != BPF_PSEUDO_FUNC)
				return error_setf(
					error, -EBADMSG,
					"instruction %zu loads a 64-bit constant of unknown kind "
					"%u",
					i, insn.src_reg);
			i++;
			continue;
		}
		if (insn.code != (BPF_JMP | BPF_CALL) || insn.src_reg == 0)
			continue;
		if (insn.src_reg == BPF_PSEUDO_CALL) {
			if (!target_in_blob(i, insn.imm, n))
				return error_setf(error, -EBADMSG,
						  "instruction %zu calls a subprogram outside the "
						  "instructions",
						  i);
		} else if (insn.src_reg == BPF_PSEUDO_KFUNC_CALL) {
			int32_t *nk;

			/* A non-zero offset picks a module's BTF from an fd array we never pass. */
			if (insn.off != 0)
				return error_setf(
					error, -EPERM,
					"instruction %zu calls a kfunc of a kernel module; raw "
					"instruction loads can call only the kernel's own",
					i);
			nk = realloc(kfuncs, (n_kfuncs + 1) * sizeof(*kfuncs));
			if (!nk)
				return -ENOMEM;
			kfuncs = nk;
			kfuncs[n_kfuncs++] = insn.imm;
		} else {
			return error_setf(error, -EBADMSG,
					  "instruction %zu is a call of unknown kind %u", i,
					  insn.src_reg);
		}
	}
	*ret_kfuncs = TAKE_PTR(kfuncs);
	*ret_n = n_kfuncs;
	return 0;
}

/* kfunc names from the running kernel's BTF, or "btf_id:N" where there is none. */
static int name_kfuncs(const int32_t *ids, size_t n, bool resolve, char ***ret, size_t *ret_n)
{
	struct btf *vmlinux = resolve && n ? btf__load_vmlinux_btf() : NULL;
	char **names = n ? calloc(n, sizeof(char *)) : NULL;
	size_t k = 0;
	int r = 0;

	if (n && !names)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct btf_type *t =
			vmlinux && ids[i] > 0 ? btf__type_by_id(vmlinux, (uint32_t)ids[i]) : NULL;
		const char *name =
			t && btf_is_func(t) ? btf__name_by_offset(vmlinux, t->name_off) : NULL;
		bool seen = false;
		char *s;

		for (size_t j = 0; j < i; j++)
			seen = seen || ids[j] == ids[i];
		if (seen)
			continue;
		if (name && *name)
			s = strdup(name);
		else if (asprintf(&s, "btf_id:%" PRId32, ids[i]) < 0)
			s = NULL;
		if (!s)
			r = -ENOMEM;
		else
			names[k++] = s;
	}
	btf__free(vmlinux);
	if (r < 0) {
		for (size_t i = 0; i < k; i++)
			free(names[i]);
		free(names);
		return r;
	}
	*ret = names;
	*ret_n = k;
	return 0;
}

int insns_describe(const void *insns, size_t size, const char *prog_name, const char *type,
		   const char *attach_type, bool resolve_kfuncs, struct object_desc *ret,
		   char **error)
{
	_cleanup_(object_desc_done) struct object_desc d = {};
	_cleanup_free_ int32_t *kfunc_ids = NULL;
	struct object_program *p;
	size_t n = size / INSN_SIZE, n_kfunc_ids = 0;
	int prog_type, expected = 0, r;

	r = insns_check_size(size, UINT32_MAX, prog_name, error);
	if (r < 0)
		return r;
	prog_type = policy_prog_type_from_string(type);
	if (prog_type < 0)
		return error_setf(error, -EINVAL, "unknown program type \"%.64s\"", type);
	if (attach_type) {
		expected = policy_attach_type_from_string(attach_type);
		if (expected < 0)
			return error_setf(error, -EINVAL, "unknown attach type \"%.64s\"",
					  attach_type);
	}
	r = scan(insns, n, &kfunc_ids, &n_kfunc_ids, error);
	if (r < 0)
		return r;

	d.object_bytes = size;
	d.programs = p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	d.n_programs = 1;
	*p = (struct object_program){
		.prog_type = prog_type,
		.attach_type = expected,
		.load = true,
		.insn_cnt = (uint32_t)n,
	};
	p->name = strdup(prog_name);
	if (!p->name)
		return -ENOMEM;
	r = inspect_insns_helpers(insns, n, &p->helpers, &p->n_helpers, NULL);
	if (r >= 0)
		r = name_kfuncs(kfunc_ids, n_kfunc_ids, resolve_kfuncs, &p->kfuncs, &p->n_kfuncs);
	if (r < 0)
		return r;
	*ret = d;
	d = (struct object_desc){};
	return 0;
}

int insns_load(const void *insns, size_t size, const struct object_program *p, const char *license,
	       char *log, size_t log_size)
{
	/* With a log buffer and level 0, libbpf retries a failed load with the log on. */
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)p->attach_type, .log_buf = log,
		    .log_size = (uint32_t)log_size);

	return bpf_prog_load((enum bpf_prog_type)p->prog_type, p->name, license, insns,
			     size / INSN_SIZE, &opts);
}
