/* SPDX-License-Identifier: MIT */
/* The description of an opened libbpf object (its programs with what they call and reference, and
 * its maps) that the policy decides on. */
#include "inspect.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "inspect_internal.h"

bool inspect_name_is_valid(const char *name)
{
	size_t n = 0;

	for (const char *c = name; *c; c++, n++)
		if (n >= INSPECT_MAX_NAME ||
		    !((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '$' || *c == '-'))
			return false;
	return n > 0;
}

void object_handles_done(struct object_handles *h)
{
	free(h->programs);
	free(h->maps);
	*h = (struct object_handles){};
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	const struct elf_entry *x = *(const struct elf_entry *const *)a;
	const struct elf_entry *y = *(const struct elf_entry *const *)b;

	return strcmp(x->name, y->name);
}

static int fill_program(struct object_program *p, const struct bpf_program *prog,
			const struct elf_entry *e, const struct btf *btf,
			struct kconfig_names *kconfig)
{
	p->name = strdup(bpf_program__name(prog));
	if (!p->name)
		return -ENOMEM;
	p->prog_type = bpf_program__type(prog);
	p->attach_type = bpf_program__expected_attach_type(prog);
	p->load = bpf_program__autoload(prog);
	p->insn_cnt = e->insn_cnt;
	if (e->n_helpers > 0) {
		p->helpers = calloc(e->n_helpers, sizeof(*p->helpers));
		if (!p->helpers)
			return -ENOMEM;
		memcpy(p->helpers, e->helpers, e->n_helpers * sizeof(*e->helpers));
		p->n_helpers = e->n_helpers;
	}
	if (strv_copy((const char *const *)e->kfuncs, e->n_kfuncs, &p->kfuncs, &p->n_kfuncs) < 0)
		return -ENOMEM;
	/*
	 * Unrelocated kernel references are kernel symbols; libbpf resolves an
	 * extern as a Kconfig value (data) or a kernel symbol.
	 */
	if (e->n_externs + e->n_krefs > 0) {
		p->ksyms = calloc(e->n_externs + e->n_krefs, sizeof(*p->ksyms));
		if (!p->ksyms)
			return -ENOMEM;
		for (size_t i = 0; i < e->n_krefs; i++) {
			p->ksyms[p->n_ksyms] = strdup(e->krefs[i]);
			if (!p->ksyms[p->n_ksyms])
				return -ENOMEM;
			p->n_ksyms++;
		}
		for (size_t i = 0; i < e->n_externs; i++) {
			int r = extern_is_kconfig(kconfig, btf, e->externs[i]);

			if (r < 0)
				return r;
			if (r)
				continue;
			p->ksyms[p->n_ksyms] = strdup(e->externs[i]);
			if (!p->ksyms[p->n_ksyms])
				return -ENOMEM;
			p->n_ksyms++;
		}
	}
	return 0;
}

/* Two programs or two maps of one name would make "by name" mean either (first dup, or NULL). */
static const char *first_duplicate(const char **names, size_t n)
{
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			return names[i];
	return NULL;
}

static int check_names(const struct object_desc *d, char **error)
{
	_cleanup_free_ const char **names = NULL;
	size_t n = d->n_programs > d->n_maps ? d->n_programs : d->n_maps;
	const char *dup;

	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_programs; i++)
		names[i] = d->programs[i].name;
	dup = first_duplicate(names, d->n_programs);
	if (dup)
		return error_setf(error, -EBADMSG, "more than one program is named %s", dup);
	for (size_t i = 0; i < d->n_maps; i++) {
		if (!inspect_name_is_valid(d->maps[i].name))
			return error_setf(
				error, -EBADMSG,
				"map %zu has a name that is not 1 to %d of A-Z a-z 0-9 _ . $ -", i,
				INSPECT_MAX_NAME);
		names[i] = d->maps[i].name;
	}
	dup = first_duplicate(names, d->n_maps);
	if (dup)
		return error_setf(
			error, -EBADMSG,
			"more than one map is named %s: the broker decides on and hands out "
			"maps by name, so names must be unique",
			dup);
	return 0;
}

int inspect_object(struct bpf_object *obj, const struct elf_calls *calls, uint64_t object_bytes,
		   struct object_desc *ret, struct object_handles *ret_handles, char **error)
{
	_cleanup_(object_desc_done) struct object_desc d = {.object_bytes = object_bytes};
	_cleanup_(object_handles_done) struct object_handles h = {};
	_cleanup_free_ const struct elf_entry **by_name = NULL;
	_cleanup_(kconfig_names_done) struct kconfig_names kconfig = {};
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_program *prog;
	struct bpf_map *map;
	size_t n_progs = 0, n_maps = 0;
	int r;

