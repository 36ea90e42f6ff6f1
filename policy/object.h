/* SPDX-License-Identifier: MIT */
/*
 * An inspected object as the policy decides on it: its programs (type, size,
 * helpers, kfuncs, kernel symbols) and maps (shape, flags), and the kernel
 * memory a map takes when full (policy/mapmem.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct object_program {
	char *name;
	int prog_type; /* enum bpf_prog_type */
	int attach_type; /* enum bpf_attach_type */
	bool load; /* false: not selected for loading, not checked */
	uint32_t insn_cnt; /* including reachable subprograms */
	int *helpers; /* helper ids called, sorted, unique, subprograms and callbacks included */
	size_t n_helpers;
	char **kfuncs; /* kfunc names called */
	size_t n_kfuncs;
	/*
	 * Kernel variables and functions referenced (BPF_PSEUDO_BTF_ID loads,
	 * __ksym externs): kernel memory or a kernel address, so class
	 * read_kernel_memory.
	 */
	char **ksyms;
	size_t n_ksyms;
};

/*
 * Map flags an object may use (they change how a map holds its data):
 * BPF_F_NO_PREALLOC, _NO_COMMON_LRU, _NUMA_NODE, _RDONLY, _WRONLY,
 * _STACK_BUILD_ID, _ZERO_SEED, _RDONLY_PROG, _WRONLY_PROG, _CLONE, _MMAPABLE,
 * _PRESERVE_ELEMS, _INNER_MAP (bits 0 to 12).
 */
#define POLICY_MAP_FLAGS_KNOWN 0x1fffu

struct object_map {
	char *name;
	int map_type;
	int inner_map_type; /* a map of maps' inner map template: its type, or 0 */
	uint32_t key_size, value_size, max_entries;
	uint32_t map_flags; /* BPF_F_MMAPABLE and friends, as the object declares them */
	bool pinned; /* LIBBPF_PIN_BY_NAME */
	/*
	 * A map of maps' inner map (the object's template, or the one the
	 * request describes): created for the load only, but decided on and
	 * counted like a map. Zero without one.
	 */
	uint32_t inner_key_size, inner_value_size, inner_max_entries, inner_map_flags;
};

struct object_desc {
	uint64_t object_bytes;
	struct object_program *programs;
	size_t n_programs;
	struct object_map *maps;
	size_t n_maps;
};

void object_desc_done(struct object_desc *d); /* frees members, not d itself */
/*
 * Kernel memory a map takes when full, estimated from its shape (value and
 * key sizes rounded up as the kernel does, per-element overhead for hashed
 * types, a copy per possible CPU for per-CPU types: n_cpus), for the
 * max_map_memory_bytes quota before creating a map; afterwards the kernel's
 * own figure counts where it is higher (daemon/worker/ledger.h). Deliberately
 * generous, saturating.
 */
uint64_t policy_map_memory_estimate(const struct object_map *m, unsigned n_cpus);
/* The same for m's inner map (inner_*), or 0 without one. */
uint64_t policy_map_inner_memory_estimate(const struct object_map *m, unsigned n_cpus);
