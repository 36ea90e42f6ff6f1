/* SPDX-License-Identifier: MIT */
/*
 * Vetted objects: an object the administrator reviewed, known by its content digest, that a
 * user may load with the grants it declares instead of their own (policy/POLICY.md, "Vetted
 * objects"). Two ways to name one, one mechanism: a system object, installed by root in a
 * system directory with a manifest (NAME.json beside NAME.bpf.o), granted by name in
 * "objects"; and a digest in "digests", for an object the user brings, whose grants are
 * written inline or taken from a manifest by name. Manifests and policy files are root's:
 * nothing here parses what a user wrote.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/parse.h"
#include "common/sha256.h"
#include "grant.h"

struct policy_rule;

/* "sha256:" and 64 lowercase hex digits: how policy and manifests spell a digest. */
#define POLICY_DIGEST_PREFIX "sha256:"
#define POLICY_DIGEST_SIZE (sizeof(POLICY_DIGEST_PREFIX) - 1 + SHA256_HEX_SIZE)
/* A manifest may be at most this large (it is a few hundred bytes). */
#define POLICY_MAX_MANIFEST_BYTES (64 * 1024)
/* A system object's name: parse_object_name_is_valid() (common/parse.h). */
#define POLICY_MAX_OBJECT_NAME PARSE_OBJECT_NAME_MAX

/* One vetted object's digest and grants (a manifest, or a "digests" entry). */
struct policy_vetted {
	char digest[POLICY_DIGEST_SIZE]; /* "sha256:<hex>" */
	/* A "digests" entry naming a manifest for its grants; NULL when rule holds them. */
	char *manifest;
	/* The grants and per-object limits, parsed as a rule's "allow" and "limits". */
	struct policy_rule *rule;
};

/* "sha256:" + 64 lowercase hex digits. */
bool policy_digest_is_valid(const char *s);

/*
 * Parse a manifest's text: {"digest": "sha256:...", "description": "...", and the grants:
 * "program_types", "program_fds", "map_types", "helper_classes", "maps", "maps_of_maps",
 * "attach" ("cgroups" only) as in a rule's "allow", and "limits" (the per-object ones)}
 * (file_name names it in errors). 0 and *ret, or a negative errno with
 * *error set.
 */
int policy_manifest_parse(const char *file_name, const char *json, struct policy_vetted **ret,
			  char **error);
struct policy_vetted *policy_vetted_free(struct policy_vetted *v);
/*
 * The most bytes an object v grants may have (its limits' max_object_bytes, the built-in
 * default when it sets none), or 0 when v holds no grants (a "digests" entry naming a
 * manifest: the manifest's say).
 */
uint64_t policy_vetted_max_object_bytes(const struct policy_vetted *v);

/* Does g grant the system object name ("objects")? */
bool policy_grant_object(const struct policy_grant *g, const char *name);
/*
 * The "digests" entry of g for digest ("sha256:<hex>"), or NULL. It points into the policy g
 * was resolved from, valid while that policy is.
 */
const struct policy_vetted *policy_grant_digest(const struct policy_grant *g, const char *digest);
/*
 * The grant a load of the vetted object v gets, for the user whose ordinary grant is g: v's
 * program, fd, map and helper types, map access, cgroup attach types and per-object limits
 * alone (none of g's), g's quotas (a vetted object counts against the user's own), and
 * source as its only source. g's other grants (other attach targets, shared maps, pinning,
 * load_with_perfmon, test runs) do not apply to it.
 */
int policy_grant_vetted(const struct policy_grant *g, const struct policy_vetted *v,
			const char *source, struct policy_grant **ret);
