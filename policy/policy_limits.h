/* SPDX-License-Identifier: MIT */
/*
 * Limits a grant carries: the built-in defaults a rule that leaves one out
 * gets, and the hard ceilings no policy can raise (policy/policy_limits.c).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Built-in defaults for limits a rule leaves out. */
#define POLICY_DEFAULT_MAX_OBJECT_BYTES (1024 * 1024)
#define POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM 4096
#define POLICY_DEFAULT_MAX_PROGRAMS 8
#define POLICY_DEFAULT_MAX_MAPS 16
#define POLICY_DEFAULT_MAX_MAP_ENTRIES 65536
/* Per-user quotas over all of a user's named objects (across connections and restarts). */
#define POLICY_DEFAULT_MAX_NAMED_OBJECTS 16
#define POLICY_DEFAULT_MAX_ATTACHMENTS 32
#define POLICY_HARD_MAX_ATTACHMENTS 4096
#define POLICY_DEFAULT_MAX_LOADED_PROGRAMS 64
#define POLICY_DEFAULT_MAX_MAP_MEMORY_BYTES (64ull * 1024 * 1024)
#define POLICY_DEFAULT_MAX_LOADS_PER_MINUTE 120
/* Kernel threads the user's maps can start (cpumap entries): only with map_types cpumap. */
#define POLICY_DEFAULT_MAX_KERNEL_THREADS 8
#define POLICY_HARD_MAX_KERNEL_THREADS 4096
#define POLICY_HARD_MAX_NAMED_OBJECTS 4096
#define POLICY_HARD_MAX_LOADED_PROGRAMS 65536
#define POLICY_HARD_MAX_MAP_MEMORY_BYTES (64ull * 1024 * 1024 * 1024)
#define POLICY_HARD_MAX_LOADS_PER_MINUTE 100000
/* Hard ceilings no policy can raise (they bound the daemon's own work and reply size). */
#define POLICY_HARD_MAX_OBJECT_BYTES (64u * 1024 * 1024)
#define POLICY_HARD_MAX_PROGRAMS 128
#define POLICY_HARD_MAX_MAPS 120
/* The kernel's own per-program instruction limit, and max_entries' range. */
#define POLICY_HARD_MAX_INSNS_PER_PROGRAM 1000000u
#define POLICY_HARD_MAX_MAP_ENTRIES UINT32_MAX
struct policy_limits {
	uint64_t max_object_bytes;
	uint64_t max_insns_per_program; /* after subprograms are appended */
	uint64_t max_programs; /* programs that load */
	uint64_t max_maps;
	uint64_t max_map_entries; /* per map, after --map-size */
	/* Quotas per user, over the named objects the broker keeps for them. */
	uint64_t max_attachments; /* links of the user's named objects' programs */
	uint64_t max_named_objects;
	/* The next three count every object the broker made for the user while the kernel
	 * keeps it (daemon/worker/ledger.h), named or not, held by a pin or only by a client's fd.
	 */
	uint64_t max_loaded_programs;
	uint64_t max_map_memory_bytes; /* the kernel's figure, or a full map's where more */
	uint64_t max_kernel_threads; /* threads maps can start: one per cpumap entry */
	uint64_t max_loads_per_minute; /* loads and attaches, counted per user */
};
/*
 * The policy key to name when a request wants `wanted` of the limit `key`:
 * key itself, or "" when wanted is over the key's hard ceiling, which no
 * policy can raise (a user told to raise key could not). note gets "" or a
 * sentence to append that says so.
 */
const char *policy_limit_key(const char *key, uint64_t wanted, char *note, size_t note_size);
