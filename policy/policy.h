/* SPDX-License-Identifier: MIT */
/*
 * Policy: JSON rule files from a drop-in directory, matched against a
 * client's kernel-provided identity, combined into one effective grant, and
 * pure decisions on an inspected object. No root needed; the only outside
 * lookups are user and group names (getpwnam/getgrnam) while parsing.
 *
 * Combination of several matching rules (documented in README.md): rules
 * only ever add rights, there is no deny rule.
 *  - program types, program-fd types, helper classes: union;
 *  - map access: each matching rule yields, for a map name, the access of the
 *    first of its patterns that matches (a rule none of whose patterns match
 *    yields nothing); the effective access is the union of those (ro + wo = rw,
 *    none adds nothing, consume is a bit of its own), which the map's type
 *    then narrows (policy_map_access_for_type());
 *  - limits: per limit, the largest value among matching rules, a rule that
 *    omits a limit counting as the built-in default.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "helpers.h"

enum map_access {
	MAP_ACCESS_NONE = 0,
	MAP_ACCESS_RO = 1,
	MAP_ACCESS_WO = 2,
	MAP_ACCESS_RW = 3, /* == RO | WO, so access modes combine with | */
	/*
	 * Ring buffers only: an O_RDWR fd, to map the consumer position
	 * writable and the data read-only. A bit of its own, so that it
	 * combines with | like the others; policy_map_access_for_type() turns
	 * a union into what one map of a given type gets.
	 */
	MAP_ACCESS_CONSUME = 4,
};

/* "none", "ro", "wo", "rw", "consume"; unions of consume and others as "ro+consume" etc. */
const char *map_access_to_string(enum map_access a);
/* One of the five words; 0 or -EINVAL. */
int map_access_from_string(const char *s, enum map_access *ret);

/* Built-in defaults for limits a rule leaves out. */
#define POLICY_DEFAULT_MAX_OBJECT_BYTES (1024 * 1024)
#define POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM 4096
#define POLICY_DEFAULT_MAX_PROGRAMS 8
#define POLICY_DEFAULT_MAX_MAPS 16
#define POLICY_DEFAULT_MAX_MAP_ENTRIES 65536
/*
 * Map types every matching rule grants without naming them: plain data whose
 * memory follows from the map's shape (hash, array, percpu_hash,
 * percpu_array, lru_hash, lru_percpu_hash, lpm_trie, queue, stack,
 * bloom_filter, ringbuf). Every other type carries code, fds or kernel
 * objects, redirects traffic, starts kernel threads, registers kernel
 * objects or grows with the kernel's objects, and is granted only by name in
 * "map_types" (policy/POLICY.md says what each one means).
 */
#define POLICY_DEFAULT_MAP_TYPES                                                                   \
	((1ull << 1 /* BPF_MAP_TYPE_HASH */) | (1ull << 2 /* ARRAY */) |                           \
	 (1ull << 5 /* PERCPU_HASH */) | (1ull << 6 /* PERCPU_ARRAY */) |                          \
	 (1ull << 9 /* LRU_HASH */) | (1ull << 10 /* LRU_PERCPU_HASH */) |                         \
	 (1ull << 11 /* LPM_TRIE */) | (1ull << 22 /* QUEUE */) | (1ull << 23 /* STACK */) |       \
	 (1ull << 27 /* RINGBUF */) | (1ull << 30 /* BLOOM_FILTER */))
/* cgroup_inet_ingress, cgroup_inet_egress, cgroup_device: observe, drop, deny; nothing else. */
#define POLICY_CGROUP_ATTACH_DEFAULT ((1ull << 0) | (1ull << 1) | (1ull << 6))

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
/* A policy file larger than this is an error. */
#define POLICY_MAX_FILE_BYTES (1024 * 1024)

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
	 * keeps it (daemon/worker/ledger.h), named or not, held by a pin or only by a
	 * client's fd. */
	uint64_t max_loaded_programs;
	uint64_t max_map_memory_bytes; /* the kernel's figure, or a full map's where more */
	uint64_t max_kernel_threads; /* threads maps can start: one per cpumap entry */
	uint64_t max_loads_per_minute; /* loads and attaches, counted per user */
};

/*
 * "shared": the rule's principals may use maps of another user's named
 * objects: owner's objects whose name matches object, maps matching map, at
 * most access. (Owners share too, at load time; see the daemon.)
 */
struct policy_share_rule {
	uid_t owner;
	char *object; /* fnmatch(3) pattern */
	char *map; /* fnmatch(3) pattern */
	enum map_access access;
};

