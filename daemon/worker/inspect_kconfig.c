/* SPDX-License-Identifier: MIT */
/* Which externs libbpf resolves as Kconfig values rather than kernel symbols, read from the
 * object's BTF. */
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "inspect_internal.h"

struct named_id {
	const char *name;
	uint32_t id;
};

static int cmp_named_id(const void *a, const void *b)
{
	const struct named_id *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->id < y->id ? -1 : x->id > y->id;
}

void kconfig_names_done(struct kconfig_names *k)
{
	free(k->names);
	*k = (struct kconfig_names){};
}

static int kconfig_names_build(struct kconfig_names *k, const struct btf *btf)
{
	uint32_t n = btf ? btf__type_cnt(btf) : 0;
	_cleanup_free_ uint8_t *sec =
		NULL; /* per type: 0 in no DATASEC, 1 first in .kconfig, 2 other */
	_cleanup_free_ struct named_id *vars = NULL;
	size_t n_vars = 0;

	k->built = true;
	if (n == 0)
		return 0;
	sec = calloc(n, 1);
	vars = calloc(n, sizeof(*vars));
	if (!sec || !vars)
		return -ENOMEM;
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const struct btf_var_secinfo *vs;
		const char *name;

		if (!t || !btf_is_datasec(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		vs = btf_var_secinfos(t);
		for (unsigned v = 0; v < btf_vlen(t); v++, vs++)
			if (vs->type < n && !sec[vs->type])
				sec[vs->type] = name && strcmp(name, ".kconfig") == 0 ? 1 : 2;
	}
	for (uint32_t i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(btf, i);
		const char *name;

		if (!t || (!btf_is_var(t) && !btf_is_func(t)))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (name)
			vars[n_vars++] = (struct named_id){name, i};
	}
	if (n_vars == 0)
		return 0;
	qsort(vars, n_vars, sizeof(*vars), cmp_named_id);
	k->names = calloc(n_vars, sizeof(*k->names));
	if (!k->names)
		return -ENOMEM;
	/* The first of each name (the lowest id) decides. */
	for (size_t i = 0; i < n_vars; i++)
		if ((i == 0 || strcmp(vars[i - 1].name, vars[i].name) != 0) && sec[vars[i].id] == 1)
			k->names[k->n++] = vars[i].name;
	return 0;
}

/* 1 if libbpf resolves the extern name as a Kconfig value, 0 if not, or -ENOMEM. */
int extern_is_kconfig(struct kconfig_names *k, const struct btf *btf, const char *name)
{
	if (!k->built) {
		int r = kconfig_names_build(k, btf);

		if (r < 0)
			return r;
	}
	return k->n && bsearch(&name, k->names, k->n, sizeof(*k->names), cmp_str);
}
