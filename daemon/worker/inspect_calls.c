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

#include <bpf/btf.h>
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

#include "common/error.h"
#include "common/macro.h"
#include "insncheck.h"

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

/* Append n_src elements of src to the array *arr of *n (capacity *cap). */
static int append_all(void **arr, size_t *n, size_t *cap, const void *src, size_t n_src,
		      size_t elem)
{
	int r;

	if (n_src == 0)
		return 0;
	r = grow(arr, cap, *n + n_src, elem);
	if (r < 0)
		return r;
	memcpy((char *)*arr + *n * elem, src, n_src * elem);
	*n += n_src;
	return 0;
}
#define APPEND_ALL(arr, n, cap, src, n_src)                                                        \
	append_all((void **)&(arr), &(n), &(cap), (src), (n_src), sizeof(*(arr)))

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
	const char **externs; /* extern variables loaded; point into the ELF string table */
	size_t n_externs, cap_externs;
	int32_t *kref_ids; /* BTF ids of unrelocated kernel references (BPF_PSEUDO_BTF_ID) */
	size_t n_kref_ids, cap_kref_ids;
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
		free(c->funcs[i].externs);
		free(c->funcs[i].kref_ids);
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
		return error_setf(c->error, -EINVAL, "not an ELF object file");
	if (!gelf_getehdr(c->elf, &eh))
		return error_setf(c->error, -EBADMSG, "invalid ELF header: %s", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return error_setf(c->error, -EINVAL, "not a 64-bit ELF object");
	if (eh.e_ident[EI_DATA] != ELFDATA_HOST)
		return error_setf(c->error, -EINVAL, "ELF object is not in the host's byte order");
	if (eh.e_machine != EM_BPF)
		return error_setf(c->error, -EINVAL, "not a BPF object (ELF machine %u)",
				  (unsigned)eh.e_machine);
	if (elf_getshdrnum(c->elf, &shnum) < 0)
		return error_setf(c->error, -EBADMSG, "invalid section count: %s", elf_errmsg(-1));
	if (shnum > INSPECT_MAX_SECTIONS)
		return error_setf(c->error, -E2BIG, "too many sections (%zu, at most %u)", shnum,
				  INSPECT_MAX_SECTIONS);
	if (elf_getshdrstrndx(c->elf, shstrndx) < 0 || *shstrndx >= shnum)
		return error_setf(c->error, -EBADMSG, "invalid section name table");
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
			return error_setf(c->error, -EBADMSG, "invalid header of section %zu", i);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		/* libbpf refuses several as well: which one would it use? */
		if (symscn)
			return error_setf(c->error, -EBADMSG, "more than one symbol table");
		symscn = scn;
		c->strtab = sh.sh_link;
	}
	if (!symscn)
		return error_setf(c->error, -EBADMSG, "no symbol table (stripped object?)");
	if (c->strtab == 0 || c->strtab >= c->n_secs)
		return error_setf(c->error, -EBADMSG, "symbol table links to invalid section %zu",
				  c->strtab);
	data = elf_getdata(symscn, NULL);
	if (!data || (data->d_size > 0 && !data->d_buf))
		return error_setf(c->error, -EBADMSG, "unreadable symbol table: %s",
				  elf_errmsg(-1));
	c->n_syms = data->d_size / sizeof(Elf64_Sym);
	if (c->n_syms > INSPECT_MAX_SYMBOLS)
		return error_setf(c->error, -E2BIG, "too many symbols (%zu, at most %u)", c->n_syms,
				  INSPECT_MAX_SYMBOLS);
	c->syms = calloc(c->n_syms ? c->n_syms : 1, sizeof(*c->syms));
	if (!c->syms)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_syms; i++)
		if (!gelf_getsym(data, (int)i, &c->syms[i]))
			return error_setf(c->error, -EBADMSG, "unreadable symbol %zu", i);
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
			return error_setf(c->error, -EBADMSG, "invalid header of section %zu", i);
		s->name = elf_strptr(c->elf, shstrndx, sh.sh_name);
		if (!s->name)
			return error_setf(c->error, -EBADMSG, "section %zu has an invalid name", i);
		if (sec_ignored_by_libbpf(&sh, s->name) || sec_special_name(s->name))
			continue;
		if (sh.sh_type == SHT_REL) {
			if (sh.sh_entsize != sizeof(Elf64_Rel) || sh.sh_info >= c->n_secs)
				return error_setf(c->error, -EBADMSG,
						  "relocation section %s is malformed", s->name);
			continue;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return error_setf(c->error, -EBADMSG, "section %s is unreadable: %s",
					  s->name, elf_errmsg(-1));
		/* An empty code section holds no programs for libbpf, not even .text. */
		if (data->d_size == 0)
			continue;
		if (!data->d_buf)
			return error_setf(c->error, -EBADMSG, "section %s has no contents",
					  s->name);
		s->exec = true;
		s->code = data->d_buf;
		s->size = data->d_size;
		if (strcmp(s->name, ".text") == 0) {
			/* libbpf would silently take the last one. */
			if (c->text)
				return error_setf(c->error, -EBADMSG,
						  "more than one .text section");
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
			return error_setf(c->error, -EBADMSG,
					  "function symbol %zu in section %s has no name", i,
					  s->name);
		if (sym->st_value % BPF_INSN_SZ || sym->st_size % BPF_INSN_SZ)
			return error_setf(
				c->error, -EBADMSG,
				"function %s in section %s is not aligned to instructions", name,
				s->name);
		if (sym->st_size == 0)
			return error_setf(c->error, -EBADMSG, "function %s in section %s is empty",
					  name, s->name);
		if (sym->st_value > s->size || sym->st_size > s->size - sym->st_value)
			return error_setf(c->error, -EBADMSG, "function %s lies outside section %s",
					  name, s->name);
		if (c->n_funcs >= INSPECT_MAX_FUNCTIONS)
			return error_setf(c->error, -E2BIG, "too many functions (at most %u)",
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
				return error_setf(c->error, -EBADMSG,
						  "functions %s and %s overlap in section %s",
						  a->name, b->name, s->name);
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
			return error_setf(c->error, -EBADMSG, "invalid header of section %zu", i);
		if (sh.sh_type != SHT_REL || sec_ignored_by_libbpf(&sh, name) ||
		    sec_special_name(name))
			continue;
		/* sh_info was checked in read_sections(). */
		t = &c->secs[sh.sh_info];
		if (!t->exec)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || (data->d_size > 0 && !data->d_buf))
			return error_setf(c->error, -EBADMSG,
					  "relocation section %s is unreadable: %s", name,
					  elf_errmsg(-1));
		n = data->d_size / sizeof(Elf64_Rel);
		if (n > INSPECT_MAX_RELOCATIONS - total)
			return error_setf(c->error, -E2BIG, "too many relocations (at most %u)",
					  INSPECT_MAX_RELOCATIONS);
		total += n;
		for (size_t k = 0; k < n; k++) {
			GElf_Rel rel;
			size_t sym;
			int r;

			if (!gelf_getrel(data, (int)k, &rel))
				return error_setf(c->error, -EBADMSG,
						  "relocation %zu in %s is unreadable", k, name);
			sym = GELF_R_SYM(rel.r_info);
			if (sym >= c->n_syms)
				return error_setf(
					c->error, -EBADMSG,
					"relocation %zu in %s refers to symbol %zu, which does "
					"not exist",
					k, name, sym);
			if (c->syms[sym].st_shndx >= c->n_secs)
				return error_setf(
					c->error, -EBADMSG,
					"relocation %zu in %s refers to symbol %zu in invalid "
					"section %u",
					k, name, sym, (unsigned)c->syms[sym].st_shndx);
			if (rel.r_offset % BPF_INSN_SZ || rel.r_offset >= t->size)
				return error_setf(c->error, -EBADMSG,
						  "relocation %zu in %s points outside section %s",
						  k, name, t->name);
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
				return error_setf(c->error, -EBADMSG,
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

/* *ret = n strdup'ed copies of v (nothing when n is 0); *ret_n counts what was copied. */
static int strv_copy(const char *const *v, size_t n, char ***ret, size_t *ret_n)
{
	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*ret)[i] = strdup(v[i]);
		if (!(*ret)[i])
			return -ENOMEM;
		*ret_n = i + 1;
	}
	return 0;
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

/* ---- libbpf object description ---- */

bool inspect_name_is_valid(const char *name)
{
	size_t n = 0;

	for (const char *c = name; *c; c++, n++)
		if (n >= INSPECT_MAX_NAME ||
		    !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '$' || *c == '-'))
			return false;
	return n > 0;
}

void object_handles_done(struct object_handles *h)
{
	free(h->programs);
	free(h->maps);
	*h = (struct object_handles){};
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	const struct elf_entry *x = *(const struct elf_entry *const *)a;
	const struct elf_entry *y = *(const struct elf_entry *const *)b;

	return strcmp(x->name, y->name);
}

/*
 * Which externs libbpf resolves as Kconfig values (data), not kernel
 * symbols? Exactly as libbpf 1.1 decides (bpf_object__collect_externs()):
 * the first VAR or FUNC of that name in the object's BTF, and the first
 * DATASEC that holds it, ".kconfig" or not. Any other reading could be
 * fooled by a second type of the same name. Worked out for all names in one
 * pass over the BTF, on the first extern (not a pass per extern): the names
 * that resolve as Kconfig values, sorted, pointing into the BTF.
 */
struct kconfig_names {
	bool built;
	const char **names;
	size_t n;
};

struct named_id {
	const char *name;
	uint32_t id;
};

static int cmp_named_id(const void *a, const void *b)
{
	const struct named_id *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->id < y->id ? -1 : x->id > y->id;
}

static void kconfig_names_done(struct kconfig_names *k)
{
	free(k->names);
	*k = (struct kconfig_names){};
}

static int kconfig_names_build(struct kconfig_names *k, const struct btf *btf)
{
	uint32_t n = btf ? btf__type_cnt(btf) : 0;
	_cleanup_free_ uint8_t *sec =
		NULL; /* per type: 0 in no DATASEC, 1 first in .kconfig, 2 other */
	_cleanup_free_ struct named_id *vars = NULL;
	size_t n_vars = 0;

	k->built = true;
	if (n == 0)
		return 0;
	sec = calloc(n, 1);
	vars = calloc(n, sizeof(*vars));
	if (!sec || !vars)
		return -ENOMEM;
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const struct btf_var_secinfo *vs;
		const char *name;

		if (!t || !btf_is_datasec(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		vs = btf_var_secinfos(t);
		for (unsigned v = 0; v < btf_vlen(t); v++, vs++)
			if (vs->type < n && !sec[vs->type])
				sec[vs->type] = name && strcmp(name, ".kconfig") == 0 ? 1 : 2;
	}
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const char *name;

		if (!t || (!btf_is_var(t) && !btf_is_func(t)))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (name)
			vars[n_vars++] = (struct named_id){name, i};
	}
	if (n_vars == 0)
		return 0;
	qsort(vars, n_vars, sizeof(*vars), cmp_named_id);
	k->names = calloc(n_vars, sizeof(*k->names));
	if (!k->names)
		return -ENOMEM;
	/* The first of each name (the lowest id) decides. */
	for (size_t i = 0; i < n_vars; i++)
		if ((i == 0 || strcmp(vars[i - 1].name, vars[i].name) != 0) && sec[vars[i].id] == 1)
			k->names[k->n++] = vars[i].name;
	return 0;
}

static int cmp_name_ptr(const void *a, const void *b);

/* 1 if libbpf resolves the extern name as a Kconfig value, 0 if not, or -ENOMEM. */
static int extern_is_kconfig(struct kconfig_names *k, const struct btf *btf, const char *name)
{
	if (!k->built) {
		int r = kconfig_names_build(k, btf);

		if (r < 0)
			return r;
	}
	return k->n && bsearch(&name, k->names, k->n, sizeof(*k->names), cmp_name_ptr);
}

static int fill_program(struct object_program *p, const struct bpf_program *prog,
			const struct elf_entry *e, const struct btf *btf,
			struct kconfig_names *kconfig)
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
	if (strv_copy((const char *const *)e->kfuncs, e->n_kfuncs, &p->kfuncs, &p->n_kfuncs) < 0)
		return -ENOMEM;
	/*
	 * Unrelocated kernel references are kernel symbols; libbpf resolves an
	 * extern as a Kconfig value (data) or a kernel symbol.
	 */
	if (e->n_externs + e->n_krefs > 0) {
		p->ksyms = calloc(e->n_externs + e->n_krefs, sizeof(*p->ksyms));
		if (!p->ksyms)
			return -ENOMEM;
		for (size_t i = 0; i < e->n_krefs; i++) {
			p->ksyms[p->n_ksyms] = strdup(e->krefs[i]);
			if (!p->ksyms[p->n_ksyms])
				return -ENOMEM;
			p->n_ksyms++;
		}
		for (size_t i = 0; i < e->n_externs; i++) {
			int r = extern_is_kconfig(kconfig, btf, e->externs[i]);

			if (r < 0)
				return r;
			if (r)
				continue;
			p->ksyms[p->n_ksyms] = strdup(e->externs[i]);
			if (!p->ksyms[p->n_ksyms])
				return -ENOMEM;
			p->n_ksyms++;
		}
	}
	return 0;
}

static int cmp_name_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Two programs or two maps of one name would make "by name" mean either (first dup, or NULL). */
static const char *first_duplicate(const char **names, size_t n)
{
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name_ptr);
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			return names[i];
	return NULL;
}

