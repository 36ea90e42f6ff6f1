/* SPDX-License-Identifier: MIT */
/*
 * The caller's unit as it travels in the job from the event loop (which reads
 * it, loop/peer_unit.c) to the worker (which decides with it): the JSON
 * encoding and decoding, in both executables.
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

static int string_from_json(json_object *o, const char *key, char **ret)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	*ret = strdup(json_object_get_string(v));
	return *ret ? 0 : -ENOMEM;
}

static int strv_from_json(json_object *o, const char *key, char ***ret, size_t *ret_n)
{
	json_object *a;
	int r;

	if (!json_object_object_get_ex(o, key, &a))
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return -EINVAL;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return -EINVAL;
		r = peer_unit_strv_push(ret, ret_n, json_object_get_string(e));
		if (r < 0)
			return r;
	}
	return 0;
}

int peer_unit_from_json(json_object *identity, struct peer_unit *ret)
{
	struct peer_unit u = {};
	int r;

	r = string_from_json(identity, "cgroup", &u.cgroup);
	if (r >= 0)
		r = string_from_json(identity, "unit", &u.unit);
	if (r >= 0)
		r = string_from_json(identity, "user_unit", &u.user_unit);
	if (r >= 0)
		r = strv_from_json(identity, "slices", &u.slices, &u.n_slices);
	if (r >= 0)
		r = strv_from_json(identity, "user_slices", &u.user_slices, &u.n_user_slices);
	if (r < 0) {
		peer_unit_done(&u);
		return r;
	}
	*ret = u;
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
