// SPDX-License-Identifier: MIT
/*
 * Limits: the built-in defaults, the hard ceilings no policy can raise, and
 * parsing a rule's "limits".
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const struct policy_limits default_limits = {
	.max_object_bytes = POLICY_DEFAULT_MAX_OBJECT_BYTES,
	.max_insns_per_program = POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM,
	.max_programs = POLICY_DEFAULT_MAX_PROGRAMS,
	.max_maps = POLICY_DEFAULT_MAX_MAPS,
	.max_map_entries = POLICY_DEFAULT_MAX_MAP_ENTRIES,
	.max_attachments = POLICY_DEFAULT_MAX_ATTACHMENTS,
	.max_named_objects = POLICY_DEFAULT_MAX_NAMED_OBJECTS,
	.max_loaded_programs = POLICY_DEFAULT_MAX_LOADED_PROGRAMS,
	.max_map_memory_bytes = POLICY_DEFAULT_MAX_MAP_MEMORY_BYTES,
	.max_kernel_threads = POLICY_DEFAULT_MAX_KERNEL_THREADS,
	.max_loads_per_minute = POLICY_DEFAULT_MAX_LOADS_PER_MINUTE,
};

const struct limit_field limit_fields[POLICY_N_LIMITS] = {
	{"max_object_bytes", offsetof(struct policy_limits, max_object_bytes),
	 POLICY_HARD_MAX_OBJECT_BYTES},
	{"max_insns_per_program", offsetof(struct policy_limits, max_insns_per_program),
	 POLICY_HARD_MAX_INSNS_PER_PROGRAM},
	{"max_programs", offsetof(struct policy_limits, max_programs), POLICY_HARD_MAX_PROGRAMS},
	{"max_maps", offsetof(struct policy_limits, max_maps), POLICY_HARD_MAX_MAPS},
	{"max_map_entries", offsetof(struct policy_limits, max_map_entries),
	 POLICY_HARD_MAX_MAP_ENTRIES},
	{"max_attachments", offsetof(struct policy_limits, max_attachments),
	 POLICY_HARD_MAX_ATTACHMENTS},
	{"max_named_objects", offsetof(struct policy_limits, max_named_objects),
	 POLICY_HARD_MAX_NAMED_OBJECTS},
	{"max_loaded_programs", offsetof(struct policy_limits, max_loaded_programs),
	 POLICY_HARD_MAX_LOADED_PROGRAMS},
	{"max_map_memory_bytes", offsetof(struct policy_limits, max_map_memory_bytes),
	 POLICY_HARD_MAX_MAP_MEMORY_BYTES},
	{"max_kernel_threads", offsetof(struct policy_limits, max_kernel_threads),
	 POLICY_HARD_MAX_KERNEL_THREADS},
	{"max_loads_per_minute", offsetof(struct policy_limits, max_loads_per_minute),
	 POLICY_HARD_MAX_LOADS_PER_MINUTE},
};

const char *policy_limit_key(const char *key, uint64_t wanted, char *note, size_t note_size)
{
	if (note_size)
		note[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
		if (strcmp(limit_fields[i].key, key) != 0 || wanted <= limit_fields[i].ceiling)
			continue;
		snprintf(note, note_size,
			 " (and over the broker's hard ceiling of %" PRIu64
			 " for %s, which no policy can raise)",
			 limit_fields[i].ceiling, key);
		return "";
	}
	return key;
}

int parse_limits(struct parse_ctx *c, const char *parent, json_object *rule,
		 struct policy_rule *out)
{
	const char *keys[ARRAY_SIZE(limit_fields)];
	char path[JPATH_MAX], kpath[JPATH_MAX];
	json_object *l;
	int r;

	out->limits = default_limits;
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++)
		keys[i] = limit_fields[i].key;
	r = get_section(c, parent, rule, "limits", keys, ARRAY_SIZE(keys), path, &l);
	if (r <= 0)
		return r;

	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
		const struct limit_field *f = &limit_fields[i];
		json_object *v;
		uint64_t value;

		if (!json_object_object_get_ex(l, f->key, &v))
			continue;
		path_key(kpath, path, f->key);
		if (!json_object_is_type(v, json_type_int))
			return parse_fail(c, kpath, "expected a positive integer, got %s",
					  json_type_phrase(json_object_get_type(v)));
		if (json_object_get_int64(v) <= 0)
			return parse_fail(c, kpath, "expected a positive integer, got %s",
					  json_object_to_json_string(v));
		value = json_object_get_uint64(v);
		if (value > f->ceiling)
			return parse_fail(c, kpath,
					  "%" PRIu64 " is over the hard ceiling of %" PRIu64, value,
					  f->ceiling);
		*limit_ptr(&out->limits, f) = value;
	}
	return 0;
}
