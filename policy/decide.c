// SPDX-License-Identifier: MIT
/*
 * Deciding on an inspected object under a grant: the object's size and
 * counts, each program's type, size, helpers, kfuncs and kernel symbols, and
 * each map (decide_map.c), every reason collected.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/macro.h"
#include "internal.h"
#include "policy.h"
#include "verdict.h"

void object_desc_done(struct object_desc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_programs; i++) {
		struct object_program *prog = &d->programs[i];

		free(prog->name);
		free(prog->helpers);
		for (size_t k = 0; k < prog->n_kfuncs; k++)
			free(prog->kfuncs[k]);
		free(prog->kfuncs);
		for (size_t k = 0; k < prog->n_ksyms; k++)
			free(prog->ksyms[k]);
		free(prog->ksyms);
	}
	free(d->programs);
	for (size_t i = 0; i < d->n_maps; i++)
		free(d->maps[i].name);
	free(d->maps);
	*d = (struct object_desc){};
}

static int decide_object(const struct policy_grant *g, const struct object_desc *d,
			 struct verdict_item *it)
{
	size_t n_load = 0;
	char note[128];
	int k = 0;

	for (size_t i = 0; i < d->n_programs; i++)
		if (d->programs[i].load)
			n_load++;

	/* Past a hard ceiling no key can help: named as such, with no key (policy_limit_key()). */
	if (d->object_bytes > g->limits.max_object_bytes)
		k = verdict_item_deny(
			it,
			policy_limit_key("max_object_bytes", d->object_bytes, note, sizeof(note)),
			"object is %" PRIu64 " bytes, over your limit of %" PRIu64 "%s",
			d->object_bytes, g->limits.max_object_bytes, note);
	if (k >= 0 && n_load > g->limits.max_programs)
		k = verdict_item_deny(it,
				      policy_limit_key("max_programs", n_load, note, sizeof(note)),
				      "object loads %zu programs, over your limit of %" PRIu64 "%s",
				      n_load, g->limits.max_programs, note);
	if (k >= 0 && d->n_maps > g->limits.max_maps)
		k = verdict_item_deny(it,
				      policy_limit_key("max_maps", d->n_maps, note, sizeof(note)),
				      "object has %zu maps, over your limit of %" PRIu64 "%s",
				      d->n_maps, g->limits.max_maps, note);
	return k;
}

enum helper_class policy_helper_class_needed(const struct policy_grant *g, int prog_type,
					     int helper_id, bool *any_task)
{
	enum helper_class cls = helper_classify(helper_id), any = helper_class_any_task(cls);
	/* The plain class covers only programs that run in the caller's own task: told
	 * to grant it for any other program, a user would grant it and still be refused. */
	bool need_any = (int)any >= 0 && !policy_prog_runs_in_callers_task(g, prog_type);

	if (any_task)
		*any_task = need_any;
	return need_any ? any : cls;
}

/* At most this many names in one reason: an object can reference thousands of symbols. */
#define REASON_MAX_NAMES 16

