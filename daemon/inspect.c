/* SPDX-License-Identifier: MIT */
/*
 * Object inspection: the call graph of a BPF ELF object, and a description of
 * an opened libbpf object for policy decisions.
 *
 * The ELF walk mirrors what libbpf 1.1 (src/libbpf.c: bpf_object__elf_collect,
 * bpf_object__add_programs, bpf_program__record_reloc, bpf_object__reloc_code)
 * will later do with the same bytes, so that the instructions judged here are
 * the instructions that get loaded. Where libbpf would silently pick one of
 * several readings (overlapping functions, two relocations on one instruction,
 * a call into the middle of a function), this code refuses the object
 * instead. The input comes from an unprivileged client: every index, offset
 * and size is checked before use, and the amount of work is bounded.
 */
#include "inspect.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

#define BPF_INSN_SZ 8u

/* Bounds on hostile input. Sections stay below SHN_LORESERVE so that special
 * section indices (SHN_ABS, SHN_COMMON, SHN_XINDEX) can never name a real one. */
#define INSPECT_MAX_SECTIONS SHN_LORESERVE
#define INSPECT_MAX_SYMBOLS 65536u
#define INSPECT_MAX_FUNCTIONS 65536u
#define INSPECT_MAX_RELOCATIONS (1u << 22)
/* Functions, edges, helpers and kfuncs visited over all entries' walks together. */
#define INSPECT_MAX_WORK (1u << 26)

/* Not in glibc's elf.h; libbpf defines it the same way. */
#ifndef SHT_LLVM_ADDRSIG
#define SHT_LLVM_ADDRSIG 0x6FFF4C03
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELFDATA_HOST ELFDATA2LSB
#else
#define ELFDATA_HOST ELFDATA2MSB
#endif

_printf_(3, 4) static int fail(char **error, int err, const char *fmt, ...)
{
	va_list ap;

	if (!error)
		return err;
	va_start(ap, fmt);
	if (vasprintf(error, fmt, ap) < 0)
		*error = NULL;
	va_end(ap);
	return err;
}

/* Make room for need elements in *p (of size elem), doubling. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *q;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 8;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	q = reallocarray(*p, n, elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
#define GROW(arr, n, cap) grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort and drop duplicates; returns the new count. */
static size_t sort_unique(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	char *p = base;
	size_t out = 0;

	if (n == 0)
		return 0;
	qsort(base, n, elem, cmp);
	for (size_t i = 1; i < n; i++)
		if (cmp(p + i * elem, p + out * elem) != 0) {
			out++;
			if (out != i)
				memcpy(p + out * elem, p + i * elem, elem);
		}
	return out + 1;
}

struct reloc {
	size_t insn; /* instruction index in the target section */
	size_t sym; /* symbol index */
	size_t nr; /* index within its relocation section, for messages */
	size_t rel_sec; /* the relocation section, for messages */
};

struct section {
	const char *name;
	bool exec; /* holds code libbpf turns into programs */
	const unsigned char *code;
	size_t size; /* bytes */
	size_t *funcs; /* indices into ctx.funcs, sorted by start */
	size_t n_funcs;
	struct reloc *relocs; /* sorted by insn */
	size_t n_relocs, cap_relocs;
};

struct func {
	const char *name; /* points into the ELF string table */
	size_t sec;
	size_t start, cnt; /* in instructions, within sec */
	int *helpers;
	size_t n_helpers, cap_helpers;
	const char **kfuncs; /* point into the ELF string table */
	size_t n_kfuncs, cap_kfuncs;
	size_t *callees; /* indices into ctx.funcs */
	size_t n_callees, cap_callees;
	uint32_t stamp; /* last walk that reached it */
};

struct ctx {
	char **error;
	char *image; /* private copy: elf_memory() takes a non-const buffer */
	Elf *elf;
	struct section *secs;
	size_t n_secs;
	size_t text; /* section index of .text, 0 if none */
	GElf_Sym *syms;
	size_t n_syms;
	size_t strtab;
	struct func *funcs;
	size_t n_funcs, cap_funcs;
};

static void ctx_done(struct ctx *c)
{
	for (size_t i = 0; i < c->n_secs; i++) {
		free(c->secs[i].funcs);
		free(c->secs[i].relocs);
	}
	free(c->secs);
	for (size_t i = 0; i < c->n_funcs; i++) {
		free(c->funcs[i].helpers);
		free(c->funcs[i].kfuncs);
		free(c->funcs[i].callees);
	}
	free(c->funcs);
	free(c->syms);
	if (c->elf)
		elf_end(c->elf);
	free(c->image);
}

static const char *sec_name(const struct ctx *c, size_t idx)
{
	if (idx == 0 || idx >= c->n_secs || !c->secs[idx].name)
		return "<invalid>";
	return c->secs[idx].name;
}

