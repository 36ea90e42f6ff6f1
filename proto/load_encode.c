/* SPDX-License-Identifier: MIT */
/* The load request encoded as JSON params, and freed. */
#include "proto.h"

#include <stdlib.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/macro.h"

json_object *proto_load_request_encode(const struct proto_load_request *r)
{
	int failed = 0; /* any member not added: the request is not sent short of it */
	json_object *o = json_object_new_object();
	json_object *a;

	if (!o)
		return NULL;
	if (r->system_object)
		failed |= json_add(o, "system_object", json_object_new_string(r->system_object));
	else
		failed |= json_add(o, "object_fd", json_object_new_int((int)r->object_fd));
	if (r->object_name)
		failed |= json_add(o, "object_name", json_object_new_string(r->object_name));
	if (r->check_only)
		failed |= json_add(o, "check_only", json_object_new_boolean(true));
	if (r->libbpf_log)
		failed |= json_add(o, "libbpf_log", json_object_new_boolean(true));
	if (r->name)
		failed |= json_add(o, "name", json_object_new_string(r->name));
	if (r->n_shares) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_shares; i++) {
			const struct proto_share *sh = &r->shares[i];
			json_object *e = json_object_new_object();

			failed |= json_add(e, "map", json_object_new_string(sh->map));
			if (sh->user)
				failed |= json_add(e, "user", json_object_new_string(sh->user));
			if (sh->group)
				failed |= json_add(e, "group", json_object_new_string(sh->group));
			failed |= json_add(e, "access", json_object_new_string(sh->access));
			failed |= json_append(a, e);
		}
		failed |= json_add(o, "shares", a);
	}
	if (r->n_globals) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_globals; i++) {
			json_object *g = json_object_new_object();
			_cleanup_free_ char *hex =
				hex_encode(r->globals[i].value, r->globals[i].size);

			failed |= json_add(g, "name", json_object_new_string(r->globals[i].name));
			failed |= json_add(g, "value", hex ? json_object_new_string(hex) : NULL);
			failed |= json_append(a, g);
		}
		failed |= json_add(o, "globals", a);
	}
	if (r->n_map_sizes) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_map_sizes; i++) {
			json_object *m = json_object_new_object();

			failed |= json_add(m, "name", json_object_new_string(r->map_sizes[i].name));
			failed |= json_add(m, "max_entries",
					   json_object_new_int64(r->map_sizes[i].max_entries));
			failed |= json_append(a, m);
		}
		failed |= json_add(o, "map_sizes", a);
	}
	if (r->n_programs) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_programs; i++) {
			json_object *p = json_object_new_object();

			failed |= json_add(p, "name", json_object_new_string(r->programs[i].name));
			if (r->programs[i].type)
				failed |= json_add(p, "type",
						   json_object_new_string(r->programs[i].type));
			if (r->programs[i].attach_type)
				failed |= json_add(
					p, "attach_type",
					json_object_new_string(r->programs[i].attach_type));
			failed |= json_append(a, p);
		}
		failed |= json_add(o, "programs", a);
	}
	if (r->n_freeze) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_freeze; i++) {
			json_object *m = json_object_new_object();

			failed |= json_add(m, "name", json_object_new_string(r->freeze[i]));
			failed |= json_append(a, m);
		}
		failed |= json_add(o, "freeze", a);
	}
	if (r->n_map_defs) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_map_defs; i++) {
			const struct proto_map_def *d = &r->map_defs[i];
			json_object *m = json_object_new_object();

			failed |= json_add(m, "name", json_object_new_string(d->name));
			if (d->set_key_size)
				failed |=
					json_add(m, "key_size", json_object_new_int64(d->key_size));
			if (d->set_value_size)
				failed |= json_add(m, "value_size",
						   json_object_new_int64(d->value_size));
			failed |= json_append(a, m);
		}
		failed |= json_add(o, "map_defs", a);
	}
	if (r->n_inner_maps) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_inner_maps; i++) {
			const struct proto_inner_map *im = &r->inner_maps[i];
			json_object *m = json_object_new_object();

			failed |= json_add(m, "outer", json_object_new_string(im->outer));
			failed |= json_add(m, "type", json_object_new_string(im->type));
			failed |= json_add(m, "key_size", json_object_new_int64(im->key_size));
			failed |= json_add(m, "value_size", json_object_new_int64(im->value_size));
			failed |=
				json_add(m, "max_entries", json_object_new_int64(im->max_entries));
			if (im->map_flags)
				failed |= json_add(m, "map_flags",
						   json_object_new_int64(im->map_flags));
			failed |= json_append(a, m);
		}
		failed |= json_add(o, "inner_maps", a);
	}
	if (r->n_attach_targets) {
		a = json_object_new_array();
		for (size_t i = 0; i < r->n_attach_targets; i++) {
			json_object *t = json_object_new_object();

			failed |= json_add(t, "program",
					   json_object_new_string(r->attach_targets[i].program));
			failed |= json_add(t, "target",
					   json_object_new_string(r->attach_targets[i].target));
			failed |= json_append(a, t);
		}
		failed |= json_add(o, "attach_targets", a);
	}
	if (failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void proto_load_request_done(struct proto_load_request *r)
{
	free(r->system_object);
	for (size_t i = 0; i < r->n_globals; i++) {
		free(r->globals[i].name);
		free(r->globals[i].value);
	}
	free(r->globals);
	for (size_t i = 0; i < r->n_map_sizes; i++)
		free(r->map_sizes[i].name);
	free(r->map_sizes);
	for (size_t i = 0; i < r->n_programs; i++) {
		free(r->programs[i].name);
		free(r->programs[i].type);
		free(r->programs[i].attach_type);
	}
	free(r->programs);
	for (size_t i = 0; i < r->n_freeze; i++)
		free(r->freeze[i]);
	free(r->freeze);
	for (size_t i = 0; i < r->n_map_defs; i++)
		free(r->map_defs[i].name);
	free(r->map_defs);
	for (size_t i = 0; i < r->n_inner_maps; i++) {
		free(r->inner_maps[i].outer);
		free(r->inner_maps[i].type);
	}
	free(r->inner_maps);
	for (size_t i = 0; i < r->n_attach_targets; i++) {
		free(r->attach_targets[i].program);
		free(r->attach_targets[i].target);
	}
	free(r->attach_targets);
	for (size_t i = 0; i < r->n_shares; i++) {
		free(r->shares[i].map);
		free(r->shares[i].user);
		free(r->shares[i].group);
		free(r->shares[i].access);
	}
	free(r->shares);
	free(r->name);
	free(r->object_name);
	*r = (struct proto_load_request){};
}