	if (!obj || !calls || !ret || !ret_handles)
		return -EINVAL;

	if (calls->n_entries > 0) {
		by_name = calloc(calls->n_entries, sizeof(*by_name));
		if (!by_name)
			return -ENOMEM;
		for (size_t i = 0; i < calls->n_entries; i++)
			by_name[i] = &calls->entries[i];
		qsort(by_name, calls->n_entries, sizeof(*by_name), cmp_entry_ptr);
	}

	/* Spelled out: clang-format doesn't know libbpf's for_each macros. */
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		n_progs++;
	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map))
		n_maps++;
	if (n_progs > 0) {
		d.programs = calloc(n_progs, sizeof(*d.programs));
		h.programs = calloc(n_progs, sizeof(*h.programs));
		if (!d.programs || !h.programs)
			return -ENOMEM;
	}
	if (n_maps > 0) {
		d.maps = calloc(n_maps, sizeof(*d.maps));
		h.maps = calloc(n_maps, sizeof(*h.maps));
		if (!d.maps || !h.maps)
			return -ENOMEM;
	}

	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog)) {
		const struct elf_entry key = {.name = (char *)bpf_program__name(prog)};
		const struct elf_entry *keyp = &key, **found = NULL;
		const char *section = bpf_program__section_name(prog);

		if (d.n_programs >= n_progs)
			break;
		if (key.name && calls->n_entries > 0)
			found = bsearch(&keyp, by_name, calls->n_entries, sizeof(*by_name),
					cmp_entry_ptr);
		/* Compare the section too, so a program can never borrow another's graph.
		 * libbpf makes the only function of an object a program even in .text
		 * (prog_is_subprog() wants nr_programs > 1); the graph has no entry for it.
		 */
		if (section && strcmp(section, ".text") == 0)
			return error_setf(
				error, -EBADMSG,
				"program %s is in .text, which holds only subprograms: give it "
				"a SEC()",
				key.name && inspect_name_is_valid(key.name) ? key.name
									    : "<unnamed>");
		/*
		 * libbpf names SEC("?socket")'s section "socket": the "?" only
		 * turns autoload off (bpf_object__init_prog()). Skip it as
		 * libbpf does, one "?" and only at the start.
		 */
		if (!found || !section ||
		    strcmp((*found)->section + ((*found)->section[0] == '?'), section) != 0)
			return error_setf(
				error, -EBADMSG,
				"a program was not found in the object's code where libbpf "
				"sees it (%s)",
				key.name && inspect_name_is_valid(key.name) ? key.name
									    : "<invalid name>");
		h.programs[d.n_programs] = prog;
		d.n_programs++;
		r = fill_program(&d.programs[d.n_programs - 1], prog, *found, btf, &kconfig);
		if (r < 0)
			return r;
	}

	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map)) {
		struct object_map *m;

		if (d.n_maps >= n_maps)
			break;
		h.maps[d.n_maps] = map;
		m = &d.maps[d.n_maps++];
		m->name = strdup(bpf_map__name(map) ?: "");
		if (!m->name)
			return -ENOMEM;
		m->map_type = bpf_map__type(map);
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		/* libbpf gives a perf event array declared without a size one entry per
		 * possible CPU when it creates it: decide on, and report, that size. */
		if (m->map_type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && m->max_entries == 0) {
			int cpus = libbpf_num_possible_cpus();

			if (cpus < 0)
				return cpus;
			m->max_entries = (uint32_t)cpus;
		}
		m->map_flags = bpf_map__map_flags(map);
		/* libbpf creates a map of maps' inner template too, of the type declared. */
		if (bpf_map__inner_map(map)) {
			const struct bpf_map *inner = bpf_map__inner_map(map);

			m->inner_map_type = bpf_map__type(inner);
			m->inner_key_size = bpf_map__key_size(inner);
			m->inner_value_size = bpf_map__value_size(inner);
			m->inner_max_entries = bpf_map__max_entries(inner);
			m->inner_map_flags = bpf_map__map_flags(inner);
		}
		/* libbpf sets the pin path at open time exactly for LIBBPF_PIN_BY_NAME maps
		 * (under opts.pin_root_path, default /sys/fs/bpf); nothing else sets it
		 * before load unless the caller did. */
		m->pinned = bpf_map__pin_path(map) != NULL;
	}
	r = check_names(&d, error);
	if (r < 0)
		return r;

	*ret = d;
	d = (struct object_desc){0};
	*ret_handles = h;
	h = (struct object_handles){};
	return 0;
}
