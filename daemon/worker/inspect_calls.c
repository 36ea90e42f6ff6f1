/* SPDX-License-Identifier: MIT */
/*
 * The call graph of a BPF ELF object: what each function's instructions call
 * and reference, and for each program everything reachable from it.
 */
#include "inspect.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "insncheck.h"
#include "inspect_internal.h"

static int add_callee(struct ctx *c, struct func *f, size_t insn, int64_t target, const char *what)
{
	size_t callee;
	int r;

	callee = find_func(c, c->text, target);
	if (callee == SIZE_MAX)
		return error_setf(
			c->error, -EBADMSG,
			"%s at instruction %zu of section %s (function %s) targets instruction "
			"%lld of .text, which does not start a function",
			what, insn, sec_name(c, f->sec), f->name, (long long)target);
	r = GROW(f->callees, f->n_callees, f->cap_callees);
	if (r < 0)
		return r;
	f->callees[f->n_callees++] = callee;
	return 0;
}

static int add_extern(struct func *f, const char *name)
{
	int r = GROW(f->externs, f->n_externs, f->cap_externs);

	if (r < 0)
		return r;
	f->externs[f->n_externs++] = name;
	return 0;
}

/*
 * A 64-bit load with a relocation: libbpf rewrites it (bpf_object__relocate_data(),
 * bpf_object__relocate_calls()) into a map or global data reference, a
 * callback reference (BPF_PSEUDO_FUNC, RELO_SUBPROG_ADDR: it also appends the
 * callee), or for an extern variable a kernel symbol or a Kconfig value. What
 * the object wrote there itself must be a plain load, or libbpf's own callback
 * marking.
 */
static int scan_ld_imm64_relocated(struct ctx *c, struct func *f, size_t i,
				   const struct insn_decoded *d, const struct reloc *rel)
{
	const struct section *text = &c->secs[c->text];
	const GElf_Sym *sym = &c->syms[rel->sym];
	int64_t off;

	if (d->kind != INSN_CONST64 && d->kind != INSN_FUNC_REF)
		return error_setf(
			c->error, -EBADMSG,
			"relocation %zu in %s is on instruction %zu, %s; a relocated 64-bit "
			"load must be a plain one",
			rel->nr, sec_name(c, rel->rel_sec), i, insn_kind_to_string(d->kind));
	if (sym_is_extern(sym)) {
		const char *name = elf_strptr(c->elf, c->strtab, sym->st_name);

		if (d->kind == INSN_FUNC_REF || !name || !inspect_name_is_valid(name))
			return error_setf(c->error, -EBADMSG,
					  "relocation %zu in %s: instruction %zu loads an extern "
					  "variable without a valid name",
					  rel->nr, sec_name(c, rel->rel_sec), i);
		return add_extern(f, name);
	}
	if (!sym_is_subprog(c, sym)) {
		/* Map or global data: libbpf's own map, no code reached. */
		if (d->kind == INSN_FUNC_REF)
			return error_setf(c->error, -EBADMSG,
					  "function reference at instruction %zu of section %s is "
					  "relocated against a non-function",
					  i, sec_name(c, f->sec));
		return 0;
	}
	/* Global function: st_value is its offset and imm 0; static: the section's
	 * symbol (st_value 0) and imm the byte offset. */
	if (sym->st_value % BPF_INSN_SZ || d->imm % (int32_t)BPF_INSN_SZ ||
	    sym->st_value > text->size)
		return error_setf(c->error, -EBADMSG,
				  "relocation %zu in %s: bad function reference at instruction %zu",
				  rel->nr, sec_name(c, rel->rel_sec), i);
	off = (int64_t)sym->st_value + d->imm;
	return add_callee(c, f, i, off / (int64_t)BPF_INSN_SZ, "function reference");
}

