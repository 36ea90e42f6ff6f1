// SPDX-License-Identifier: MIT
/*
 * Resolving one identity's effective grant: which rules match it (principal,
 * units, slices) and their union (limits: the largest).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "policy.h"
#include "vetted.h"

static bool rule_matches_principal(const struct policy_rule *r, const struct policy_identity *id)
{
	for (size_t i = 0; i < r->n_uids; i++)
		if (id->uid >= r->uids[i].first && id->uid <= r->uids[i].last)
			return true;
	for (size_t i = 0; i < r->n_gids; i++) {
		if (r->gids[i] == id->gid)
			return true;
		for (size_t k = 0; k < id->n_groups; k++)
			if (r->gids[i] == id->groups[k])
				return true;
	}
	return false;
}

/* Unit names hold '\' as a character ("\x2d"), never as fnmatch's escape. */
static bool any_unit_match(char *const *patterns, size_t n, const char *const *names,
			   size_t n_names)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n_names; k++)
			if (names[k] && fnmatch(patterns[i], names[k], FNM_NOESCAPE) == 0)
				return true;
	return false;
}

static bool rule_has_unit_condition(const struct policy_rule *r)
{
	return r->n_units + r->n_user_units + r->n_slices + r->n_user_slices > 0;
}

/*
 * Every condition the rule lists must hold: the principal (any of its uids,
 * users, groups), and each of units, user_units, slices, user_slices (any of
 * its patterns). A rule without any condition matches nobody.
 */
static bool rule_matches(const struct policy_rule *r, const struct policy_identity *id)
{
	if (!r->has_principal && !rule_has_unit_condition(r))
		return false;
	if (r->has_principal && !rule_matches_principal(r, id))
		return false;
	if (r->n_units && !any_unit_match(r->units, r->n_units, &id->unit, 1))
		return false;
	if (r->n_user_units && !any_unit_match(r->user_units, r->n_user_units, &id->user_unit, 1))
		return false;
	if (r->n_slices && !any_unit_match(r->slices, r->n_slices, id->slices, id->n_slices))
		return false;
	if (r->n_user_slices &&
	    !any_unit_match(r->user_slices, r->n_user_slices, id->user_slices, id->n_user_slices))
		return false;
	return true;
}

bool policy_uses_units(const struct policy *p)
{
	for (size_t i = 0; p && i < p->n_rules; i++)
		if (rule_has_unit_condition(&p->rules[i]))
			return true;
	return false;
}

struct policy_grant *policy_grant_free(struct policy_grant *g)
{
	if (!g)
		return NULL;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		for (size_t k = 0; k < g->map_rules[i].n_patterns; k++)
			free(g->map_rules[i].patterns[k].glob);
		free(g->map_rules[i].patterns);
	}
	free(g->map_rules);
	for (size_t i = 0; i < g->n_sources; i++)
		free(g->sources[i]);
	free(g->sources);
	attach_done(&g->attach);
	shared_free(g->shared, g->n_shared);
	free(g->objects);
	free(g->digests);
	free(g);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct policy_grant *, policy_grant_free);

