// SPDX-License-Identifier: MIT
/*
 * Parsing a rule's "allow": program, map and test-run types, helper classes,
 * map name patterns with their access, pinning, load_with_perfmon (attach
 * targets and shares in allow_attach.c and allow_shared.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "internal.h"

/* A list of program or map types by libbpf name, as a mask of 1 << type. */
struct type_list_kind {
	int (*from_string)(const char *s);
	const char *what; /* "program type" */
	const char *examples; /* for the message about an unknown name */
};

static const struct type_list_kind prog_types_kind = {
	policy_prog_type_from_string, "program type",
	"socket_filter, kprobe, tracepoint, raw_tracepoint, cgroup_skb, sched_cls or xdp"};
static const struct type_list_kind map_types_kind = {
	policy_map_type_from_string, "map type",
	"prog_array, perf_event_array, stack_trace or array_of_maps"};

/* Every type must be in allowed (a rule's program_types, for its program_fds). */
static int parse_type_list(struct parse_ctx *c, const char *path, json_object *arr,
			   const struct type_list_kind *kind, uint64_t allowed, uint64_t *ret)
{
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	uint64_t types = 0;
	int r;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e;
		const char *s;
		int t;

		r = get_element(c, path, arr, i, json_type_string, epath, &e);
		if (r < 0)
			return r;
		s = json_object_get_string(e);
		t = kind->from_string(s);
		if (t < 0)
			return parse_fail(c, epath,
					  "unknown %s \"%s\" (expected a libbpf name such as %s)",
					  kind->what, printable(pbuf, s), kind->examples);
		if (!(allowed & (1ull << t)))
			return parse_fail(c, epath, "%s \"%s\" is not in this rule's program_types",
					  kind->what, s);
		types |= 1ull << t;
	}
	*ret = types;
	return 0;
}

static int parse_helper_classes(struct parse_ctx *c, const char *path, json_object *arr,
				helper_class_mask_t *ret)
{
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	helper_class_mask_t mask = 0;
	int r;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e;
		enum helper_class cls;
		const char *s;

		r = get_element(c, path, arr, i, json_type_string, epath, &e);
		if (r < 0)
			return r;
		s = json_object_get_string(e);
		cls = helper_class_from_string(s);
		if ((int)cls < 0 || cls >= _HELPER_CLASS_MAX || (int)cls >= 64) {
			const char *names[_HELPER_CLASS_MAX];
			char expected[512];
			size_t n = 0;

			for (int k = 0; k < _HELPER_CLASS_MAX; k++) {
				const char *name = helper_class_to_string((enum helper_class)k);

				if (name)
					names[n++] = name;
			}
			join_names(expected, sizeof(expected), names, n);
			return parse_fail(c, epath, "unknown helper class \"%s\" (expected %s)",
					  printable(pbuf, s), expected);
		}
		mask |= HELPER_CLASS_BIT(cls);
	}
	*ret = mask;
	return 0;
}

static int parse_map_pattern(struct parse_ctx *c, const char *path, json_object *o,
			     struct policy_map_pattern *ret)
{
	static const char *const keys[] = {"name", "access"};
	char npath[JPATH_MAX], apath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *name, *access;
	enum map_access a;
	char *glob;
	int r;

	r = expect_object(c, path, o, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	path_key(npath, path, "name");
	path_key(apath, path, "access");
	if (!json_object_object_get_ex(o, "name", &name))
		return parse_fail(c, path, "missing key \"name\"");
	if (!json_object_object_get_ex(o, "access", &access))
		return parse_fail(c, path, "missing key \"access\"");
	r = expect_type(c, npath, name, json_type_string);
	if (r < 0)
		return r;
	if (!*json_object_get_string(name))
		return parse_fail(c, npath, "empty map name pattern");
	r = expect_type(c, apath, access, json_type_string);
	if (r < 0)
		return r;
	if (map_access_from_string(json_object_get_string(access), &a) < 0)
		return parse_fail(c, apath,
				  "unknown access \"%s\" (expected rw, ro, wo, consume or none)",
				  printable(pbuf, json_object_get_string(access)));

	glob = strdup(json_object_get_string(name));
	if (!glob)
		return -ENOMEM;
	ret->glob = glob;
	ret->access = a;
	return 0;
}

int parse_allow(struct parse_ctx *c, const char *parent, json_object *rule, struct policy_rule *out)
{
	static const char *const keys[] = {"program_types", "program_fds",    "test_run_types",
					   "map_types",	    "helper_classes", "maps",
					   "pinning",	    "maps_of_maps",   "load_with_perfmon",
					   "attach",	    "shared",	      "objects",
					   "digests"};
	char path[JPATH_MAX];
	json_object *a;
	int r;

	r = get_section(c, parent, rule, "allow", keys, ARRAY_SIZE(keys), path, &a);
	if (r <= 0)
		return r;
	return parse_allow_keys(c, path, a, out);
}

int parse_allow_keys(struct parse_ctx *c, const char *path, json_object *a, struct policy_rule *out)
{
	char kpath[JPATH_MAX], epath[JPATH_MAX];
	bool maps_of_maps = false;
	json_object *v;
	int r;

	/* program_types before program_fds, whatever the order in the file. */
	r = get_array(c, path, a, "program_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, UINT64_MAX, &out->program_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "program_fds", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, out->program_types,
				    &out->program_fd_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "test_run_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, UINT64_MAX,
				    &out->test_run_types);
		if (r < 0)
			return r;
	}
	r = parse_attach(c, path, a, &out->attach);
	if (r < 0)
		return r;
	r = get_array(c, path, a, "shared", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_shared(c, kpath, v, out);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "map_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &map_types_kind, UINT64_MAX, &out->map_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "helper_classes", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_helper_classes(c, kpath, v, &out->helper_classes);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "maps", &v, kpath);
	if (r < 0)
		return r;
	if (v && json_object_array_length(v) > 0) {
		size_t n = json_object_array_length(v);

		out->maps = calloc(n, sizeof(*out->maps));
		if (!out->maps)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			path_index(epath, kpath, i);
			r = parse_map_pattern(c, epath, json_object_array_get_idx(v, i),
					      &out->maps[out->n_maps]);
			if (r < 0)
				return r;
			out->n_maps++;
		}
	}
	r = get_bool(c, path, a, "maps_of_maps", &maps_of_maps);
	if (r < 0)
		return r;
	/* The older spelling of naming both types of maps of maps. */
	if (maps_of_maps)
		out->map_types |= MAPS_OF_MAPS_TYPES;
	r = parse_vetted_keys(c, path, a, out);
	if (r < 0)
		return r;
	r = get_bool(c, path, a, "load_with_perfmon", &out->load_with_perfmon);
	if (r < 0)
		return r;
	return get_bool(c, path, a, "pinning", &out->pinning);
}