static int check_names(const struct object_desc *d, char **error)
{
	_cleanup_free_ const char **names = NULL;
	size_t n = d->n_programs > d->n_maps ? d->n_programs : d->n_maps;
	const char *dup;

	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_programs; i++)
		names[i] = d->programs[i].name;
	dup = first_duplicate(names, d->n_programs);
	if (dup)
		return error_setf(error, -EBADMSG, "more than one program is named %s", dup);
	for (size_t i = 0; i < d->n_maps; i++) {
		if (!inspect_name_is_valid(d->maps[i].name))
			return error_setf(
				error, -EBADMSG,
				"map %zu has a name that is not 1 to %d of A-Z a-z 0-9 _ . $ -", i,
				INSPECT_MAX_NAME);
		names[i] = d->maps[i].name;
	}
	dup = first_duplicate(names, d->n_maps);
	if (dup)
		return error_setf(
			error, -EBADMSG,
			"more than one map is named %s: the broker decides on and hands out "
			"maps by name, so names must be unique",
			dup);
	return 0;
}

int inspect_object(struct bpf_object *obj, const struct elf_calls *calls, uint64_t object_bytes,
		   struct object_desc *ret, struct object_handles *ret_handles, char **error)
{
	_cleanup_(object_desc_done) struct object_desc d = {.object_bytes = object_bytes};
	_cleanup_(object_handles_done) struct object_handles h = {};
	_cleanup_free_ const struct elf_entry **by_name = NULL;
	_cleanup_(kconfig_names_done) struct kconfig_names kconfig = {};
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *prog;
	struct bpf_map *map;
	size_t n_progs = 0, n_maps = 0;
	int r;

