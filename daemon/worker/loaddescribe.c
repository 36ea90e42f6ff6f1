/* SPDX-License-Identifier: MIT */
/* A check's or load's result: the object's programs and maps with their verdicts, as JSON. */
#include "job.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/macro.h"
#include "policy/attach_type.h"
#include "policy/verdict.h"

static json_object *json_string_array(char **v, size_t n)
{
	_cleanup_json_ json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_append(a, json_object_new_string(v[i])) < 0)
			return NULL;
	return TAKE_PTR(a);
}

static json_object *json_helper_array(const int *ids, size_t n)
{
	_cleanup_json_ json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		const char *name = helper_name(ids[i]);
		char buf[32];

		if (!name) {
			snprintf(buf, sizeof(buf), "helper#%d", ids[i]);
			name = buf;
		}
		if (json_append(a, json_object_new_string(name)) < 0)
			return NULL;
	}
	return TAKE_PTR(a);
}

/* "allowed", or every reason of the item joined by "; ". */
static json_object *verdict_item_json(const struct verdict_item *v)
{
	_cleanup_free_ char *text = verdict_item_text(v);

	return text ? json_object_new_string(text) : NULL;
}

/*
 * Whether the request's "programs" list (if any) names the program. Not
 * bpf_program__autoload(): libbpf's opt-in SEC("?...") programs are not
 * loaded by default either, though nobody left them out.
 */
static bool job_program_selected(const struct job *j, const char *name)
{
	if (j->raw || j->req.n_programs == 0)
		return true;
	for (size_t i = 0; i < j->req.n_programs; i++)
		if (strcmp(j->req.programs[i].name, name) == 0)
			return true;
	return false;
}

/* Program i with its verdict, appended to progs: 0 or -ENOMEM. */
static int describe_program(const struct job *j, size_t i, json_object *progs)
{
	const struct object_program *p = &j->desc.programs[i];
	const char *attach = attach_type_to_string(p->attach_type);
	json_object *o = json_object_new_object();

	/* o is progs' from here on, also when a member below cannot be added. */
	if (json_append(progs, o) < 0 || json_add(o, "name", json_object_new_string(p->name)) < 0 ||
	    json_add(o, "type",
		     json_object_new_string(policy_prog_type_to_string(p->prog_type) ?: "unspec")) <
		    0 ||
	    (attach && p->attach_type != 0 &&
	     json_add(o, "attach_type", json_object_new_string(attach)) < 0) ||
	    json_add(o, "selected", json_object_new_boolean(job_program_selected(j, p->name))) <
		    0 ||
	    json_add(o, "load", json_object_new_boolean(p->load)) < 0 ||
	    json_add(o, "insns", json_object_new_int64(p->insn_cnt)) < 0 ||
	    json_add(o, "helpers", json_helper_array(p->helpers, p->n_helpers)) < 0 ||
	    json_add(o, "kfuncs", json_string_array(p->kfuncs, p->n_kfuncs)) < 0 ||
	    json_add(o, "ksyms", json_string_array(p->ksyms, p->n_ksyms)) < 0 ||
	    json_add(o, "verdict", verdict_item_json(&j->verdict.programs[i])) < 0 ||
	    json_add(o, "fd_granted", json_object_new_boolean(j->verdict.prog_fd[i])) < 0 ||
	    json_add(o, "test_run_only", json_object_new_boolean(j->verdict.test_run_only[i])) < 0)
		return -ENOMEM;
	return 0;
}

/* Map i with its verdict, appended to maps: 0 or -ENOMEM. */
static int describe_map(const struct job *j, size_t i, json_object *maps)
{
	const struct object_map *m = &j->desc.maps[i];
	json_object *o = json_object_new_object();

	/* o is maps' from here on, also when a member below cannot be added. */
	if (json_append(maps, o) < 0 || json_add(o, "name", json_object_new_string(m->name)) < 0 ||
	    json_add(o, "type",
		     json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown")) <
		    0 ||
	    json_add(o, "key_size", json_object_new_int64(m->key_size)) < 0 ||
	    json_add(o, "value_size", json_object_new_int64(m->value_size)) < 0 ||
	    json_add(o, "max_entries", json_object_new_int64(m->max_entries)) < 0 ||
	    json_add(o, "map_flags", json_object_new_int64(m->map_flags)) < 0 ||
	    json_add(o, "pinned", json_object_new_boolean(m->pinned)) < 0 ||
	    json_add(o, "access",
		     json_object_new_string(map_access_to_string(j->verdict.map_access[i]))) < 0 ||
	    json_add(o, "verdict", verdict_item_json(&j->verdict.maps[i])) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * Describe programs and maps with their verdicts (fds and ids are added after loading). NULL
 * when out of memory: never a description with a member missing.
 */
json_object *describe(const struct job *j, json_object **ret_progs, json_object **ret_maps)
{
	_cleanup_json_ json_object *result = json_object_new_object();
	_cleanup_json_ json_object *progs = json_object_new_array(),
				   *maps = json_object_new_array();
	_cleanup_json_ json_object *reasons = json_object_new_array(),
				   *denials = json_object_new_array();

	if (!result || !progs || !maps || !reasons || !denials ||
	    verdict_to_json(&j->verdict, &j->desc, reasons, denials) < 0 ||
	    json_add(result, "allowed", json_object_new_boolean(j->verdict.allowed)) < 0)
		return NULL;
	for (size_t i = 0; i < j->desc.n_programs; i++)
		if (describe_program(j, i, progs) < 0)
			return NULL;
	for (size_t i = 0; i < j->desc.n_maps; i++)
		if (describe_map(j, i, maps) < 0)
			return NULL;
	if (json_add(result, "reasons", TAKE_PTR(reasons)) < 0 ||
	    json_add(result, "denials", TAKE_PTR(denials)) < 0 ||
	    json_add(result, "programs", json_object_get(progs)) < 0 ||
	    json_add(result, "maps", json_object_get(maps)) < 0)
		return NULL;
	*ret_progs = TAKE_PTR(progs);
	*ret_maps = TAKE_PTR(maps);
	return TAKE_PTR(result);
}
