// SPDX-License-Identifier: MIT
/*
 * Questions asked of a grant: may this program type load, get its fd, call
 * this helper, attach here; which access does this map get, this share.
 */
#include <fnmatch.h>

#include "internal.h"
#include "policy.h"

enum map_access policy_grant_map_access(const struct policy_grant *g, const char *map_name)
{
	unsigned int access = MAP_ACCESS_NONE;

	if (!g || !g->matched || !map_name)
		return MAP_ACCESS_NONE;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		const struct policy_grant_maps *m = &g->map_rules[i];

		for (size_t k = 0; k < m->n_patterns; k++) {
			if (fnmatch(m->patterns[k].glob, map_name, 0) == 0) {
				access |= m->patterns[k].access;
				break;
			}
		}
	}
	return (enum map_access)access;
}

bool policy_grant_prog_type(const struct policy_grant *g, int prog_type)
{
	if (!g || !g->matched || prog_type < 0 || prog_type >= PROG_TYPE_BITS)
		return false;
	return g->program_types & (1ull << prog_type);
}

bool policy_grant_map_type(const struct policy_grant *g, int map_type)
{
	if (!g || map_type < 0 || map_type >= MAP_TYPE_BITS)
		return false;
	return g->map_types & (1ull << map_type);
}

bool policy_prog_runs_in_callers_task(const struct policy_grant *g, int prog_type)
{
	/*
	 * A kprobe-type program is attached by the broker only as a uprobe on
	 * one of the caller's own processes (attach_uprobe()); with its fd the
	 * caller could attach it anywhere the kernel lets them. Nothing else
	 * qualifies: tracing programs run in any task, networking and cgroup
	 * hooks in whatever task the kernel is in (softirqs included), and
	 * test runs in the broker's worker, as root.
	 */
	return prog_type == BPF_PROG_TYPE_KPROBE && !policy_grant_prog_fd(g, prog_type);
}

bool policy_grant_helper(const struct policy_grant *g, int prog_type, int helper_id)
{
	enum helper_class cls = helper_classify(helper_id), any;

	if ((int)cls < 0 || (int)cls >= 64)
		return false;
	any = helper_class_any_task(cls);
	if ((int)any >= 0 && (g->helper_classes & HELPER_CLASS_BIT(any)))
		return true;
	if (!(g->helper_classes & HELPER_CLASS_BIT(cls)))
		return false;
	return (int)any < 0 || policy_prog_runs_in_callers_task(g, prog_type);
}

bool policy_grant_prog_fd(const struct policy_grant *g, int prog_type)
{
	/* A vetted object's programs are never test-run, and a program fd is a test run
	 * (BPF_PROG_TEST_RUN needs no capability since Linux 6.5): none, whatever the type. */
	if (g->vetted || !policy_grant_prog_type(g, prog_type))
		return false;
	return (g->program_fd_types | POLICY_ALWAYS_FD_TYPES) & (1ull << prog_type);
}

bool policy_grant_test_run(const struct policy_grant *g, int prog_type)
{
	if (policy_grant_prog_type(g, prog_type))
		return true;
	if (!g || !g->matched || prog_type < 0 || prog_type >= PROG_TYPE_BITS)
		return false;
	return g->test_run_types & (1ull << prog_type);
}

bool policy_grant_attach_cgroup(const struct policy_grant *g, int attach_type)
{
	if (!g || !g->matched || attach_type < 0 || attach_type >= 64)
		return false;
	return g->attach.cgroup_attach_types & (1ull << attach_type);
}

static bool any_fnmatch(char *const *patterns, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(patterns[i], s, 0) == 0)
			return true;
	return false;
}

bool policy_grant_attach_tracepoint(const struct policy_grant *g, const char *category_name)
{
	if (!g || !g->matched || !policy_tracepoint_name_is_valid(category_name, false))
		return false;
	return any_fnmatch(g->attach.tracepoints, g->attach.n_tracepoints, category_name);
}

bool policy_grant_attach_raw_tracepoint(const struct policy_grant *g, const char *name)
{
	if (!g || !g->matched || !policy_raw_tracepoint_name_is_valid(name, false))
		return false;
	return any_fnmatch(g->attach.raw_tracepoints, g->attach.n_raw_tracepoints, name);
}

bool policy_grant_attach_interface(const struct policy_grant *g, const char *ifname)
{
	if (!g || !g->matched || !policy_interface_name_is_valid(ifname, false))
		return false;
	return any_fnmatch(g->attach.interfaces, g->attach.n_interfaces, ifname);
}

bool policy_grant_attach_host_interface(const struct policy_grant *g, const char *ifname)
{
	if (!g || !g->matched || !policy_interface_name_is_valid(ifname, false))
		return false;
	return any_fnmatch(g->attach.host_interfaces, g->attach.n_host_interfaces, ifname);
}

bool policy_grant_attach_uprobes(const struct policy_grant *g)
{
	return g && g->matched && g->attach.uprobes;
}

enum map_access policy_grant_shared_access(const struct policy_grant *g, uid_t owner,
					   const char *object, const char *map)
{
	unsigned int access = MAP_ACCESS_NONE;

	if (!g || !g->matched || !object || !map)
		return MAP_ACCESS_NONE;
	for (size_t i = 0; i < g->n_shared; i++) {
		const struct policy_share_rule *sr = &g->shared[i];

		if (sr->owner == owner && fnmatch(sr->object, object, 0) == 0 &&
		    fnmatch(sr->map, map, 0) == 0)
			access |= sr->access;
	}
	return (enum map_access)access;
}