/* One reason per helper class the program lacks, naming every helper of that class it calls. */
static int decide_helpers(const struct policy_grant *g, const struct object_program *prog,
			  const char *name, struct verdict_item *it)
{
	for (size_t i = 0; i < prog->n_helpers; i++) {
		_cleanup_free_ char *helpers = NULL;
		enum helper_class need, cls = helper_classify(prog->helpers[i]);
		const char *cls_name = helper_class_to_string(cls) ?: "unknown";
		const char *prog_type = policy_prog_type_to_string(prog->prog_type);
		char key[64], buf[32];
		bool any_task, seen = false;
		size_t len = 0, listed = 0;
		FILE *f;
		int k;

		if (policy_grant_helper(g, prog->prog_type, prog->helpers[i]))
			continue;
		need = policy_helper_class_needed(g, prog->prog_type, prog->helpers[i], &any_task);
		for (size_t j = 0; j < i && !seen; j++) {
			seen = !policy_grant_helper(g, prog->prog_type, prog->helpers[j]) &&
			       policy_helper_class_needed(g, prog->prog_type, prog->helpers[j],
							  NULL) == need;
		}
		if (seen)
			continue; /* named in the reason of the first helper of its class */
		f = open_memstream(&helpers, &len);
		if (!f)
			return -ENOMEM;
		for (size_t j = i; j < prog->n_helpers; j++) {
			if (j != i && (policy_grant_helper(g, prog->prog_type, prog->helpers[j]) ||
				       policy_helper_class_needed(g, prog->prog_type,
								  prog->helpers[j], NULL) != need))
				continue;
			if (listed++ < REASON_MAX_NAMES)
				fprintf(f, "%s%s", j == i ? "" : ", ",
					helper_display_name(prog->helpers[j], buf));
		}
		if (listed > REASON_MAX_NAMES)
			fprintf(f, " and %zu more", listed - REASON_MAX_NAMES);
		if (fclose(f) != 0 || !helpers)
			return -ENOMEM;
		snprintf(key, sizeof(key), "helper_classes: %s",
			 helper_class_to_string(need) ?: "unknown");
		if (any_task)
			k = verdict_item_deny(
				it, key,
				"program \"%s\" calls %s (class %s), which acts on the "
				"task the program runs in: class %s covers only programs "
				"that run in your own processes (uprobes the broker "
				"attaches), and a %s program runs in anyone's; that needs "
				"class %s",
				name, helpers, cls_name, cls_name,
				prog_type ?: "program of this type", helper_class_to_string(need));
		else
			k = verdict_item_deny(
				it, key,
				"program \"%s\" calls %s (class %s), which your policy "
				"does not allow",
				name, helpers, cls_name);
		if (k < 0)
			return k;
	}
	return 0;
}

/* "a, b, c" of names (NULL ones as "(unnamed)"), "... and N more" past the bound; NULL: -ENOMEM. */
static char *join_list(char *const *names, size_t n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n && i < REASON_MAX_NAMES; i++)
		fprintf(f, "%s%s", i ? ", " : "", name_or_unnamed(names[i]));
	if (n > REASON_MAX_NAMES)
		fprintf(f, " and %zu more", n - REASON_MAX_NAMES);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

static int decide_program(const struct policy_grant *g, const struct object_program *prog,
			  struct verdict_item *it)
{
	const char *name = name_or_unnamed(prog->name);
	char note[128];
	int k = 0;

	/* A test_run-only type loads like any other; the caller just never gets to attach it. */
	if (!policy_grant_test_run(g, prog->prog_type)) {
		const char *type = policy_prog_type_to_string(prog->prog_type);
		char key[64];

		snprintf(key, sizeof(key), "program_types: %s", type ?: "");
		if (type)
			k = verdict_item_deny(it, key,
					      "program \"%s\" has type %s, which your policy does "
					      "not allow",
					      name, type);
		else /* a type libbpf has no name for cannot be granted */
			k = verdict_item_deny(it, NULL,
					      "program \"%s\" has unknown type %d, which your "
					      "policy does not allow",
					      name, prog->prog_type);
	}
	if (k >= 0 && prog->insn_cnt > g->limits.max_insns_per_program)
		k = verdict_item_deny(it,
				      policy_limit_key("max_insns_per_program", prog->insn_cnt,
						       note, sizeof(note)),
				      "program \"%s\" has %" PRIu32
				      " instructions, over your limit of %" PRIu64 "%s",
				      name, prog->insn_cnt, g->limits.max_insns_per_program, note);
	if (k >= 0)
		k = decide_helpers(g, prog, name, it);
	if (k >= 0 && prog->n_kfuncs > 0 &&
	    !(g->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_KFUNC))) {
		_cleanup_free_ char *list = join_list(prog->kfuncs, prog->n_kfuncs);

		k = list ? verdict_item_deny(it, "helper_classes: kfunc",
					     "program \"%s\" calls kfunc%s %s (class kfunc), which "
					     "your policy does not allow",
					     name, prog->n_kfuncs > 1 ? "s" : "", list)
			 : -ENOMEM;
	}
	/* A kernel symbol's address, or a pointer into kernel memory the program may read. */
	if (k >= 0 && prog->n_ksyms > 0 &&
	    !(g->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY))) {
		_cleanup_free_ char *list = join_list(prog->ksyms, prog->n_ksyms);

		k = list ? verdict_item_deny(
				   it, "helper_classes: read_kernel_memory",
				   "program \"%s\" references kernel symbol%s %s (class "
				   "read_kernel_memory), which your policy does not allow",
				   name, prog->n_ksyms > 1 ? "s" : "", list)
			 : -ENOMEM;
	}
	return k;
}

