/* SPDX-License-Identifier: MIT */
/*
 * The effective grant of one client (all matching rules combined, see
 * policy.h), and the questions the broker asks of it (policy/grant.c,
 * policy/grant_json.c).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "helpers.h"
#include "policy_limits.h"
#include "names.h"

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

struct policy_vetted;

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
	/*
	 * The grant of one vetted object (policy_grant_vetted()): its programs run on real
	 * events only, never in test runs, whatever program types it has (a run feeds them
	 * input the caller makes, and they write with it maps the grant makes read-only).
	 */
	bool vetted;
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
	/*
	 * Vetted objects (vetted.h) the matching rules grant: system objects by
	 * name, and digests with their grants. Pointers into the policy the
	 * grant was resolved from, valid while it is.
	 */
	const char **objects;
	size_t n_objects;
	const struct policy_vetted **digests;
	size_t n_digests;
};
/* Program types whose fd is always handed out: attaching them needs resources
 * the holder already owns (its own socket), see policy_grant_prog_fd(). */
#define POLICY_ALWAYS_FD_TYPES                                                                     \
	((1ull << 1 /* BPF_PROG_TYPE_SOCKET_FILTER */) |                                           \
	 (1ull << 21 /* BPF_PROG_TYPE_SK_REUSEPORT */))
struct policy_grant *policy_grant_free(struct policy_grant *g);

enum map_access policy_grant_map_access(const struct policy_grant *g, const char *map_name);
bool policy_grant_prog_type(const struct policy_grant *g, int prog_type);
bool policy_grant_map_type(const struct policy_grant *g, int map_type);
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
/* The effective policy as JSON, for `bpfctl policy` (program types by libbpf name). */
json_object *policy_grant_to_json(const struct policy_grant *g);
