// SPDX-License-Identifier: MIT
/* A grant as JSON, as the "policy" method answers it (`bpfctl policy`). */
#include <errno.h>

#include "attach_type.h"
#include "common/macro.h"
#include "internal.h"
#include "vetted.h"
#include "policy.h"

/* The names of the types in mask (bit 1 << type), by name(type) (NULL: left out). */
static json_object *types_to_json(uint64_t mask, const char *(*name)(int type))
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int t = 0; t < 64; t++) {
		const char *n = (mask & (1ull << t)) ? name(t) : NULL;

		if (n && json_append(arr, json_object_new_string(n)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *helper_classes_to_json(helper_class_mask_t mask)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int c = 0; c < _HELPER_CLASS_MAX && c < 64; c++) {
		const char *name;

		if (!(mask & HELPER_CLASS_BIT(c)))
			continue;
		name = helper_class_to_string((enum helper_class)c);
		if (!name)
			continue;
		if (json_append(arr, json_object_new_string(name)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *map_rules_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		_cleanup_json_ json_object *patterns = json_object_new_array();

		if (!patterns)
			return NULL;
		for (size_t k = 0; k < g->map_rules[i].n_patterns; k++) {
			const struct policy_map_pattern *pat = &g->map_rules[i].patterns[k];
			_cleanup_json_ json_object *o = json_object_new_object();

			if (!o || json_add(o, "name", json_object_new_string(pat->glob)) < 0 ||
			    json_add(o, "access",
				     json_object_new_string(map_access_to_string(pat->access))) < 0)
				return NULL;
			if (json_append(patterns, TAKE_PTR(o)) < 0)
				return NULL;
		}
		if (json_append(arr, TAKE_PTR(patterns)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *strv_to_json(char *const *v, size_t n)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_append(arr, json_object_new_string(v[i])) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static json_object *cgroup_attach_to_json(uint64_t mask)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int t = 0; t < 64; t++)
		if ((mask & (1ull << t)) &&
		    json_append(arr, json_object_new_string(attach_type_to_string(t) ?: "?")) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static json_object *attach_to_json(const struct policy_attach *a)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (!o || json_add(o, "cgroups", cgroup_attach_to_json(a->cgroup_attach_types)) < 0 ||
	    json_add(o, "tracepoints", strv_to_json(a->tracepoints, a->n_tracepoints)) < 0 ||
	    json_add(o, "raw_tracepoints", strv_to_json(a->raw_tracepoints, a->n_raw_tracepoints)) <
		    0 ||
	    json_add(o, "interfaces", strv_to_json(a->interfaces, a->n_interfaces)) < 0 ||
	    json_add(o, "host_interfaces", strv_to_json(a->host_interfaces, a->n_host_interfaces)) <
		    0 ||
	    json_add(o, "uprobes", json_object_new_boolean(a->uprobes)) < 0)
		return NULL;
	return TAKE_PTR(o);
}

static json_object *shared_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < g->n_shared; i++) {
		const struct policy_share_rule *sr = &g->shared[i];
		_cleanup_json_ json_object *o = json_object_new_object();

		if (!o || json_add(o, "owner", json_object_new_int64(sr->owner)) < 0 ||
		    json_add(o, "object", json_object_new_string(sr->object)) < 0 ||
		    json_add(o, "map", json_object_new_string(sr->map)) < 0 ||
		    json_add(o, "access",
			     json_object_new_string(map_access_to_string(sr->access))) < 0 ||
		    json_append(arr, TAKE_PTR(o)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

/* "objects": the system objects by name; "digests": the digests (their grants are the policy's). */
static json_object *vetted_to_json(const struct policy_grant *g, bool digests)
{
	_cleanup_json_ json_object *arr = json_object_new_array();
	size_t n = digests ? g->n_digests : g->n_objects;

	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_append(arr, json_object_new_string(digests ? g->digests[i]->digest
								    : g->objects[i])) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

json_object *policy_grant_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *o = NULL, *sources = NULL, *limits = NULL;

	if (!g)
		return NULL;
	o = json_object_new_object();
	sources = json_object_new_array();
	limits = json_object_new_object();
	if (!o || !sources || !limits)
		return NULL;
	for (size_t i = 0; i < g->n_sources; i++)
		if (json_append(sources, json_object_new_string(g->sources[i])) < 0)
			return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++)
		if (json_add(limits, limit_fields[i].key,
			     json_object_new_int64(
				     (int64_t)limit_get(&g->limits, &limit_fields[i]))) < 0)
			return NULL;

	if (json_add(o, "matched", json_object_new_boolean(g->matched)) < 0 ||
	    json_add(o, "rules", TAKE_PTR(sources)) < 0 ||
	    json_add(o, "program_types",
		     types_to_json(g->program_types, policy_prog_type_to_string)) < 0 ||
	    json_add(
		    o, "program_fds",
		    types_to_json(g->program_types & (g->program_fd_types | POLICY_ALWAYS_FD_TYPES),
				  policy_prog_type_to_string)) < 0 ||
	    json_add(o, "test_run_types",
		     types_to_json(g->test_run_types & ~g->program_types,
				   policy_prog_type_to_string)) < 0 ||
	    json_add(o, "map_types", types_to_json(g->map_types, policy_map_type_to_string)) < 0 ||
	    json_add(o, "helper_classes", helper_classes_to_json(g->helper_classes)) < 0 ||
	    json_add(o, "attach", attach_to_json(&g->attach)) < 0 ||
	    json_add(o, "shared", shared_to_json(g)) < 0 ||
	    json_add(o, "pinning", json_object_new_boolean(g->pinning)) < 0 ||
	    json_add(o, "maps_of_maps",
		     json_object_new_boolean((g->map_types & MAPS_OF_MAPS_TYPES) != 0)) < 0 ||
	    json_add(o, "load_with_perfmon", json_object_new_boolean(g->load_with_perfmon)) < 0 ||
	    json_add(o, "maps", map_rules_to_json(g)) < 0 ||
	    json_add(o, "limits", TAKE_PTR(limits)) < 0 ||
	    json_add(o, "objects", vetted_to_json(g, false)) < 0 ||
	    json_add(o, "digests", vetted_to_json(g, true)) < 0)
		return NULL;
	return TAKE_PTR(o);
}