static const char *sym_name(const struct ctx *c, const GElf_Sym *sym)
{
	/* Static functions are referenced through their section's symbol, which has no name. */
	if (GELF_ST_TYPE(sym->st_info) == STT_SECTION && sym->st_name == 0)
		return sec_name(c, sym->st_shndx);
	return elf_strptr(c->elf, c->strtab, sym->st_name);
}

/* libbpf's sym_is_extern(): what a relocated call turns into a kfunc call. */
static bool sym_is_extern(const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);

	return sym->st_shndx == SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
	       GELF_ST_TYPE(sym->st_info) == STT_NOTYPE;
}

/* libbpf's sym_is_subprog(): the only ld_imm64 relocations it reads as a function address. */
static bool sym_is_subprog(const struct ctx *c, const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info), type = GELF_ST_TYPE(sym->st_info);

	if (c->text == 0 || sym->st_shndx != c->text)
		return false;
	return (bind == STB_LOCAL && type == STT_SECTION) ||
	       (bind == STB_GLOBAL && type == STT_FUNC);
}

/* Sections libbpf skips by name or type before looking at them (ignore_elf_section()). */
static bool sec_ignored_by_libbpf(const GElf_Shdr *sh, const char *name)
{
	if (sh->sh_type == SHT_STRTAB || sh->sh_type == SHT_LLVM_ADDRSIG)
		return true;
	if (strncmp(name, ".debug_", 7) == 0)
		return true;
	/* Relocations for DWARF or BTF: libbpf never applies them, so neither may we,
	 * or a crafted ".rel.debug_x" aimed at code would make us read another graph. */
	if (strncmp(name, ".rel", 4) == 0) {
		name += 4;
		if (strncmp(name, ".debug_", 7) == 0 || strcmp(name, ".BTF") == 0 ||
		    strcmp(name, ".BTF.ext") == 0)
			return true;
	}
	return false;
}

