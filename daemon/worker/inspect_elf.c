/* SPDX-License-Identifier: MIT */
/*
 * Reading a BPF ELF object's header, symbols, sections, functions and
 * relocations, as libbpf 1.1 will read the same bytes.
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
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "inspect_internal.h"

void ctx_done(struct ctx *c)
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

const char *sec_name(const struct ctx *c, size_t idx)
{
	if (idx == 0 || idx >= c->n_secs || !c->secs[idx].name)
		return "<invalid>";
	return c->secs[idx].name;
}

const char *sym_name(const struct ctx *c, const GElf_Sym *sym)
{
	/* Static functions are referenced through their section's symbol, which has no name. */
	if (GELF_ST_TYPE(sym->st_info) == STT_SECTION && sym->st_name == 0)
		return sec_name(c, sym->st_shndx);
	return elf_strptr(c->elf, c->strtab, sym->st_name);
}

/* libbpf's sym_is_extern(): what a relocated call turns into a kfunc call. */
bool sym_is_extern(const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);

	return sym->st_shndx == SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
	       GELF_ST_TYPE(sym->st_info) == STT_NOTYPE;
}

/* libbpf's sym_is_subprog(): the only ld_imm64 relocations it reads as a function address. */
bool sym_is_subprog(const struct ctx *c, const GElf_Sym *sym)
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

int read_header(struct ctx *c, size_t *shstrndx)
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

int read_symbols(struct ctx *c)
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
int read_sections(struct ctx *c, size_t shstrndx)
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
int read_functions(struct ctx *c)
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
int read_relocations(struct ctx *c)
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

const struct reloc *find_reloc(const struct section *s, size_t insn)
{
	const struct reloc key = {.insn = insn};

	if (s->n_relocs == 0)
		return NULL;
	return bsearch(&key, s->relocs, s->n_relocs, sizeof(*s->relocs), cmp_reloc);
}

/* The function of section sec starting exactly at instruction insn, or SIZE_MAX. */
size_t find_func(const struct ctx *c, size_t sec, int64_t insn)
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
