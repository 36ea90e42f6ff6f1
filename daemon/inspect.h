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
 * A program libbpf knows but calls lacks is an error (-EBADMSG), never skipped.
 */
int inspect_object(struct bpf_object *obj, const struct elf_calls *calls, uint64_t object_bytes,
		   struct object_desc *ret, char **error);

/* Helper ids and kfunc-call count in final (relocated) instructions, for the post-load cross-check.
 */
int inspect_insns_helpers(const void *insns, size_t n_insns, int **ret_helpers, size_t *ret_n,
			  size_t *ret_n_kfunc_calls);