static int scan_call_relocated(struct ctx *c, struct func *f, size_t i,
			       const struct insn_decoded *d, const struct reloc *rel)
{
	const GElf_Sym *sym = &c->syms[rel->sym];
	int r;

	/* An extern: libbpf turns the call (helper or BPF call encoding, as clang
	 * writes it) into BPF_PSEUDO_KFUNC_CALL with the kernel's BTF id for that name. */
	if (sym_is_extern(sym)) {
		const char *name = elf_strptr(c->elf, c->strtab, sym->st_name);

		if (d->kind == INSN_KFUNC_CALL)
			return error_setf(c->error, -EBADMSG,
					  "relocation %zu in %s is on a kfunc call that is already "
					  "resolved",
					  rel->nr, sec_name(c, rel->rel_sec));
		if (!name || !*name || !inspect_name_is_valid(name))
			return error_setf(
				c->error, -EBADMSG,
				"relocation %zu in %s: kfunc symbol %zu has no valid name", rel->nr,
				sec_name(c, rel->rel_sec), rel->sym);
		r = GROW(f->kfuncs, f->n_kfuncs, f->cap_kfuncs);
		if (r < 0)
			return r;
		f->kfuncs[f->n_kfuncs++] = name;
		return 0;
	}
	if (d->kind != INSN_SUBPROG_CALL)
		return error_setf(c->error, -EBADMSG,
				  "relocation %zu in %s is on instruction %zu, which is not a "
				  "call to a BPF function",
				  rel->nr, sec_name(c, rel->rel_sec), i);
	/* libbpf only resolves calls into .text, whatever the symbol's section. */
	if (c->text == 0 || sym->st_shndx != c->text) {
		const char *n = sym_name(c, sym);

		if (!n)
			n = "<invalid>";
		if (c->text == 0)
			return error_setf(c->error, -EBADMSG,
					  "relocation %zu in %s: call against %s, but the object "
					  "has no code in .text",
					  rel->nr, sec_name(c, rel->rel_sec), n);
		if (sym->st_shndx == SHN_UNDEF)
			return error_setf(c->error, -EBADMSG,
					  "relocation %zu in %s: call against undefined symbol "
					  "%s, which is not a kfunc declaration",
					  rel->nr, sec_name(c, rel->rel_sec), n);
		return error_setf(c->error, -EBADMSG,
				  "relocation %zu in %s: call against %s in section %s, not .text",
				  rel->nr, sec_name(c, rel->rel_sec), n,
				  sec_name(c, sym->st_shndx));
	}
	if (sym->st_value % BPF_INSN_SZ || sym->st_value > c->secs[c->text].size)
		return error_setf(
			c->error, -EBADMSG,
			"relocation %zu in %s: call target is not an instruction of .text", rel->nr,
			sec_name(c, rel->rel_sec));
	/* Global function: symbol at the callee, imm -1; static: section symbol, imm the
	 * callee's instruction index - 1. Either way relative to the symbol, not the call.
	 */
	return add_callee(c, f, i, (int64_t)(sym->st_value / BPF_INSN_SZ) + d->imm + 1, "call");
}

/*
 * An instruction without a relocation reaches the kernel as it is (libbpf
 * leaves it alone, bar an unrelocated BPF call, which it resolves in .text),
 * so what it means is what the allow-list says, exactly as for raw loads.
 */