	if (!obj || !calls || !ret || !ret_handles)
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
		h.programs = calloc(n_progs, sizeof(*h.programs));
		if (!d.programs || !h.programs)
			return -ENOMEM;
	}
	if (n_maps > 0) {
		d.maps = calloc(n_maps, sizeof(*d.maps));
		h.maps = calloc(n_maps, sizeof(*h.maps));
		if (!d.maps || !h.maps)
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
			return error_setf(
				error, -EBADMSG,
				"program %s is in .text, which holds only subprograms: give it "
				"a SEC()",
				key.name && inspect_name_is_valid(key.name) ? key.name
									    : "<unnamed>");
		/*
		 * libbpf names SEC("?socket")'s section "socket": the "?" only
		 * turns autoload off (bpf_object__init_prog()). Skip it as
		 * libbpf does, one "?" and only at the start.
		 */
		if (!found || !section ||
		    strcmp((*found)->section + ((*found)->section[0] == '?'), section) != 0)
			return error_setf(
				error, -EBADMSG,
				"a program was not found in the object's code where libbpf "
				"sees it (%s)",
				key.name && inspect_name_is_valid(key.name) ? key.name
									    : "<invalid name>");
		h.programs[d.n_programs] = prog;
		d.n_programs++;
		r = fill_program(&d.programs[d.n_programs - 1], prog, *found, btf, &kconfig);
		if (r < 0)
			return r;
	}

	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map)) {
		struct object_map *m;

		if (d.n_maps >= n_maps)
			break;
		h.maps[d.n_maps] = map;
		m = &d.maps[d.n_maps++];
		m->name = strdup(bpf_map__name(map) ?: "");
		if (!m->name)
			return -ENOMEM;
		m->map_type = bpf_map__type(map);
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		/* libbpf gives a perf event array declared without a size one entry per
		 * possible CPU when it creates it: decide on, and report, that size. */
		if (m->map_type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && m->max_entries == 0) {
			int cpus = libbpf_num_possible_cpus();

			if (cpus < 0)
				return cpus;
			m->max_entries = (uint32_t)cpus;
		}
		m->map_flags = bpf_map__map_flags(map);
		/* libbpf creates a map of maps' inner template too, of the type declared. */
		if (bpf_map__inner_map(map)) {
			const struct bpf_map *inner = bpf_map__inner_map(map);

			m->inner_map_type = bpf_map__type(inner);
			m->inner_key_size = bpf_map__key_size(inner);
			m->inner_value_size = bpf_map__value_size(inner);
			m->inner_max_entries = bpf_map__max_entries(inner);
			m->inner_map_flags = bpf_map__map_flags(inner);
		}
		/* libbpf sets the pin path at open time exactly for LIBBPF_PIN_BY_NAME maps
		 * (under opts.pin_root_path, default /sys/fs/bpf); nothing else sets it
		 * before load unless the caller did. */
		m->pinned = bpf_map__pin_path(map) != NULL;
	}
	r = check_names(&d, error);
	if (r < 0)
		return r;

	*ret = d;
	d = (struct object_desc){0};
	*ret_handles = h;
	h = (struct object_handles){};
	return 0;
}