int policy_decide(const struct policy_grant *g, const struct object_desc *d,
		  struct policy_verdict *ret)
{
	_cleanup_(policy_verdict_done) struct policy_verdict v = {};
	int r;

	if (!g || !d || !ret)
		return -EINVAL;
	v.n_programs = d->n_programs;
	v.n_maps = d->n_maps;
	if (v.n_programs > 0) {
		v.programs = calloc(v.n_programs, sizeof(*v.programs));
		v.prog_fd = calloc(v.n_programs, sizeof(*v.prog_fd));
		v.test_run_only = calloc(v.n_programs, sizeof(*v.test_run_only));
		if (!v.programs || !v.prog_fd || !v.test_run_only)
			return -ENOMEM;
	}
	if (v.n_maps > 0) {
		v.maps = calloc(v.n_maps, sizeof(*v.maps));
		v.map_access = calloc(v.n_maps, sizeof(*v.map_access));
		if (!v.maps || !v.map_access)
			return -ENOMEM;
	}
	v.object.allowed = true;
	for (size_t i = 0; i < v.n_programs; i++)
		v.programs[i].allowed = true;
	for (size_t i = 0; i < v.n_maps; i++)
		v.maps[i].allowed = true;

	if (!g->matched) {
		r = verdict_item_deny(&v.object, "match",
				      "no policy rule matches uid %u; the broker allows nothing",
				      (unsigned int)g->uid);
		if (r < 0)
			return r;
		for (size_t i = 0; i < d->n_programs; i++) {
			if (!d->programs[i].load)
				continue;
			r = verdict_item_deny(
				&v.programs[i], "match",
				"program \"%s\" is not allowed: no policy rule matches uid %u",
				name_or_unnamed(d->programs[i].name), (unsigned int)g->uid);
			if (r < 0)
				return r;
		}
		for (size_t i = 0; i < d->n_maps; i++) {
			r = verdict_item_deny(
				&v.maps[i], "match",
				"map \"%s\" is not allowed: no policy rule matches uid %u",
				name_or_unnamed(d->maps[i].name), (unsigned int)g->uid);
			if (r < 0)
				return r;
		}
	} else {
		r = decide_object(g, d, &v.object);
		if (r < 0)
			return r;
		for (size_t i = 0; i < d->n_programs; i++) {
			if (!d->programs[i].load)
				continue;
			r = decide_program(g, &d->programs[i], &v.programs[i]);
			if (r < 0)
				return r;
			v.prog_fd[i] = policy_grant_prog_fd(g, d->programs[i].prog_type);
			v.test_run_only[i] = !policy_grant_prog_type(g, d->programs[i].prog_type);
		}
		for (size_t i = 0; i < d->n_maps; i++) {
			r = decide_map(g, &d->maps[i], &v.maps[i]);
			if (r < 0)
				return r;
			v.map_access[i] = policy_map_access_for_type(
				policy_grant_map_access(g, d->maps[i].name), d->maps[i].map_type);
		}
	}

	v.allowed = v.object.allowed;
	for (size_t i = 0; i < v.n_programs; i++)
		v.allowed = v.allowed && v.programs[i].allowed;
	for (size_t i = 0; i < v.n_maps; i++)
		v.allowed = v.allowed && v.maps[i].allowed;

	*ret = v;
	v = (struct policy_verdict){};
	return 0;
}