/* Names libbpf handles specially before it checks for code. */
static bool sec_special_name(const char *name)
{
	static const char *const names[] = {"license", "version", "maps",
					    ".maps",   ".BTF",	  ".BTF.ext"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static int read_header(struct ctx *c, size_t *shstrndx)
{
	GElf_Ehdr eh;
	size_t shnum;

	if (elf_kind(c->elf) != ELF_K_ELF)
		return fail(c->error, -EINVAL, "not an ELF object file");
	if (!gelf_getehdr(c->elf, &eh))
		return fail(c->error, -EBADMSG, "invalid ELF header: %s", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return fail(c->error, -EINVAL, "not a 64-bit ELF object");
	if (eh.e_ident[EI_DATA] != ELFDATA_HOST)
		return fail(c->error, -EINVAL, "ELF object is not in the host's byte order");
	if (eh.e_machine != EM_BPF)
		return fail(c->error, -EINVAL, "not a BPF object (ELF machine %u)",
			    (unsigned)eh.e_machine);
	if (elf_getshdrnum(c->elf, &shnum) < 0)
		return fail(c->error, -EBADMSG, "invalid section count: %s", elf_errmsg(-1));
	if (shnum > INSPECT_MAX_SECTIONS)
		return fail(c->error, -E2BIG, "too many sections (%zu, at most %u)", shnum,
			    INSPECT_MAX_SECTIONS);
	if (elf_getshdrstrndx(c->elf, shstrndx) < 0 || *shstrndx >= shnum)
		return fail(c->error, -EBADMSG, "invalid section name table");
	c->secs = calloc(shnum ? shnum : 1, sizeof(*c->secs));
	if (!c->secs)
		return -ENOMEM;
	c->n_secs = shnum;
	return 0;
}

static int read_symbols(struct ctx *c)
{
	Elf_Scn *symscn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;

	for (size_t i = 1; i < c->n_secs; i++) {
		Elf_Scn *scn = elf_getscn(c->elf, i);

		if (!scn || !gelf_getshdr(scn, &sh))
			return fail(c->error, -EBADMSG, "invalid header of section %zu", i);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		/* libbpf refuses several as well: which one would it use? */
		if (symscn)
			return fail(c->error, -EBADMSG, "more than one symbol table");
		symscn = scn;
		c->strtab = sh.sh_link;
	}
	if (!symscn)
		return fail(c->error, -EBADMSG, "no symbol table (stripped object?)");
	if (c->strtab == 0 || c->strtab >= c->n_secs)
		return fail(c->error, -EBADMSG, "symbol table links to invalid section %zu",
			    c->strtab);
	data = elf_getdata(symscn, NULL);
	if (!data || (data->d_size > 0 && !data->d_buf))
		return fail(c->error, -EBADMSG, "unreadable symbol table: %s", elf_errmsg(-1));
	c->n_syms = data->d_size / sizeof(Elf64_Sym);
	if (c->n_syms > INSPECT_MAX_SYMBOLS)
		return fail(c->error, -E2BIG, "too many symbols (%zu, at most %u)", c->n_syms,
			    INSPECT_MAX_SYMBOLS);
	c->syms = calloc(c->n_syms ? c->n_syms : 1, sizeof(*c->syms));
	if (!c->syms)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_syms; i++)
		if (!gelf_getsym(data, (int)i, &c->syms[i]))
			return fail(c->error, -EBADMSG, "unreadable symbol %zu", i);
	return 0;
}

/* Name every section and find those holding code, as libbpf's bpf_object__elf_collect() does. */
static int read_sections(struct ctx *c, size_t shstrndx)
{
	for (size_t i = 1; i < c->n_secs; i++) {
		struct section *s = &c->secs[i];
		Elf_Scn *scn = elf_getscn(c->elf, i);
		Elf_Data *data;
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			return fail(c->error, -EBADMSG, "invalid header of section %zu", i);
		s->name = elf_strptr(c->elf, shstrndx, sh.sh_name);
		if (!s->name)
			return fail(c->error, -EBADMSG, "section %zu has an invalid name", i);
		if (sec_ignored_by_libbpf(&sh, s->name) || sec_special_name(s->name))
			continue;
		if (sh.sh_type == SHT_REL) {
			if (sh.sh_entsize != sizeof(Elf64_Rel) || sh.sh_info >= c->n_secs)
				return fail(c->error, -EBADMSG,
					    "relocation section %s is malformed", s->name);
			continue;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return fail(c->error, -EBADMSG, "section %s is unreadable: %s", s->name,
				    elf_errmsg(-1));
		/* An empty code section holds no programs for libbpf, not even .text. */
		if (data->d_size == 0)
			continue;
		if (!data->d_buf)
			return fail(c->error, -EBADMSG, "section %s has no contents", s->name);
		s->exec = true;
		s->code = data->d_buf;
		s->size = data->d_size;
		if (strcmp(s->name, ".text") == 0) {
			/* libbpf would silently take the last one. */
			if (c->text)
				return fail(c->error, -EBADMSG, "more than one .text section");
			c->text = i;
		}
	}
	return 0;
}

static int cmp_func_start(const void *a, const void *b, void *userdata)
{
	const struct func *funcs = userdata;
	size_t x = funcs[*(const size_t *)a].start, y = funcs[*(const size_t *)b].start;

	return (x > y) - (x < y);
}

/* Every function symbol in a code section is a libbpf program or subprogram
 * (bpf_object__add_programs()). */
static int read_functions(struct ctx *c)
{
	for (size_t i = 0; i < c->n_syms; i++) {
		const GElf_Sym *sym = &c->syms[i];
		struct section *s;
		struct func *f;
		const char *name;
		int r;

		if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
		    sym->st_shndx >= c->n_secs || !c->secs[sym->st_shndx].exec)
			continue;
		s = &c->secs[sym->st_shndx];
		name = elf_strptr(c->elf, c->strtab, sym->st_name);
		if (!name || !*name)
			return fail(c->error, -EBADMSG,
				    "function symbol %zu in section %s has no name", i, s->name);
		if (sym->st_value % BPF_INSN_SZ || sym->st_size % BPF_INSN_SZ)
			return fail(c->error, -EBADMSG,
				    "function %s in section %s is not aligned to instructions",
				    name, s->name);
		if (sym->st_size == 0)
			return fail(c->error, -EBADMSG, "function %s in section %s is empty", name,
				    s->name);
		if (sym->st_value > s->size || sym->st_size > s->size - sym->st_value)
			return fail(c->error, -EBADMSG, "function %s lies outside section %s", name,
				    s->name);
		if (c->n_funcs >= INSPECT_MAX_FUNCTIONS)
			return fail(c->error, -E2BIG, "too many functions (at most %u)",
				    INSPECT_MAX_FUNCTIONS);
		r = GROW(c->funcs, c->n_funcs, c->cap_funcs);
		if (r < 0)
			return r;
		f = &c->funcs[c->n_funcs++];
		*f = (struct func){
			.name = name,
			.sec = sym->st_shndx,
			.start = sym->st_value / BPF_INSN_SZ,
			.cnt = sym->st_size / BPF_INSN_SZ,
		};
		s->n_funcs++;
	}

	for (size_t i = 1; i < c->n_secs; i++) {
		struct section *s = &c->secs[i];

		if (s->n_funcs == 0)
			continue;
		s->funcs = calloc(s->n_funcs, sizeof(*s->funcs));
		if (!s->funcs)
			return -ENOMEM;
		s->n_funcs = 0;
	}
	for (size_t i = 0; i < c->n_funcs; i++) {
		struct section *s = &c->secs[c->funcs[i].sec];

		s->funcs[s->n_funcs++] = i;
	}
	for (size_t i = 1; i < c->n_secs; i++) {
		struct section *s = &c->secs[i];

		if (s->n_funcs > 1)
			qsort_r(s->funcs, s->n_funcs, sizeof(*s->funcs), cmp_func_start, c->funcs);
		for (size_t j = 1; j < s->n_funcs; j++) {
			const struct func *a = &c->funcs[s->funcs[j - 1]],
					  *b = &c->funcs[s->funcs[j]];

			/* libbpf's instruction-to-program lookup assumes disjoint functions. */
			if (a->start + a->cnt > b->start)
				return fail(c->error, -EBADMSG,
					    "functions %s and %s overlap in section %s", a->name,
					    b->name, s->name);
		}
	}
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	size_t x = ((const struct reloc *)a)->insn, y = ((const struct reloc *)b)->insn;

	return (x > y) - (x < y);
}

/* Relocations of code sections, checked as libbpf's bpf_object__collect_prog_relos() does. */
static int read_relocations(struct ctx *c)
{
	size_t total = 0;

	for (size_t i = 1; i < c->n_secs; i++) {
		Elf_Scn *scn = elf_getscn(c->elf, i);
		const char *name = c->secs[i].name;
		struct section *t;
		Elf_Data *data;
		GElf_Shdr sh;
		size_t n;

		if (!scn || !gelf_getshdr(scn, &sh))
			return fail(c->error, -EBADMSG, "invalid header of section %zu", i);
		if (sh.sh_type != SHT_REL || sec_ignored_by_libbpf(&sh, name) ||
		    sec_special_name(name))
			continue;
		/* sh_info was checked in read_sections(). */
		t = &c->secs[sh.sh_info];
		if (!t->exec)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || (data->d_size > 0 && !data->d_buf))
			return fail(c->error, -EBADMSG, "relocation section %s is unreadable: %s",
				    name, elf_errmsg(-1));
		n = data->d_size / sizeof(Elf64_Rel);
		if (n > INSPECT_MAX_RELOCATIONS - total)
			return fail(c->error, -E2BIG, "too many relocations (at most %u)",
				    INSPECT_MAX_RELOCATIONS);
		total += n;
		for (size_t k = 0; k < n; k++) {
			GElf_Rel rel;
			size_t sym;
			int r;

			if (!gelf_getrel(data, (int)k, &rel))
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s is unreadable", k, name);
			sym = GELF_R_SYM(rel.r_info);
			if (sym >= c->n_syms)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s refers to symbol %zu, which does "
					    "not exist",
					    k, name, sym);
			if (c->syms[sym].st_shndx >= c->n_secs)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s refers to symbol %zu in invalid "
					    "section %u",
					    k, name, sym, (unsigned)c->syms[sym].st_shndx);
			if (rel.r_offset % BPF_INSN_SZ || rel.r_offset >= t->size)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s points outside section %s", k,
					    name, t->name);
			r = GROW(t->relocs, t->n_relocs, t->cap_relocs);
			if (r < 0)
				return r;
			t->relocs[t->n_relocs++] = (struct reloc){
				.insn = rel.r_offset / BPF_INSN_SZ,
				.sym = sym,
				.nr = k,
				.rel_sec = i,
			};
		}
	}

	for (size_t i = 1; i < c->n_secs; i++) {
		struct section *s = &c->secs[i];

		if (s->n_relocs > 1)
			qsort(s->relocs, s->n_relocs, sizeof(*s->relocs), cmp_reloc);
		for (size_t j = 1; j < s->n_relocs; j++)
			/* libbpf would apply an arbitrary one of them. */
			if (s->relocs[j].insn == s->relocs[j - 1].insn)
				return fail(c->error, -EBADMSG,
					    "instruction %zu of section %s has more than one "
					    "relocation",
					    s->relocs[j].insn, s->name);
	}
	return 0;
}

