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
#include "insncheck.h"
#include "inspect.h"
#include "policy/attach_type.h"

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

static const char *map_ref_kind(uint8_t src)
{
	switch (src) {
	case BPF_PSEUDO_MAP_FD:
		return "BPF_PSEUDO_MAP_FD";
	case BPF_PSEUDO_MAP_IDX:
		return "BPF_PSEUDO_MAP_IDX";
	case BPF_PSEUDO_MAP_VALUE:
		return "BPF_PSEUDO_MAP_VALUE";
	default:
		return "BPF_PSEUDO_MAP_IDX_VALUE";
	}
}

/* A call or callback at i refers to i + imm + 1, which must lie inside the blob. */
static bool target_in_blob(size_t i, int32_t imm, size_t n)
{
	int64_t t = (int64_t)i + imm + 1;

	return t >= 0 && (uint64_t)t < n;
}

static int append_id(int32_t **v, size_t *n, int32_t id)
{
	int32_t *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = id;
	*v = nv;
	return 0;
}

/*
 * Walk every instruction through the allow-list (insncheck.h) and apply what
 * raw loads may do with the special ones; kfunc calls and kernel references
 * are collected by BTF id for the policy, and the rest summarized as
 * inspect_insns_summary() does, in the same walk.
 */
static int scan(const uint8_t *p, size_t n, struct insns_summary *sum, int32_t **ret_kfuncs,
		size_t *ret_n_kfuncs, int32_t **ret_ksyms, size_t *ret_n_ksyms, char **error)
{
	_cleanup_free_ int32_t *kfuncs = NULL, *ksyms = NULL;
	size_t n_kfuncs = 0, n_ksyms = 0;
	int r;

	for (size_t i = 0; i < n;) {
		struct insn_decoded d;

		r = insn_decode(p, n, i, &d, error);
		if (r < 0)
			return r;
		r = insns_summary_add(sum, &d);
		if (r < 0)
			return r;
		switch (d.kind) {
		case INSN_MAP_REF:
			/* An fd of the worker's table, or an index into an fd array never passed.
			 */
			return error_setf(error, -EPERM,
					  "instruction %zu references a map (%s); raw instruction "
					  "loads cannot use maps",
					  i, map_ref_kind(d.src_reg));
		case INSN_KERNEL_REF:
			/* The second half names a module's BTF by fd: the worker's fd table. */
			if (d.imm2 != 0)
				return error_setf(
					error, -EPERM,
					"instruction %zu references a kernel module's "
					"variable; raw instruction loads can reference only "
					"the kernel's own",
					i);
			r = append_id(&ksyms, &n_ksyms, d.imm);
			break;
		case INSN_FUNC_REF:
		case INSN_SUBPROG_CALL:
			r = target_in_blob(i, d.imm, n)
				    ? 0
				    : error_setf(error, -EBADMSG,
						 "instruction %zu %s outside the instructions", i,
						 d.kind == INSN_FUNC_REF ? "refers to a callback"
									 : "calls a subprogram");
			break;
		case INSN_KFUNC_CALL:
			/* A non-zero offset picks a module's BTF from an fd array we never pass. */
			if (d.off != 0)
				return error_setf(
					error, -EPERM,
					"instruction %zu calls a kfunc of a kernel module; raw "
					"instruction loads can call only the kernel's own",
					i);
			r = append_id(&kfuncs, &n_kfuncs, d.imm);
			break;
		default:
			r = 0;
			break;
		}
		if (r < 0)
			return r;
		i += d.width;
	}
	insns_summary_finish(sum);
	*ret_kfuncs = TAKE_PTR(kfuncs);
	*ret_n_kfuncs = n_kfuncs;
	*ret_ksyms = TAKE_PTR(ksyms);
	*ret_n_ksyms = n_ksyms;
	return 0;
}

/* Names of BTF ids from the running kernel's BTF (vmlinux, may be NULL), or "btf_id:N". */
static int name_btf_ids(const struct btf *vmlinux, const int32_t *ids, size_t n, char ***ret,
			size_t *ret_n)
{
	char **names = n ? calloc(n, sizeof(char *)) : NULL;
	size_t k = 0;
	int r = 0;

	if (n && !names)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct btf_type *t =
			vmlinux && ids[i] > 0 ? btf__type_by_id(vmlinux, (uint32_t)ids[i]) : NULL;
		const char *name = t && (btf_is_func(t) || btf_is_var(t))
					   ? btf__name_by_offset(vmlinux, t->name_off)
					   : NULL;
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
	_cleanup_free_ int32_t *kfunc_ids = NULL, *ksym_ids = NULL;
	_cleanup_(insns_summary_done) struct insns_summary sum = {};
	struct btf *vmlinux = NULL;
	struct object_program *p;
	size_t n = size / INSN_SIZE, n_kfunc_ids = 0, n_ksym_ids = 0;
	int prog_type, expected = 0, r;

	r = insns_check_size(size, UINT32_MAX, prog_name, error);
	if (r < 0)
		return r;
	prog_type = policy_prog_type_from_string(type);
	if (prog_type < 0)
		return error_setf(error, -EINVAL, "unknown program type \"%.64s\"", type);
	if (attach_type) {
		expected = attach_type_from_string(attach_type);
		if (expected < 0)
			return error_setf(error, -EINVAL, "unknown attach type \"%.64s\"",
					  attach_type);
	}
	r = scan(insns, n, &sum, &kfunc_ids, &n_kfunc_ids, &ksym_ids, &n_ksym_ids, error);
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
	p->helpers = TAKE_PTR(sum.helpers);
	p->n_helpers = sum.n_helpers;
	if (resolve_kfuncs && (n_kfunc_ids || n_ksym_ids))
		vmlinux = btf__load_vmlinux_btf();
	r = name_btf_ids(vmlinux, kfunc_ids, n_kfunc_ids, &p->kfuncs, &p->n_kfuncs);
	if (r >= 0)
		r = name_btf_ids(vmlinux, ksym_ids, n_ksym_ids, &p->ksyms, &p->n_ksyms);
	btf__free(vmlinux);
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