static int scan_unrelocated(struct ctx *c, struct func *f, size_t i, const struct insn_decoded *d)
{
	int r;

	switch (d->kind) {
	case INSN_HELPER_CALL:
		r = GROW(f->helpers, f->n_helpers, f->cap_helpers);
		if (r < 0)
			return r;
		f->helpers[f->n_helpers++] = d->imm;
		return 0;
	case INSN_SUBPROG_CALL:
		if (c->text == 0)
			return error_setf(
				c->error, -EBADMSG,
				"call at instruction %zu of section %s, but the object has no "
				".text",
				i, sec_name(c, f->sec));
		/* libbpf quirk: an unrelocated call is taken relative to the caller's
		 * position in its own section but always looked up in .text
		 * (bpf_object__reloc_code()). For callers in .text, and all clang
		 * output, that is simply a same-section call. */
		return add_callee(c, f, i, (int64_t)i + d->imm + 1, "call");
	case INSN_KFUNC_CALL:
		/* The name would be the kernel BTF id in imm, unchecked by anyone. */
		return error_setf(c->error, -EBADMSG,
				  "kfunc call at instruction %zu of section %s has no relocation",
				  i, sec_name(c, f->sec));
	case INSN_FUNC_REF:
		/* libbpf insists on a relocation here ("missing subprog addr relo"). */
		return error_setf(c->error, -EBADMSG,
				  "function reference at instruction %zu of section %s has no "
				  "relocation",
				  i, sec_name(c, f->sec));
	case INSN_MAP_REF:
		/* An fd number the kernel would look up in the broker's own fd table. */
		return error_setf(c->error, -EPERM,
				  "instruction %zu of section %s references a map without a "
				  "relocation: maps are referenced only through the object's own "
				  "map definitions",
				  i, sec_name(c, f->sec));
	case INSN_KERNEL_REF:
		/* The second half names a module's BTF by fd: the broker's fd table. */
		if (d->imm2 != 0)
			return error_setf(
				c->error, -EPERM,
				"instruction %zu of section %s references a kernel module's "
				"variable by fd",
				i, sec_name(c, f->sec));
		r = GROW(f->kref_ids, f->n_kref_ids, f->cap_kref_ids);
		if (r < 0)
			return r;
		f->kref_ids[f->n_kref_ids++] = d->imm;
		return 0;
	default:
		return 0;
	}
}

static int scan_function(struct ctx *c, struct func *f)
{
	const struct section *s = &c->secs[f->sec];
	size_t end = f->start + f->cnt;
	int r;

	for (size_t i = f->start; i < end;) {
		const struct reloc *rel = find_reloc(s, i);
		struct insn_decoded d;

		if (s->code[i * BPF_INSN_SZ] == (BPF_LD | BPF_IMM | BPF_DW) && i + 1 >= end)
			return error_setf(c->error, -EBADMSG,
					  "function %s in section %s ends inside a 16-byte "
					  "instruction",
					  f->name, s->name);
		/* Decoded within the function: a 64-bit load can't straddle two. */
		r = insn_decode(s->code, end, i, &d, c->error);
		if (r < 0)
			return r;
		if (!rel)
			r = scan_unrelocated(c, f, i, &d);
		else if (d.width == 2)
			r = scan_ld_imm64_relocated(c, f, i, &d, rel);
		else if (d.kind == INSN_HELPER_CALL || d.kind == INSN_SUBPROG_CALL ||
			 d.kind == INSN_KFUNC_CALL)
			r = scan_call_relocated(c, f, i, &d, rel);
		else
			/* libbpf refuses these too; here they would go unnoticed otherwise. */
			r = error_setf(c->error, -EBADMSG,
				       "relocation %zu in %s is on instruction %zu of section %s, "
				       "which is neither a call nor a 64-bit load",
				       rel->nr, sec_name(c, rel->rel_sec), i, s->name);
		if (r < 0)
			return r;
		/* The second half of a 64-bit load is data: no relocation may point there. */
		if (d.width == 2 && (rel = find_reloc(s, i + 1)))
			return error_setf(
				c->error, -EBADMSG,
				"relocation %zu in %s is on instruction %zu of section %s, "
				"which is neither a call nor a 64-bit load",
				rel->nr, sec_name(c, rel->rel_sec), i + 1, s->name);
		i += d.width;
	}
	f->n_helpers = sort_unique(f->helpers, f->n_helpers, sizeof(*f->helpers), cmp_int);
	f->n_kfuncs = sort_unique(f->kfuncs, f->n_kfuncs, sizeof(*f->kfuncs), cmp_str);
	f->n_externs = sort_unique(f->externs, f->n_externs, sizeof(*f->externs), cmp_str);
	f->n_kref_ids = sort_unique(f->kref_ids, f->n_kref_ids, sizeof(*f->kref_ids), cmp_int);
	f->n_callees = sort_unique(f->callees, f->n_callees, sizeof(*f->callees), cmp_size);
	return 0;
}