static const struct reloc *find_reloc(const struct section *s, size_t insn)
{
	const struct reloc key = {.insn = insn};

	if (s->n_relocs == 0)
		return NULL;
	return bsearch(&key, s->relocs, s->n_relocs, sizeof(*s->relocs), cmp_reloc);
}

/* The function of section sec starting exactly at instruction insn, or SIZE_MAX. */
static size_t find_func(const struct ctx *c, size_t sec, int64_t insn)
{
	const struct section *s = &c->secs[sec];
	size_t lo = 0, hi = s->n_funcs;

	if (insn < 0)
		return SIZE_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, start = c->funcs[s->funcs[mid]].start;

		if (start == (uint64_t)insn)
			return s->funcs[mid];
		if (start < (uint64_t)insn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static int add_callee(struct ctx *c, struct func *f, size_t insn, int64_t target, const char *what)
{
	size_t callee;
	int r;

	callee = find_func(c, c->text, target);
	if (callee == SIZE_MAX)
		return fail(c->error, -EBADMSG,
			    "%s at instruction %zu of section %s (function %s) targets instruction "
			    "%lld of .text, which does not start a function",
			    what, insn, sec_name(c, f->sec), f->name, (long long)target);
	r = GROW(f->callees, f->n_callees, f->cap_callees);
	if (r < 0)
		return r;
	f->callees[f->n_callees++] = callee;
	return 0;
}

/*
 * A function address for bpf_loop() and friends. In the object file this is
 * a plain ld_imm64 (src_reg 0) relocated against .text; libbpf marks it
 * BPF_PSEUDO_FUNC (RELO_SUBPROG_ADDR) and appends the callee.
 */
static int scan_ld_imm64(struct ctx *c, struct func *f, size_t i, const struct bpf_insn *insn,
			 const struct reloc *rel)
{
	const struct section *text = &c->secs[c->text];
	const GElf_Sym *sym;
	int64_t off;

	if (!rel) {
		/* libbpf insists on a relocation here ("missing subprog addr relo"). */
		if (insn->src_reg == BPF_PSEUDO_FUNC)
			return fail(c->error, -EBADMSG,
				    "function reference at instruction %zu of section %s has no "
				    "relocation",
				    i, sec_name(c, f->sec));
		return 0;
	}
	sym = &c->syms[rel->sym];
	if (!sym_is_subprog(c, sym)) {
		/* Map, global data or extern variable: libbpf's business, no code reached. */
		if (insn->src_reg == BPF_PSEUDO_FUNC)
			return fail(c->error, -EBADMSG,
				    "function reference at instruction %zu of section %s is "
				    "relocated against a non-function",
				    i, sec_name(c, f->sec));
		return 0;
	}
	/* Global function: st_value is its offset and imm 0; static: the section's
	 * symbol (st_value 0) and imm the byte offset. */
	if (sym->st_value % BPF_INSN_SZ || insn->imm % (int32_t)BPF_INSN_SZ ||
	    sym->st_value > text->size)
		return fail(c->error, -EBADMSG,
			    "relocation %zu in %s: bad function reference at instruction %zu",
			    rel->nr, sec_name(c, rel->rel_sec), i);
	off = (int64_t)sym->st_value + insn->imm;
	return add_callee(c, f, i, off / (int64_t)BPF_INSN_SZ, "function reference");
}

static int scan_call(struct ctx *c, struct func *f, size_t i, const struct bpf_insn *insn,
		     const struct reloc *rel)
{
	int r;

	if (rel) {
		const GElf_Sym *sym = &c->syms[rel->sym];

		/* An extern: libbpf turns the call, whatever its src_reg, into
		 * BPF_PSEUDO_KFUNC_CALL with the kernel's BTF id for that name. */
		if (sym_is_extern(sym)) {
			const char *name = elf_strptr(c->elf, c->strtab, sym->st_name);

			if (!name || !*name)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s: kfunc symbol %zu has no name",
					    rel->nr, sec_name(c, rel->rel_sec), rel->sym);
			r = GROW(f->kfuncs, f->n_kfuncs, f->cap_kfuncs);
			if (r < 0)
				return r;
			f->kfuncs[f->n_kfuncs++] = name;
			return 0;
		}
		if (insn->src_reg != BPF_PSEUDO_CALL || insn->dst_reg != 0 || insn->off != 0)
			return fail(c->error, -EBADMSG,
				    "relocation %zu in %s is on instruction %zu, which is not a "
				    "call to a BPF function",
				    rel->nr, sec_name(c, rel->rel_sec), i);
		/* libbpf only resolves calls into .text, whatever the symbol's section. */
		if (c->text == 0 || sym->st_shndx != c->text) {
			const char *n = sym_name(c, sym);

			if (!n)
				n = "<invalid>";
			if (c->text == 0)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s: call against %s, but the object "
					    "has no code in .text",
					    rel->nr, sec_name(c, rel->rel_sec), n);
			if (sym->st_shndx == SHN_UNDEF)
				return fail(c->error, -EBADMSG,
					    "relocation %zu in %s: call against undefined symbol "
					    "%s, which is not a kfunc declaration",
					    rel->nr, sec_name(c, rel->rel_sec), n);
			return fail(
				c->error, -EBADMSG,
				"relocation %zu in %s: call against %s in section %s, not .text",
				rel->nr, sec_name(c, rel->rel_sec), n, sec_name(c, sym->st_shndx));
		}
		if (sym->st_value % BPF_INSN_SZ || sym->st_value > c->secs[c->text].size)
			return fail(
				c->error, -EBADMSG,
				"relocation %zu in %s: call target is not an instruction of .text",
				rel->nr, sec_name(c, rel->rel_sec));
		/* Global function: symbol at the callee, imm -1; static: section symbol, imm the
		 * callee's instruction index - 1. Either way relative to the symbol, not the call.
		 */
		return add_callee(c, f, i, (int64_t)(sym->st_value / BPF_INSN_SZ) + insn->imm + 1,
				  "call");
	}

	switch (insn->src_reg) {
	case 0:
		r = GROW(f->helpers, f->n_helpers, f->cap_helpers);
		if (r < 0)
			return r;
		f->helpers[f->n_helpers++] = insn->imm;
		return 0;
	case BPF_PSEUDO_CALL:
		if (insn->dst_reg != 0 || insn->off != 0)
			/* libbpf would leave it alone and the kernel refuse it. */
			return fail(c->error, -EBADMSG,
				    "call at instruction %zu of section %s uses reserved fields", i,
				    sec_name(c, f->sec));
		if (c->text == 0)
			return fail(c->error, -EBADMSG,
				    "call at instruction %zu of section %s, but the object has no "
				    ".text",
				    i, sec_name(c, f->sec));
		/* libbpf quirk: an unrelocated call is taken relative to the caller's
		 * position in its own section but always looked up in .text
		 * (bpf_object__reloc_code()). For callers in .text, and all clang
		 * output, that is simply a same-section call. */
		return add_callee(c, f, i, (int64_t)i + insn->imm + 1, "call");
	case BPF_PSEUDO_KFUNC_CALL:
		/* The name would be the kernel BTF id in imm, unchecked by anyone. */
		return fail(c->error, -EBADMSG,
			    "kfunc call at instruction %zu of section %s has no relocation", i,
			    sec_name(c, f->sec));
	default:
		return fail(c->error, -EBADMSG,
			    "call at instruction %zu of section %s has invalid source register %u",
			    i, sec_name(c, f->sec), (unsigned)insn->src_reg);
	}
}