struct policy_attach {
	/*
	 * Attach types allowed on cgroups the caller owns, bit (1 << enum
	 * bpf_attach_type). "cgroups": true means POLICY_CGROUP_ATTACH_DEFAULT;
	 * a list names them. Hooks that rewrite what other programs see
	 * (sock_addr, sockopt, sysctl) reach setuid programs the user starts
	 * in that cgroup, so they are granted only by name.
	 */
	uint64_t cgroup_attach_types;
	char **tracepoints; /* "CATEGORY:NAME" patterns */
	size_t n_tracepoints;
	char **raw_tracepoints; /* NAME patterns */
	size_t n_raw_tracepoints;
	/*
	 * Interface name patterns for xdp and tc, in the caller's network
	 * namespace when the caller owns it (a user namespace the caller owns
	 * owns it); host_interfaces: in one the caller does not own (the
	 * host's, or anyone else's).
	 */
	char **interfaces;
	size_t n_interfaces;
	char **host_interfaces;
	size_t n_host_interfaces;
	/*
	 * kprobe-type programs as uprobes on the caller's own processes (those
	 * running as the caller, dumpable, without capabilities, no_new_privs).
	 */
	bool uprobes;
};

struct policy_map_pattern {
	char *glob; /* fnmatch(3) pattern, no flags */
	enum map_access access;
};

/* The effective grant for one client: all matching rules combined. */
struct policy_grant {
	bool matched; /* false: no rule matched, nothing allowed */
	uint64_t program_types; /* bit (1 << enum bpf_prog_type) */
	uint64_t program_fd_types; /* types whose prog fds are handed out (attach rights) */
	uint64_t test_run_types; /* may load for BPF_PROG_TEST_RUN only: no fd, no attach */
	/*
	 * Bit (1 << enum bpf_map_type): POLICY_DEFAULT_MAP_TYPES and named ones.
	 * With array_of_maps or hash_of_maps ("maps_of_maps" names both): the
	 * kernel ignores an fd's access mode when it is stored into a map of
	 * maps, so they grant writing (through the caller's own programs) every
	 * map the caller holds any fd of.
	 */
	uint64_t map_types;
	helper_class_mask_t helper_classes; /* HELPER_CLASS_BIT() */
	struct policy_attach attach; /* union of the matching rules' targets */
	struct policy_share_rule *shared;
	size_t n_shared;
	bool pinning; /* may use LIBBPF_PIN_BY_NAME maps */
	/*
	 * Load with CAP_PERFMON effective, whatever the program types: the
	 * verifier then skips its Spectre v1/v4 mitigations and lets programs
	 * store kernel pointers where the caller can read them.
	 */
	bool load_with_perfmon;
	struct policy_limits limits;
	/* Per matching rule, its map patterns in order; used by policy_grant_map_access(). */
	struct policy_grant_maps {
		struct policy_map_pattern *patterns;
		size_t n_patterns;
	} * map_rules;
	size_t n_map_rules;
	char **sources; /* "FILE:rules[N]" of each matching rule, for display */
	size_t n_sources;
	uid_t uid; /* the identity's uid, for policy_decide()'s "no rule matches" reason */
};

/* Program types whose fd is always handed out: attaching them needs resources
 * the holder already owns (its own socket), see policy_grant_prog_fd(). */
#define POLICY_ALWAYS_FD_TYPES                                                                     \
	((1ull << 1 /* BPF_PROG_TYPE_SOCKET_FILTER */) |                                           \
	 (1ull << 21 /* BPF_PROG_TYPE_SK_REUSEPORT */))

/* Who is asking, as the kernel told us (SO_PEERCRED, SO_PEERGROUPS). */
struct policy_identity {
	uid_t uid;
	gid_t gid;
	const gid_t *groups; /* supplementary groups */
	size_t n_groups;
	/*
	 * The caller's systemd unit, from its cgroup at accept, only as far as
	 * it can be trusted (daemon/loop/peer_unit.c; policy/POLICY.md, "units").
	 * NULL and 0 where unknown:
	 *   unit         the system unit; its cgroup's ancestors are root's alone
	 *   user_unit    the unit in the caller's own user manager, user@UID.service
	 *   slices       the system slices the process is in, outermost first
	 *   user_slices  the slices within the caller's own user manager
	 */
	const char *unit;
	const char *user_unit;
	const char *const *slices;
	size_t n_slices;
	const char *const *user_slices;
	size_t n_user_slices;
};

struct policy;

typedef void (*policy_warn_fn)(void *userdata, const char *message);

