/* SPDX-License-Identifier: MIT */
/*
 * The caller's unit, read by the event loop (loop/peer_unit.c) and carried in
 * the job (shared/jobmsg.h) to the worker, which decides with it: the struct,
 * its strings, and its fields as clients see them (hello, policy).
 */
#include "peer_unit_job.h"
#include "common/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void peer_unit_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void peer_unit_done(struct peer_unit *u)
{
	free(u->cgroup);
	free(u->unit);
	free(u->user_unit);
	peer_unit_strv_free(u->slices, u->n_slices);
	peer_unit_strv_free(u->user_slices, u->n_user_slices);
	*u = (struct peer_unit){};
}

int peer_unit_strv_push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(char *));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int json_add_string(json_object *o, const char *key, const char *value)
{
	return value ? json_add(o, key, json_object_new_string(value)) : 0;
}

static int json_add_strv(json_object *o, const char *key, char *const *v, size_t n)
{
	json_object *a;

	if (n == 0)
		return 0;
	a = json_object_new_array();
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (json_append(a, json_object_new_string(v[i])) < 0) {
			json_object_put(a);
			return -ENOMEM;
		}
	return json_add(o, key, a);
}

int peer_unit_to_json(const struct peer_unit *u, json_object *identity)
{
	if (json_add_string(identity, "cgroup", u->cgroup) < 0 ||
	    json_add_string(identity, "unit", u->unit) < 0 ||
	    json_add_string(identity, "user_unit", u->user_unit) < 0 ||
	    json_add_strv(identity, "slices", u->slices, u->n_slices) < 0 ||
	    json_add_strv(identity, "user_slices", u->user_slices, u->n_user_slices) < 0)
		return -ENOMEM;
	return 0;
}

void peer_unit_to_policy_identity(const struct peer_unit *u, struct policy_identity *id)
{
	id->unit = u->unit;
	id->user_unit = u->user_unit;
	id->slices = (const char *const *)u->slices;
	id->n_slices = u->n_slices;
	id->user_slices = (const char *const *)u->user_slices;
	id->n_user_slices = u->n_user_slices;
}
