/* SPDX-License-Identifier: MIT */
/*
 * What the policy's own files share and its callers never see: a parsed rule,
 * the parsing context with its messages and typed getters, the parsers of a
 * rule's sections, and the table of limits.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <bpf/libbpf.h>

#include "common/error.h"
#include "common/json.h"
#include "common/macro.h"
#include "policy.h"

/* (uid_t)-1 and (gid_t)-1 mean "no id", they are never matched. */
#define POLICY_MAX_ID 4294967294u
/* Bit masks of program types, attach types and helper classes are 64 bits wide. */
#define PROG_TYPE_BITS 64
#define MAP_TYPE_BITS 64
#define MAPS_OF_MAPS_TYPES                                                                         \
	((1ull << BPF_MAP_TYPE_ARRAY_OF_MAPS) | (1ull << BPF_MAP_TYPE_HASH_OF_MAPS))
/* Room for a JSON path; components are known keys and indices, so it never fills up. */
#define JPATH_MAX 192
/* At most this much of a name from a file is repeated in a message. */
#define PRINTABLE_MAX 64
#define PRINTABLE_BUF (2 * PRINTABLE_MAX + 4)

struct uid_range {
	uid_t first, last; /* inclusive */
};

struct policy_rule {
	char *source; /* "FILE:rules[N]" */
	struct uid_range *uids; /* "uids" and resolved "users" */
	size_t n_uids;
	gid_t *gids; /* resolved "groups" */
	size_t n_gids;
	bool has_principal; /* "uids", "users" or "groups" listed (resolved or not) */
	/* systemd unit and slice patterns; each list given is one more condition */
	char **units, **user_units, **slices, **user_slices;
	size_t n_units, n_user_units, n_slices, n_user_slices;
	uint64_t program_types;
	uint64_t program_fd_types;
	uint64_t test_run_types;
	uint64_t map_types; /* named in "map_types", and maps of maps from "maps_of_maps" */
	helper_class_mask_t helper_classes;
	bool pinning;
	bool load_with_perfmon;
	struct policy_map_pattern *maps;
	size_t n_maps;
	struct policy_attach attach;
	struct policy_share_rule *shared;
	size_t n_shared;
	struct policy_limits limits; /* defaults filled in for omitted limits */
	/* Vetted objects (vetted.h): system objects by name, digests with their grants. */
	char **objects;
	size_t n_objects;
	struct policy_vetted *digests;
	size_t n_digests;
};

struct policy {
	struct policy_rule *rules;
	size_t n_rules;
};

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline const char *name_or_unnamed(const char *name)
{
	return name ? name : "(unnamed)";
}

/* ---- Rules (rules.c) ---- */

void attach_done(struct policy_attach *a);
void shared_free(struct policy_share_rule *v, size_t n);
void rule_done(struct policy_rule *r);

/* ---- Messages and typed getters (parse_ctx.c) ---- */

struct parse_ctx {
	const char *file;
	policy_warn_fn warn;
	void *userdata;
	char **error;
};

/* A name taken from a file, shortened, with quotes escaped and control characters replaced. */
const char *printable(char buf[static PRINTABLE_BUF], const char *s);
/* "a, b, c or d" */
void join_names(char *buf, size_t size, const char *const *names, size_t n);
_printf_(3, 4) int parse_fail(struct parse_ctx *c, const char *path, const char *fmt, ...);
_printf_(3, 4) int parse_warn(struct parse_ctx *c, const char *path, const char *fmt, ...);
void path_key(char buf[static JPATH_MAX], const char *parent, const char *key);
void path_index(char buf[static JPATH_MAX], const char *parent, size_t i);
const char *json_type_phrase(enum json_type t);
int expect_type(struct parse_ctx *c, const char *path, json_object *o, enum json_type t);
/* obj must be an object whose keys are all among keys. */
int expect_object(struct parse_ctx *c, const char *path, json_object *obj, const char *const *keys,
		  size_t n_keys);