/*
 * Parse every "*.json" file in dir (sorted by name; other files ignored).
 * Returns 0 and *ret, or a negative errno with *error set to a message naming
 * the file and the JSON path of the fault ("10-x.json: rules[0].allow.maps[1].access:
 * unknown access \"rx\" (expected rw, ro, wo or none)"). Unknown keys are errors.
 * Names of users/groups that don't exist produce a warning through warn (may be NULL)
 * and never match. A missing directory is an empty policy (deny all) plus a warning.
 */
int policy_load_dir(const char *dir, policy_warn_fn warn, void *userdata, struct policy **ret,
		    char **error);
/* The same for one file's contents (used by policy_load_dir and by tests/fuzzing). */
int policy_load_string(struct policy *p, const char *file_name, const char *json,
		       policy_warn_fn warn, void *userdata, char **error);
/*
 * The policy as policy_load_dir() would read it, not parsed: every file's
 * name and contents (the same checks, the same order), in one buffer that
 * policy_load_snapshot() parses. So that a process started later (the worker
 * spawner, which is exec'd) decides with exactly the files the daemon read,
 * whatever changed on disk since. An empty buffer (*ret NULL) is no files.
 */
int policy_snapshot_dir(const char *dir, policy_warn_fn warn, void *userdata, char **ret,
			size_t *ret_size, char **error);
int policy_load_snapshot(const char *buf, size_t size, policy_warn_fn warn, void *userdata,
			 struct policy **ret, char **error);
struct policy *policy_new(void);
struct policy *policy_free(struct policy *p);
size_t policy_n_rules(const struct policy *p);

/* Does any rule match on systemd units or slices (so identities need them)? */
bool policy_uses_units(const struct policy *p);

/* Combine all rules that match id. Always succeeds apart from -ENOMEM. */
int policy_resolve(const struct policy *p, const struct policy_identity *id,
		   struct policy_grant **ret);
struct policy_grant *policy_grant_free(struct policy_grant *g);

enum map_access policy_grant_map_access(const struct policy_grant *g, const char *map_name);
bool policy_grant_prog_type(const struct policy_grant *g, int prog_type);
bool policy_grant_map_type(const struct policy_grant *g, int map_type);
/* Map type by libbpf name ("hash") or -EINVAL; name by type or NULL. */
int policy_map_type_from_string(const char *s);
const char *policy_map_type_to_string(int map_type);
/*
 * Do programs of this type run only in the caller's own processes, whoever
 * else is on the system? True for kprobe-type programs as long as the grant
 * keeps their fds (the broker attaches them only as uprobes bound to one of
 * the caller's processes, see attach.uprobes); false for every type whose
 * programs run in whatever task the kernel is in (tracepoints, kprobes,
 * raw tracepoints, networking hooks, and test runs, in the broker's worker).
 */
bool policy_prog_runs_in_callers_task(const struct policy_grant *g, int prog_type);
/*
 * May a program of prog_type call helper_id? Its class must be granted; a
 * class that acts on the current task (helper_class_any_task()) counts only
 * where policy_prog_runs_in_callers_task(), its *_any_task class everywhere.
 */
bool policy_grant_helper(const struct policy_grant *g, int prog_type, int helper_id);
/*
 * The policy key to name when a request wants `wanted` of the limit `key`:
 * key itself, or "" when wanted is over the key's hard ceiling, which no
 * policy can raise (a user told to raise key could not). note gets "" or a
 * sentence to append that says so.
 */
const char *policy_limit_key(const char *key, uint64_t wanted, char *note, size_t note_size);
/*
 * The class g would have to grant for a program of prog_type that
 * policy_grant_helper() refuses helper_id: the helper's own class where
 * that class would do (it has no *_any_task form, or the program runs in
 * the caller's own task), else its *_any_task class (*any_task, if not
 * NULL, says which). Granting the class returned lets the helper through.
 */
enum helper_class policy_helper_class_needed(const struct policy_grant *g, int prog_type,
					     int helper_id, bool *any_task);
bool policy_grant_prog_fd(const struct policy_grant *g, int prog_type);
/* May programs of this type be test-run (granted for use, or for test runs only)? */
bool policy_grant_test_run(const struct policy_grant *g, int prog_type);
bool policy_grant_attach_cgroup(const struct policy_grant *g, int attach_type);
bool policy_grant_attach_tracepoint(const struct policy_grant *g, const char *category_name);
bool policy_grant_attach_raw_tracepoint(const struct policy_grant *g, const char *name);
/* xdp and tc on ifname: in a network namespace the caller owns; in any other. */
bool policy_grant_attach_interface(const struct policy_grant *g, const char *ifname);
bool policy_grant_attach_host_interface(const struct policy_grant *g, const char *ifname);
bool policy_grant_attach_uprobes(const struct policy_grant *g);
/* Access the policy grants g's principal to map of owner's named object (union of rules). */
enum map_access policy_grant_shared_access(const struct policy_grant *g, uid_t owner,
					   const char *object, const char *map);
