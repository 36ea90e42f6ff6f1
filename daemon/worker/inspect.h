/* SPDX-License-Identifier: MIT */
/*
 * Object inspection, run only in workers (the event loop never parses ELF).
 *
 * libbpf does not expose subprograms before load, so the call graph is taken
 * from the ELF itself: every function symbol in an executable section, calls
 * between them (BPF_PSEUDO_CALL, same-section or through relocations into
 * .text), callback references (BPF_LD_IMM64 with BPF_PSEUDO_FUNC), helper calls
 * (BPF_CALL, src_reg 0, imm = helper id) and kfunc calls (BPF_CALL,
 * src_reg BPF_PSEUDO_KFUNC_CALL, named by the relocation's symbol). Hostile
 * input: every offset and index is bounds-checked.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct bpf_object;

struct elf_entry {
	char *name; /* function symbol name == libbpf program name */
	char *section; /* ELF section name, e.g. "socket" or "kprobe/do_sys_open" */
	uint32_t insn_cnt; /* own instructions plus every reachable subprogram's */
	int *helpers; /* sorted, unique, over everything reachable */
	size_t n_helpers;
	char **kfuncs; /* sorted, unique */
	size_t n_kfuncs;
	/*
	 * Extern variables loaded (ld_imm64 relocated against an undefined
	 * symbol), sorted, unique: kernel symbols (__ksym), or Kconfig values
	 * (__kconfig), which inspect_object() tells apart from the BTF.
	 */
	char **externs;
	size_t n_externs;
	/*
	 * Kernel references without a relocation (BPF_PSEUDO_BTF_ID loads), as
	 * "btf_id:N": kernel symbols whatever the object's BTF says, so kept
	 * apart from the externs that BTF classifies.
	 */
	char **krefs;
	size_t n_krefs;
};

struct elf_calls {
	struct elf_entry *entries; /* one per function in a non-.text executable section */
	size_t n_entries;
};

/* Pure: parse the ELF image. 0, or negative errno (-EINVAL/-EBADMSG with *error set) on malformed
 * input. */
int inspect_elf_calls(const void *elf, size_t len, struct elf_calls **ret, char **error);
struct elf_calls *elf_calls_free(struct elf_calls *c);

/*
 * Describe an opened (not loaded) libbpf object, after configuration, into ret:
 * programs (name, type, expected attach type, whether it autoloads) merged by
 * name with calls; maps (name, type, key/value size, max_entries, pinned by name).
 * A program libbpf knows but calls lacks is an error (-EBADMSG), never skipped;
 * so are names that are not inspect_name_is_valid() and two programs or two
 * maps of the same name (-EBADMSG).
 */
struct bpf_program;
struct bpf_map;

/*
 * libbpf's handles of what inspect_object() described, by the same index, so
 * that every decision and every fd handed out refer to the same object
 * (names are checked unique, but an index cannot be misread at all).
 */
struct object_handles {
	struct bpf_program **programs;
	struct bpf_map **maps;
};
void object_handles_done(struct object_handles *h);

int inspect_object(struct bpf_object *obj, const struct elf_calls *calls, uint64_t object_bytes,
		   struct object_desc *ret, struct object_handles *ret_handles, char **error);

/* What a program's instructions do, read through the allow-list (insncheck.h). */
struct insns_summary {
	int *helpers; /* helper ids called, sorted, unique (once finished) */
	size_t n_helpers, cap_helpers;
	size_t n_kfunc_calls;
	size_t n_kernel_refs; /* BPF_PSEUDO_BTF_ID loads */
	size_t n_map_refs;
};

/*
 * Summarize instructions (raw, or libbpf's relocated output for the post-load
 * cross-check): 0, or -EBADMSG with *error for one outside the allow-list.
 */
int inspect_insns_summary(const void *insns, size_t n_insns, struct insns_summary *ret,
			  char **error);
void insns_summary_done(struct insns_summary *s);
/*
 * The same one decoded instruction at a time, for a caller that walks them
 * anyway (insns.c): add each, then finish (helpers sorted, unique).
 */
struct insn_decoded;
int insns_summary_add(struct insns_summary *s, const struct insn_decoded *d);
void insns_summary_finish(struct insns_summary *s);

/*
 * Program and map names as the broker passes them on (replies, logs, policy
 * patterns): 1 to INSPECT_MAX_NAME of [A-Za-z0-9_.$-]. libbpf takes them from
 * ELF symbols and BTF, which can hold anything.
 */
#define INSPECT_MAX_NAME 128
bool inspect_name_is_valid(const char *name);