static int strv_append(char ***v, size_t *n, char *const *add, size_t n_add)
{
	char **nv;

	if (n_add == 0)
		return 0;
	nv = reallocarray(*v, *n + n_add, sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	for (size_t i = 0; i < n_add; i++) {
		nv[*n] = strdup(add[i]);
		if (!nv[*n])
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

static int shared_append(struct policy_grant *g, const struct policy_rule *r)
{
	struct policy_share_rule *nv;

	if (r->n_shared == 0)
		return 0;
	nv = reallocarray(g->shared, g->n_shared + r->n_shared, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	g->shared = nv;
	for (size_t i = 0; i < r->n_shared; i++) {
		struct policy_share_rule *d = &nv[g->n_shared];

		*d = r->shared[i];
		d->object = strdup(r->shared[i].object);
		d->map = strdup(r->shared[i].map);
		if (!d->object || !d->map) {
			free(d->object);
			free(d->map);
			return -ENOMEM;
		}
		g->n_shared++;
	}
	return 0;
}

/* Vetted objects: pointers into the policy (grant.h), so nothing to copy. */
static int vetted_append(struct policy_grant *g, const struct policy_rule *r)
{
	if (r->n_objects) {
		const char **nv =
			reallocarray(g->objects, g->n_objects + r->n_objects, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->objects = nv;
		for (size_t i = 0; i < r->n_objects; i++)
			nv[g->n_objects++] = r->objects[i];
	}
	if (r->n_digests) {
		const struct policy_vetted **nv =
			reallocarray(g->digests, g->n_digests + r->n_digests, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->digests = nv;
		for (size_t i = 0; i < r->n_digests; i++)
			nv[g->n_digests++] = &r->digests[i];
	}
	return 0;
}

static int grant_add_rule(struct policy_grant *g, const struct policy_rule *r)
{
	struct policy_grant_maps *m = &g->map_rules[g->n_map_rules];
	int k;

	if (!g->matched) {
		g->matched = true;
		g->limits = r->limits;
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
			const struct limit_field *f = &limit_fields[i];
			uint64_t *v = limit_ptr(&g->limits, f);

			if (limit_get(&r->limits, f) > *v)
				*v = limit_get(&r->limits, f);
		}
	}
	g->program_types |= r->program_types;
	g->program_fd_types |= r->program_fd_types;
	g->test_run_types |= r->test_run_types;
	g->map_types |= r->map_types;
	g->helper_classes |= r->helper_classes;
	g->pinning = g->pinning || r->pinning;
	g->load_with_perfmon = g->load_with_perfmon || r->load_with_perfmon;
	g->attach.cgroup_attach_types |= r->attach.cgroup_attach_types;
	g->attach.uprobes = g->attach.uprobes || r->attach.uprobes;
	k = strv_append(&g->attach.tracepoints, &g->attach.n_tracepoints, r->attach.tracepoints,
			r->attach.n_tracepoints);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.raw_tracepoints, &g->attach.n_raw_tracepoints,
			r->attach.raw_tracepoints, r->attach.n_raw_tracepoints);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.interfaces, &g->attach.n_interfaces, r->attach.interfaces,
			r->attach.n_interfaces);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.host_interfaces, &g->attach.n_host_interfaces,
			r->attach.host_interfaces, r->attach.n_host_interfaces);
	if (k < 0)
		return k;
	k = shared_append(g, r);
	if (k < 0)
		return k;
	k = vetted_append(g, r);
	if (k < 0)
		return k;

	g->sources[g->n_sources] = strdup(r->source);
	if (!g->sources[g->n_sources])
		return -ENOMEM;
	g->n_sources++;

	*m = (struct policy_grant_maps){};
	g->n_map_rules++;
	if (r->n_maps == 0)
		return 0;
	m->patterns = calloc(r->n_maps, sizeof(*m->patterns));
	if (!m->patterns)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_maps; i++) {
		m->patterns[i].glob = strdup(r->maps[i].glob);
		if (!m->patterns[i].glob)
			return -ENOMEM;
		m->patterns[i].access = r->maps[i].access;
		m->n_patterns++;
	}
	return 0;
}

int policy_resolve(const struct policy *p, const struct policy_identity *id,
		   struct policy_grant **ret)
{
	_cleanup_(policy_grant_freep) struct policy_grant *g = NULL;
	size_t n = 0;
	int r;

	if (!id || !ret)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->uid = id->uid;

	for (size_t i = 0; p && i < p->n_rules; i++)
		if (rule_matches(&p->rules[i], id))
			n++;
	if (n > 0) {
		g->map_rules = calloc(n, sizeof(*g->map_rules));
		g->sources = calloc(n, sizeof(*g->sources));
		if (!g->map_rules || !g->sources)
			return -ENOMEM;
	}
	for (size_t i = 0; p && i < p->n_rules; i++) {
		if (!rule_matches(&p->rules[i], id))
			continue;
		r = grant_add_rule(g, &p->rules[i]);
		if (r < 0)
			return r;
	}
	if (g->matched) {
		g->program_fd_types |= POLICY_ALWAYS_FD_TYPES & g->program_types;
		g->map_types |= POLICY_DEFAULT_MAP_TYPES;
	}

	*ret = TAKE_PTR(g);
	return 0;
}
