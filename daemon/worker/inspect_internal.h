/* SPDX-License-Identifier: MIT */
/* What the inspection files (inspect_*.c) share: bounds on hostile input, growing arrays, the ELF
 * walk's state and the Kconfig names. */
#pragma once

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

int grow(void **p, size_t *cap, size_t need, size_t elem);
#define GROW(arr, n, cap) grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))
int append_all(void **arr, size_t *n, size_t *cap, const void *src, size_t n_src, size_t elem);
#define APPEND_ALL(arr, n, cap, src, n_src)                                                        \
	append_all((void **)&(arr), &(n), &(cap), (src), (n_src), sizeof(*(arr)))

int cmp_int(const void *a, const void *b);
int cmp_size(const void *a, const void *b);
int cmp_str(const void *a, const void *b);
size_t sort_unique(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *));
int strv_copy(const char *const *v, size_t n, char ***ret, size_t *ret_n);

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

void ctx_done(struct ctx *c);
const char *sec_name(const struct ctx *c, size_t idx);
const char *sym_name(const struct ctx *c, const GElf_Sym *sym);
bool sym_is_extern(const GElf_Sym *sym);
bool sym_is_subprog(const struct ctx *c, const GElf_Sym *sym);
int read_header(struct ctx *c, size_t *shstrndx);
int read_symbols(struct ctx *c);
int read_sections(struct ctx *c, size_t shstrndx);
int read_functions(struct ctx *c);
int read_relocations(struct ctx *c);
const struct reloc *find_reloc(const struct section *s, size_t insn);
size_t find_func(const struct ctx *c, size_t sec, int64_t insn);

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

void kconfig_names_done(struct kconfig_names *k);
struct btf;
int extern_is_kconfig(struct kconfig_names *k, const struct btf *btf, const char *name);
