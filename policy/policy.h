/* SPDX-License-Identifier: MIT */
/*
 * Policy: JSON rule files from a drop-in directory, matched against a
 * client's kernel-provided identity, combined into one effective grant, and
 * pure decisions on an inspected object. No root needed; the only outside
 * lookups are user and group names (common/parse.h: getpwnam_r/getgrnam_r)
 * while parsing.
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

#include "decide.h"
#include "grant.h"
#include "policy_limits.h"
#include "names.h"
#include "object.h"

/* A policy file larger than this is an error. */
#define POLICY_MAX_FILE_BYTES (1024 * 1024)

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