/* Element i of arr, which must be of type t, with its path in epath for messages about it. */
int get_element(struct parse_ctx *c, const char *path, json_object *arr, size_t i, enum json_type t,
		char epath[static JPATH_MAX], json_object **ret);
/* A member that must be an array if present; *ret is NULL when it is absent. */
int get_array(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
	      json_object **ret, char path[static JPATH_MAX]);
/*
 * An optional object-valued key of obj: 0 when absent, 1 with *ret when
 * present, negative after a parse error (wrong type, unknown keys).
 */
int get_section(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
		const char *const *keys, size_t n_keys, char path[static JPATH_MAX],
		json_object **ret);
/* An optional boolean key of obj, left as it is when absent. */
int get_bool(struct parse_ctx *c, const char *parent, json_object *obj, const char *key, bool *ret);
/* An array of name patterns, each checked with valid(). */
int parse_name_patterns(struct parse_ctx *c, const char *path, json_object *arr,
			bool (*valid)(const char *, bool), const char *what, char ***ret,
			size_t *ret_n);

/* ---- Strict JSON (strictjson.c) ---- */

int parse_json_text(struct parse_ctx *c, const char *json, json_object **ret);
int check_json_text(struct parse_ctx *c, const char *s);
/*
 * A whole file's text (at most max_bytes): parsed and checked strictly, and an object at
 * the top level. 0 and *ret, or the error's negative errno.
 */
int parse_json_file(struct parse_ctx *c, const char *json, size_t max_bytes, json_object **ret);

/* ---- A rule's sections (match.c, allow*.c, policy_limits.c) ---- */

/* Decimal digits only, 0..POLICY_MAX_ID. */
int parse_id(const char *s, size_t len, uint32_t *ret);
/*
 * Resolve one user or group entry. 1 and *ret when found; 0 (after a warning)
 * when the entry never matches; negative errno on errors. Errors name the
 * entry's path, warnings the list's (the name identifies the entry).
 */
int parse_name_entry(struct parse_ctx *c, const char *list_path, const char *path, json_object *o,
		     bool group, uint32_t *ret);
int parse_match(struct parse_ctx *c, const char *parent, json_object *rule,
		struct policy_rule *out);
int parse_allow(struct parse_ctx *c, const char *parent, json_object *rule,
		struct policy_rule *out);
/* The members of an "allow" object a at path (its keys already checked). */
int parse_allow_keys(struct parse_ctx *c, const char *path, json_object *a,
		     struct policy_rule *out);
int parse_attach(struct parse_ctx *c, const char *parent, json_object *allow,
		 struct policy_attach *out);
/*
 * "shared": [{"owner": USER-or-UID, "object": GLOB, "map": GLOB, "access": MODE}].
 * An owner that doesn't exist never matches (warning), as in "match".
 */
int parse_shared(struct parse_ctx *c, const char *path, json_object *arr, struct policy_rule *out);
int parse_limits(struct parse_ctx *c, const char *parent, json_object *rule,
		 struct policy_rule *out);
/* "objects" and "digests" of a rule's "allow" (vetted.c). */
int parse_vetted_keys(struct parse_ctx *c, const char *path, json_object *allow,
		      struct policy_rule *out);
void vetted_list_free(struct policy_vetted *v, size_t n);

/* The limits by key, where they are in struct policy_limits, and their hard ceilings. */
#define POLICY_N_LIMITS 11
struct limit_field {
	const char *key;
	size_t offset;
	uint64_t ceiling;
};
extern const struct limit_field limit_fields[POLICY_N_LIMITS];

static inline uint64_t *limit_ptr(struct policy_limits *l, const struct limit_field *f)
{
	return (uint64_t *)((char *)l + f->offset);
}

static inline uint64_t limit_get(const struct policy_limits *l, const struct limit_field *f)
{
	return *(const uint64_t *)((const char *)l + f->offset);
}

/* ---- Decisions (decide_map.c) ---- */

int decide_map(const struct policy_grant *g, const struct object_map *map, struct verdict_item *it);