static int cmp_func_name(const void *a, const void *b, void *userdata)
{
	const struct func *funcs = userdata;

	return strcmp(funcs[*(const size_t *)a].name, funcs[*(const size_t *)b].name);
}

/* Everything reachable from funcs[entry], with the other entries' walks sharing one work budget. */
static int walk_entry(struct ctx *c, size_t entry, uint32_t stamp, size_t *queue, uint64_t *work,
		      struct elf_entry *ret)
{
	_cleanup_free_ int *helpers = NULL;
	_cleanup_free_ const char **kfuncs = NULL, **externs = NULL;
	_cleanup_free_ int32_t *krefs = NULL;
	size_t n_helpers = 0, cap_helpers = 0, n_kfuncs = 0, cap_kfuncs = 0, head = 0, tail = 0;
	size_t n_externs = 0, cap_externs = 0, n_krefs = 0, cap_krefs = 0;
	const struct func *e = &c->funcs[entry];
	uint64_t insns = 0;
	int r;

	c->funcs[entry].stamp = stamp;
	queue[tail++] = entry;
	while (head < tail) {
		struct func *f = &c->funcs[queue[head++]];

		*work += 1 + f->n_callees + f->n_helpers + f->n_kfuncs + f->n_externs +
			 f->n_kref_ids;
		if (*work > INSPECT_MAX_WORK)
			return error_setf(c->error, -E2BIG, "call graph too large to analyse");
		insns += f->cnt;
		r = APPEND_ALL(helpers, n_helpers, cap_helpers, f->helpers, f->n_helpers);
		if (r >= 0)
			r = APPEND_ALL(kfuncs, n_kfuncs, cap_kfuncs, f->kfuncs, f->n_kfuncs);
		if (r >= 0)
			r = APPEND_ALL(externs, n_externs, cap_externs, f->externs, f->n_externs);
		if (r >= 0)
			r = APPEND_ALL(krefs, n_krefs, cap_krefs, f->kref_ids, f->n_kref_ids);
		if (r < 0)
			return r;
		for (size_t i = 0; i < f->n_callees; i++) {
			struct func *g = &c->funcs[f->callees[i]];

			/* Each function is queued once per walk: cycles end here. */
			if (g->stamp == stamp)
				continue;
			g->stamp = stamp;
			queue[tail++] = f->callees[i];
		}
	}
	if (insns > UINT32_MAX)
		return error_setf(c->error, -E2BIG, "program %s is too large", e->name);

	n_helpers = sort_unique(helpers, n_helpers, sizeof(*helpers), cmp_int);
	n_kfuncs = sort_unique(kfuncs, n_kfuncs, sizeof(*kfuncs), cmp_str);
	n_externs = sort_unique(externs, n_externs, sizeof(*externs), cmp_str);
	n_krefs = sort_unique(krefs, n_krefs, sizeof(*krefs), cmp_int);
	ret->insn_cnt = (uint32_t)insns;
	ret->name = strdup(e->name);
	ret->section = strdup(c->secs[e->sec].name);
	if (!ret->name || !ret->section)
		return -ENOMEM;
	if (n_helpers > 0) {
		ret->helpers = calloc(n_helpers, sizeof(*ret->helpers));
		if (!ret->helpers)
			return -ENOMEM;
		memcpy(ret->helpers, helpers, n_helpers * sizeof(*helpers));
		ret->n_helpers = n_helpers;
	}
	r = strv_copy(kfuncs, n_kfuncs, &ret->kfuncs, &ret->n_kfuncs);
	if (r < 0)
		return r;
	r = strv_copy(externs, n_externs, &ret->externs, &ret->n_externs);
	if (r < 0)
		return r;
	/* Unrelocated kernel references, named by their BTF id. */
	if (n_krefs > 0) {
		ret->krefs = calloc(n_krefs, sizeof(*ret->krefs));
		if (!ret->krefs)
			return -ENOMEM;
		for (size_t i = 0; i < n_krefs; i++) {
			if (asprintf(&ret->krefs[i], "btf_id:%d", (int)krefs[i]) < 0)
				return -ENOMEM;
			ret->n_krefs = i + 1;
		}
	}
	return 0;
}

