/* SPDX-License-Identifier: MIT */
/*
 * Decisions on an inspected object under a grant: a verdict per item, with
 * every reason it is denied (policy/decide.c, policy/decide_map.c; the
 * reasons' wording in verdict.h).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "grant.h"
#include "object.h"

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
