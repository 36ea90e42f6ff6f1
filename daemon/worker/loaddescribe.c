/* SPDX-License-Identifier: MIT */
/* A check's or load's result: the object's programs and maps with their verdicts, as JSON. */
#include "job.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "policy/attach_type.h"
#include "policy/verdict.h"

static json_object *json_string_array(char **v, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static json_object *json_helper_array(const int *ids, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		const char *name = helper_name(ids[i]);
		char buf[32];

		if (!name) {
			snprintf(buf, sizeof(buf), "helper#%d", ids[i]);
			name = buf;
		}
		json_object_array_add(a, json_object_new_string(name));
	}
	return a;
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

/* Describe programs and maps with their verdicts (fds and ids are added after loading). */
json_object *describe(const struct job *j, json_object **ret_progs, json_object **ret_maps)
{
	json_object *result = json_object_new_object();
	json_object *progs = json_object_new_array(), *maps = json_object_new_array();
	json_object *reasons = json_object_new_array(), *denials = json_object_new_array();

	if (!result || !progs || !maps || !reasons || !denials ||
	    verdict_to_json(&j->verdict, &j->desc, reasons, denials) < 0) {
		json_object_put(result);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(reasons);
		json_object_put(denials);
		return NULL;
	}
	json_object_object_add(result, "allowed", json_object_new_boolean(j->verdict.allowed));
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];
		const char *attach = attach_type_to_string(p->attach_type);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(policy_prog_type_to_string(p->prog_type)
						       ?: "unspec"));
		if (attach && p->attach_type != 0)
			json_object_object_add(o, "attach_type", json_object_new_string(attach));
		json_object_object_add(o, "selected",
				       json_object_new_boolean(job_program_selected(j, p->name)));
		json_object_object_add(o, "load", json_object_new_boolean(p->load));
		json_object_object_add(o, "insns", json_object_new_int64(p->insn_cnt));
		json_object_object_add(o, "helpers", json_helper_array(p->helpers, p->n_helpers));
		json_object_object_add(o, "kfuncs", json_string_array(p->kfuncs, p->n_kfuncs));
		json_object_object_add(o, "ksyms", json_string_array(p->ksyms, p->n_ksyms));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.programs[i]));
		json_object_object_add(o, "fd_granted",
				       json_object_new_boolean(j->verdict.prog_fd[i]));
		json_object_object_add(o, "test_run_only",
				       json_object_new_boolean(j->verdict.test_run_only[i]));
		json_object_array_add(progs, o);
	}
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		const struct object_map *m = &j->desc.maps[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(m->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown"));
		json_object_object_add(o, "key_size", json_object_new_int64(m->key_size));
		json_object_object_add(o, "value_size", json_object_new_int64(m->value_size));
		json_object_object_add(o, "max_entries", json_object_new_int64(m->max_entries));
		json_object_object_add(o, "map_flags", json_object_new_int64(m->map_flags));
		json_object_object_add(o, "pinned", json_object_new_boolean(m->pinned));
		json_object_object_add(
			o, "access",
			json_object_new_string(map_access_to_string(j->verdict.map_access[i])));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.maps[i]));
		json_object_array_add(maps, o);
	}
	json_object_object_add(result, "reasons", reasons);
	json_object_object_add(result, "denials", denials);
	json_object_object_add(result, "programs", json_object_get(progs));
	json_object_object_add(result, "maps", json_object_get(maps));
	*ret_progs = progs;
	*ret_maps = maps;
	return result;
}