static int build_entries(struct ctx *c, struct elf_calls *calls)
{
	_cleanup_free_ size_t *queue = NULL, *entries = NULL;
	size_t n_entries = 0;
	uint64_t work = 0;
	int r;

	queue = calloc(c->n_funcs ? c->n_funcs : 1, sizeof(*queue));
	entries = calloc(c->n_funcs ? c->n_funcs : 1, sizeof(*entries));
	if (!queue || !entries)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_funcs; i++)
		if (c->funcs[i].sec != c->text)
			entries[n_entries++] = i;

	/* Program names go into replies, logs and policy matches: plain names only. */
	for (size_t i = 0; i < n_entries; i++)
		if (!inspect_name_is_valid(c->funcs[entries[i]].name))
			return error_setf(
				c->error, -EBADMSG,
				"a program in section %s has a name that is not 1 to %d of "
				"A-Z a-z 0-9 _ . $ -",
				sec_name(c, c->funcs[entries[i]].sec), INSPECT_MAX_NAME);
	/* Programs are looked up by name; libbpf would just take the first of a pair. */
	qsort_r(entries, n_entries, sizeof(*entries), cmp_func_name, c->funcs);
	for (size_t i = 1; i < n_entries; i++)
		if (strcmp(c->funcs[entries[i]].name, c->funcs[entries[i - 1]].name) == 0)
			return error_setf(c->error, -EBADMSG, "more than one program is named %s",
					  c->funcs[entries[i]].name);

	if (n_entries == 0)
		return 0;
	calls->entries = calloc(n_entries, sizeof(*calls->entries));
	if (!calls->entries)
		return -ENOMEM;
	for (size_t i = 0; i < n_entries; i++) {
		/* n_entries is counted first so that elf_calls_free() sees partial entries. */
		calls->n_entries = i + 1;
		r = walk_entry(c, entries[i], (uint32_t)i + 1, queue, &work, &calls->entries[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

struct elf_calls *elf_calls_free(struct elf_calls *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n_entries; i++) {
		struct elf_entry *e = &c->entries[i];

		free(e->name);
		free(e->section);
		free(e->helpers);
		for (size_t j = 0; j < e->n_kfuncs; j++)
			free(e->kfuncs[j]);
		free(e->kfuncs);
		for (size_t j = 0; j < e->n_externs; j++)
			free(e->externs[j]);
		free(e->externs);
		for (size_t j = 0; j < e->n_krefs; j++)
			free(e->krefs[j]);
		free(e->krefs);
	}
	free(c->entries);
	free(c);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct elf_calls *, elf_calls_free);

int inspect_elf_calls(const void *elf, size_t len, struct elf_calls **ret, char **error)
{
	_cleanup_(ctx_done) struct ctx c = {.error = error};
	_cleanup_(elf_calls_freep) struct elf_calls *calls = NULL;
	size_t shstrndx;
	int r;

	if (!elf || len == 0)
		return error_setf(error, -EINVAL, "empty object");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return error_setf(error, -EINVAL, "libelf is unusable: %s", elf_errmsg(-1));
	c.image = malloc(len);
	if (!c.image)
		return -ENOMEM;
	memcpy(c.image, elf, len);
	c.elf = elf_memory(c.image, len);
	if (!c.elf)
		return error_setf(error, -EINVAL, "not an ELF object: %s", elf_errmsg(-1));

	r = read_header(&c, &shstrndx);
	if (r < 0)
		return r;
	r = read_symbols(&c);
	if (r < 0)
		return r;
	r = read_sections(&c, shstrndx);
	if (r < 0)
		return r;
	r = read_functions(&c);
	if (r < 0)
		return r;
	r = read_relocations(&c);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c.n_funcs; i++) {
		r = scan_function(&c, &c.funcs[i]);
		if (r < 0)
			return r;
	}

	calls = calloc(1, sizeof(*calls));
	if (!calls)
		return -ENOMEM;
	r = build_entries(&c, calls);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(calls);
	return 0;
}