static int scan_function(struct ctx *c, struct func *f)
{
	const struct section *s = &c->secs[f->sec];
	size_t end = f->start + f->cnt;
	int r;

	for (size_t i = f->start; i < end; i++) {
		const struct reloc *rel = find_reloc(s, i);
		struct bpf_insn insn;

		/* sh_offset need not be aligned, hence memcpy. */
		memcpy(&insn, s->code + i * BPF_INSN_SZ, sizeof(insn));
		if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (i + 1 >= end)
				return fail(c->error, -EBADMSG,
					    "function %s in section %s ends inside a 16-byte "
					    "instruction",
					    f->name, s->name);
			r = scan_ld_imm64(c, f, i, &insn, rel);
			if (r < 0)
				return r;
			i++; /* the second half is data (the kernel checks its code is 0) */
			rel = find_reloc(s, i);
		} else if (insn.code == (BPF_JMP | BPF_CALL)) {
			r = scan_call(c, f, i, &insn, rel);
			if (r < 0)
				return r;
			rel = NULL;
		}
		/* libbpf refuses these too; here they would go unnoticed otherwise. */
		if (rel)
			return fail(c->error, -EBADMSG,
				    "relocation %zu in %s is on instruction %zu of section %s, "
				    "which is neither a call nor a 64-bit load",
				    rel->nr, sec_name(c, rel->rel_sec), i, s->name);
	}
	f->n_helpers = sort_unique(f->helpers, f->n_helpers, sizeof(*f->helpers), cmp_int);
	f->n_kfuncs = sort_unique(f->kfuncs, f->n_kfuncs, sizeof(*f->kfuncs), cmp_str);
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
	_cleanup_free_ const char **kfuncs = NULL;
	size_t n_helpers = 0, cap_helpers = 0, n_kfuncs = 0, cap_kfuncs = 0, head = 0, tail = 0;
	const struct func *e = &c->funcs[entry];
	uint64_t insns = 0;
	int r;

	c->funcs[entry].stamp = stamp;
	queue[tail++] = entry;
	while (head < tail) {
		struct func *f = &c->funcs[queue[head++]];

		*work += 1 + f->n_callees + f->n_helpers + f->n_kfuncs;
		if (*work > INSPECT_MAX_WORK)
			return fail(c->error, -E2BIG, "call graph too large to analyse");
		insns += f->cnt;
		for (size_t i = 0; i < f->n_helpers; i++) {
			r = GROW(helpers, n_helpers, cap_helpers);
			if (r < 0)
				return r;
			helpers[n_helpers++] = f->helpers[i];
		}
		for (size_t i = 0; i < f->n_kfuncs; i++) {
			r = GROW(kfuncs, n_kfuncs, cap_kfuncs);
			if (r < 0)
				return r;
			kfuncs[n_kfuncs++] = f->kfuncs[i];
		}
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
		return fail(c->error, -E2BIG, "program %s is too large", e->name);

	n_helpers = sort_unique(helpers, n_helpers, sizeof(*helpers), cmp_int);
	n_kfuncs = sort_unique(kfuncs, n_kfuncs, sizeof(*kfuncs), cmp_str);
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
	if (n_kfuncs > 0) {
		ret->kfuncs = calloc(n_kfuncs, sizeof(*ret->kfuncs));
		if (!ret->kfuncs)
			return -ENOMEM;
		for (size_t i = 0; i < n_kfuncs; i++) {
			ret->kfuncs[i] = strdup(kfuncs[i]);
			if (!ret->kfuncs[i])
				return -ENOMEM;
			ret->n_kfuncs = i + 1;
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

	/* Programs are looked up by name; libbpf would just take the first of a pair. */
	qsort_r(entries, n_entries, sizeof(*entries), cmp_func_name, c->funcs);
	for (size_t i = 1; i < n_entries; i++)
		if (strcmp(c->funcs[entries[i]].name, c->funcs[entries[i - 1]].name) == 0)
			return fail(c->error, -EBADMSG, "more than one program is named %s",
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
	}
	free(c->entries);
	free(c);
	return NULL;
}

static void elf_calls_freep(struct elf_calls **c)
{
	elf_calls_free(*c);
}

int inspect_elf_calls(const void *elf, size_t len, struct elf_calls **ret, char **error)
{
	_cleanup_(ctx_done) struct ctx c = {.error = error};
	_cleanup_(elf_calls_freep) struct elf_calls *calls = NULL;
	size_t shstrndx;
	int r;

	if (!elf || len == 0)
		return fail(error, -EINVAL, "empty object");
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(error, -EINVAL, "libelf is unusable: %s", elf_errmsg(-1));
	c.image = malloc(len);
	if (!c.image)
		return -ENOMEM;
	memcpy(c.image, elf, len);
	c.elf = elf_memory(c.image, len);
	if (!c.elf)
		return fail(error, -EINVAL, "not an ELF object: %s", elf_errmsg(-1));

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

/* ---- libbpf object description ---- */

/* Frees what inspect_object() built on a failure; on success the caller owns it
 * and frees it with object_desc_done(). */
static void desc_free(struct object_desc *d)
{
	for (size_t i = 0; i < d->n_programs; i++) {
		struct object_program *p = &d->programs[i];

		free(p->name);
		free(p->helpers);
		for (size_t j = 0; j < p->n_kfuncs; j++)
			free(p->kfuncs[j]);
		free(p->kfuncs);
	}
	free(d->programs);
	for (size_t i = 0; i < d->n_maps; i++)
		free(d->maps[i].name);
	free(d->maps);
	*d = (struct object_desc){0};
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	const struct elf_entry *x = *(const struct elf_entry *const *)a;
	const struct elf_entry *y = *(const struct elf_entry *const *)b;

	return strcmp(x->name, y->name);
}

static int fill_program(struct object_program *p, const struct bpf_program *prog,
			const struct elf_entry *e)
{
	p->name = strdup(bpf_program__name(prog));
	if (!p->name)
		return -ENOMEM;
	p->prog_type = bpf_program__type(prog);
	p->attach_type = bpf_program__expected_attach_type(prog);
	p->load = bpf_program__autoload(prog);
	p->insn_cnt = e->insn_cnt;
	if (e->n_helpers > 0) {
		p->helpers = calloc(e->n_helpers, sizeof(*p->helpers));
		if (!p->helpers)
			return -ENOMEM;
		memcpy(p->helpers, e->helpers, e->n_helpers * sizeof(*e->helpers));
		p->n_helpers = e->n_helpers;
	}
	if (e->n_kfuncs > 0) {
		p->kfuncs = calloc(e->n_kfuncs, sizeof(*p->kfuncs));
		if (!p->kfuncs)
			return -ENOMEM;
		for (size_t i = 0; i < e->n_kfuncs; i++) {
			p->kfuncs[i] = strdup(e->kfuncs[i]);
			if (!p->kfuncs[i])
				return -ENOMEM;
			p->n_kfuncs = i + 1;
		}
	}
	return 0;
}

int inspect_object(struct bpf_object *obj, const struct elf_calls *calls, uint64_t object_bytes,
		   struct object_desc *ret, char **error)
{
	_cleanup_(desc_free) struct object_desc d = {.object_bytes = object_bytes};
	_cleanup_free_ const struct elf_entry **by_name = NULL;
	struct bpf_program *prog;
	struct bpf_map *map;
	size_t n_progs = 0, n_maps = 0;
	int r;

	if (!obj || !calls || !ret)
		return -EINVAL;

	if (calls->n_entries > 0) {
		by_name = calloc(calls->n_entries, sizeof(*by_name));
		if (!by_name)
			return -ENOMEM;
		for (size_t i = 0; i < calls->n_entries; i++)
			by_name[i] = &calls->entries[i];
		qsort(by_name, calls->n_entries, sizeof(*by_name), cmp_entry_ptr);
	}

	/* Spelled out: clang-format doesn't know libbpf's for_each macros. */
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		n_progs++;
	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map))
		n_maps++;
	if (n_progs > 0) {
		d.programs = calloc(n_progs, sizeof(*d.programs));
		if (!d.programs)
			return -ENOMEM;
	}
	if (n_maps > 0) {
		d.maps = calloc(n_maps, sizeof(*d.maps));
		if (!d.maps)
			return -ENOMEM;
	}

	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog)) {
		const struct elf_entry key = {.name = (char *)bpf_program__name(prog)};
		const struct elf_entry *keyp = &key, **found = NULL;
		const char *section = bpf_program__section_name(prog);

		if (d.n_programs >= n_progs)
			break;
		if (key.name && calls->n_entries > 0)
			found = bsearch(&keyp, by_name, calls->n_entries, sizeof(*by_name),
					cmp_entry_ptr);
		/* Compare the section too, so a program can never borrow another's graph.
		 * libbpf makes the only function of an object a program even in .text
		 * (prog_is_subprog() wants nr_programs > 1); the graph has no entry for it.
		 */
		if (section && strcmp(section, ".text") == 0)
			return fail(error, -EBADMSG,
				    "program %s is in .text, which holds only subprograms: give it "
				    "a SEC()",
				    key.name ? key.name : "<unnamed>");
		if (!found || !section || strcmp((*found)->section, section) != 0)
			return fail(error, -EBADMSG,
				    "program %s (section %s) was not found in the object's code",
				    key.name ? key.name : "<unnamed>",
				    section ? section : "<none>");
		d.n_programs++;
		r = fill_program(&d.programs[d.n_programs - 1], prog, *found);
		if (r < 0)
			return r;
	}

	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map)) {
		struct object_map *m;

		if (d.n_maps >= n_maps)
			break;
		m = &d.maps[d.n_maps++];
		m->name = strdup(bpf_map__name(map));
		if (!m->name)
			return -ENOMEM;
		m->map_type = bpf_map__type(map);
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		m->map_flags = bpf_map__map_flags(map);
		/* libbpf sets the pin path at open time exactly for LIBBPF_PIN_BY_NAME maps
		 * (under opts.pin_root_path, default /sys/fs/bpf); nothing else sets it
		 * before load unless the caller did. */
		m->pinned = bpf_map__pin_path(map) != NULL;
	}

	*ret = d;
	d = (struct object_desc){0};
	return 0;
}