void insns_summary_done(struct insns_summary *s)
{
	free(s->helpers);
	*s = (struct insns_summary){};
}

int insns_summary_add(struct insns_summary *s, const struct insn_decoded *d)
{
	int r;

	switch (d->kind) {
	case INSN_HELPER_CALL:
		r = GROW(s->helpers, s->n_helpers, s->cap_helpers);
		if (r < 0)
			return r;
		s->helpers[s->n_helpers++] = d->imm;
		break;
	case INSN_KFUNC_CALL:
		s->n_kfunc_calls++;
		break;
	case INSN_KERNEL_REF:
		s->n_kernel_refs++;
		break;
	case INSN_MAP_REF:
		s->n_map_refs++;
		break;
	default:
		break;
	}
	return 0;
}

void insns_summary_finish(struct insns_summary *s)
{
	s->n_helpers = sort_unique(s->helpers, s->n_helpers, sizeof(*s->helpers), cmp_int);
}

int inspect_insns_summary(const void *insns, size_t n_insns, struct insns_summary *ret,
			  char **error)
{
	_cleanup_(insns_summary_done) struct insns_summary s = {};
	int r;

	if (!insns && n_insns > 0)
		return -EINVAL;
	for (size_t i = 0; i < n_insns;) {
		struct insn_decoded d;

		r = insn_decode(insns, n_insns, i, &d, error);
		if (r < 0)
			return r;
		r = insns_summary_add(&s, &d);
		if (r < 0)
			return r;
		i += d.width;
	}
	insns_summary_finish(&s);
	*ret = s;
	s = (struct insns_summary){};
	return 0;
}