/*
 * Tracepoint and raw tracepoint names as the broker accepts them in requests
 * and policies: [A-Za-z0-9_] (and one ':' between category and name for
 * tracepoints); patterns may also use '*' and '?'. Keeps names safe to use in
 * tracefs paths.
 */
bool policy_tracepoint_name_is_valid(const char *s, bool pattern);
bool policy_raw_tracepoint_name_is_valid(const char *s, bool pattern);
/* Interface names: 1 to 15 characters, none of '/', ':', whitespace (as the kernel's
 * dev_valid_name). */
bool policy_interface_name_is_valid(const char *s, bool pattern);
/* The effective policy as JSON, for `bpfctl policy` (program types by libbpf name). */
json_object *policy_grant_to_json(const struct policy_grant *g);

/* Program type by libbpf name ("socket_filter") or -EINVAL; name by type or NULL. */
int policy_prog_type_from_string(const char *s);
const char *policy_prog_type_to_string(int prog_type);

/* ---- Decisions on an inspected object ---- */

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

/* One reason an item is denied (policy/verdict.h makes them). */
struct verdict_reason {
	/*
	 * A full sentence naming the item and what it lacks, ending with
	 * "(policy key KEY)" when a policy could allow it.
	 */
	char *text;
	/*
	 * The policy key that would have to change, spelled as in
	 * policy/POLICY.md: a limit ("max_map_entries"), a boolean ("pinning"),
	 * or a list followed by ": " and the entry to add ("helper_classes:
	 * read_kernel_memory", "program_types: xdp", "map_types: devmap").
	 * "" when no policy can allow it (a rule of the broker's own).
	 */
	char *key;
};

struct verdict_item {
	bool allowed;
	/* Every reason, in the order they were found; none when allowed. */
	struct verdict_reason *reasons;
	size_t n_reasons;
	const char *reason; /* NULL when allowed; otherwise reasons[0].text, the first */
};

struct policy_verdict {
	bool allowed; /* everything below allowed */
	struct verdict_item object; /* object-level limits (size, program and map counts) */
	struct verdict_item *programs; /* parallel to desc->programs */
	struct verdict_item *maps; /* parallel to desc->maps */
	enum map_access *map_access; /* parallel to desc->maps: the mode fds are opened with */
	bool *prog_fd; /* parallel to desc->programs: whether the fd is handed out */
	bool *test_run_only; /* parallel to desc->programs: loads only for test runs */
	size_t n_programs, n_maps;
};

/*
 * Decide on d under g. Every reason of every item is collected, each a
 * specific sentence ending with its policy key (struct verdict_reason).
 * For example:
 *
 * - program "x" has type kprobe, which your policy does not allow
 *   (policy key program_types: kprobe)
 * - program "x" calls bpf_probe_read_kernel (class read_kernel_memory),
 *   which your policy does not allow
 *   (policy key helper_classes: read_kernel_memory)
 * - program "x" has 5000 instructions, over your limit of 4096
 *   (policy key max_insns_per_program)
 * - map "big" has 1000000 entries, over your limit of 65536
 *   (policy key max_map_entries)
 * - ring buffer "rb" is 1048576 bytes, over your limit of 65536
 *   (policy key max_map_entries, which limits a ring buffer's size in bytes)
 * - map "pins" is pinned by name, which your policy does not allow
 *   (policy key pinning)
 *
 * Returns 0 (the verdict says allowed or not) or -ENOMEM.
 */
int policy_decide(const struct policy_grant *g, const struct object_desc *d,
		  struct policy_verdict *ret);
void policy_verdict_done(struct policy_verdict *v);
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
/* array_of_maps, hash_of_maps: fds of these are never handed out writable. */
bool policy_map_type_is_map_of_maps(int map_type);
/*
 * The access one map of map_type gets from what the policy grants its name
 * (a union of rules, shares): a ring buffer gets consume or nothing (the
 * kernel supports no lookup or update on it, so ro, wo and rw would only
 * hand out what consume means); a map of maps at most ro; any other map its
 * ro/wo/rw part (consume means nothing there).
 */
enum map_access policy_map_access_for_type(enum map_access granted, int map_type);
/* The first denial reason in v (the object's, then the programs', then the maps'), or NULL if
 * allowed: one line for callers that show one. */
const char *policy_verdict_first_reason(const struct policy_verdict *v);