int inspect_insns_helpers(const void *insns, size_t n_insns, int **ret_helpers, size_t *ret_n,
			  size_t *ret_n_kfunc_calls)
{
	_cleanup_free_ int *helpers = NULL;
	size_t n_helpers = 0, cap_helpers = 0, n_kfunc_calls = 0;
	const unsigned char *p = insns;
	int r;

	if (!insns && n_insns > 0)
		return -EINVAL;
	for (size_t i = 0; i < n_insns; i++) {
		struct bpf_insn insn;

		memcpy(&insn, p + i * sizeof(insn), sizeof(insn));
		if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++; /* skip the second half, its imm is data */
			continue;
		}
		if (insn.code != (BPF_JMP | BPF_CALL))
			continue;
		if (insn.src_reg == 0) {
			r = GROW(helpers, n_helpers, cap_helpers);
			if (r < 0)
				return r;
			helpers[n_helpers++] = insn.imm;
		} else if (insn.src_reg == BPF_PSEUDO_KFUNC_CALL) {
			n_kfunc_calls++;
		}
	}
	n_helpers = sort_unique(helpers, n_helpers, sizeof(*helpers), cmp_int);
	if (n_helpers == 0) {
		free(helpers);
		helpers = NULL;
	}
	if (ret_helpers)
		*ret_helpers = TAKE_PTR(helpers);
	if (ret_n)
		*ret_n = n_helpers;
	if (ret_n_kfunc_calls)
		*ret_n_kfunc_calls = n_kfunc_calls;
	return 0;
}
