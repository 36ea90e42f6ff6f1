// SPDX-License-Identifier: MIT
/*
 * Parsing "allow.attach": where the rule's principals may attach programs
 * (cgroup attach types, tracepoints, raw tracepoints, interfaces, uprobes).
 */
#include "attach_type.h"
#include "internal.h"

/* "cgroups": true (the default set) or a list of cgroup attach types by libbpf name. */
static int parse_cgroup_attach(struct parse_ctx *c, const char *parent, json_object *attach,
			       uint64_t *ret)
{
	char path[JPATH_MAX], epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *v;
	uint64_t mask = 0;
	int r;

	path_key(path, parent, "cgroups");
	if (!json_object_object_get_ex(attach, "cgroups", &v))
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		*ret = json_object_get_boolean(v) ? POLICY_CGROUP_ATTACH_DEFAULT : 0;
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return parse_fail(c, path, "expected true, false or a list of attach types, got %s",
				  json_type_phrase(json_object_get_type(v)));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e;
		int t;

		r = get_element(c, path, v, i, json_type_string, epath, &e);
		if (r < 0)
			return r;
		t = attach_type_from_string(json_object_get_string(e));
		if (t < 0 || !attach_type_is_cgroup(t))
			return parse_fail(
				c, epath,
				"\"%s\" is not a cgroup attach type (such as "
				"cgroup_inet_egress, cgroup_device or cgroup_inet4_connect)",
				printable(pbuf, json_object_get_string(e)));
		mask |= 1ull << t;
	}
	*ret = mask;
	return 0;
}

int parse_attach(struct parse_ctx *c, const char *parent, json_object *allow,
		 struct policy_attach *out)
{
	static const char *const keys[] = {"cgroups",	 "tracepoints",	    "raw_tracepoints",
					   "interfaces", "host_interfaces", "uprobes"};
	char path[JPATH_MAX], kpath[JPATH_MAX];
	json_object *a, *v;
	int r;

	r = get_section(c, parent, allow, "attach", keys, ARRAY_SIZE(keys), path, &a);
	if (r <= 0)
		return r;
	r = parse_cgroup_attach(c, path, a, &out->cgroup_attach_types);
	if (r < 0)
		return r;
	r = get_array(c, path, a, "tracepoints", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_tracepoint_name_is_valid,
					"tracepoint (CATEGORY:NAME)", &out->tracepoints,
					&out->n_tracepoints);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "raw_tracepoints", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_raw_tracepoint_name_is_valid,
					"raw tracepoint", &out->raw_tracepoints,
					&out->n_raw_tracepoints);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "interfaces", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_interface_name_is_valid,
					"network interface", &out->interfaces, &out->n_interfaces);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "host_interfaces", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_interface_name_is_valid,
					"network interface", &out->host_interfaces,
					&out->n_host_interfaces);
		if (r < 0)
			return r;
	}
	return get_bool(c, path, a, "uprobes", &out->uprobes);
}
