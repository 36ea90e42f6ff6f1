/* SPDX-License-Identifier: MIT */
/* A summary of what a program's raw instructions do: helpers called, kfunc calls, kernel and map
 * references. */
#include "inspect.h"

#include <errno.h>
#include <stdlib.h>

#include "common/macro.h"
#include "insncheck.h"
#include "inspect_internal.h"

void insns_summary_done(struct insns_summary *s)
{
	free(s->helpers);
	*s = (struct insns_summary){};
}

int insns_summary_add(struct insns_summary *s, const struct insn_decoded *d)
{
	int r;

	switch (d->kind) {
	case INSN_HELPER_CALL:
		r = GROW(s->helpers, s->n_helpers, s->cap_helpers);
		if (r < 0)
			return r;
		s->helpers[s->n_helpers++] = d->imm;
		break;
	case INSN_KFUNC_CALL:
		s->n_kfunc_calls++;
		break;
	case INSN_KERNEL_REF:
		s->n_kernel_refs++;
		break;
	case INSN_MAP_REF:
		s->n_map_refs++;
		break;
	default:
		break;
	}
	return 0;
}

void insns_summary_finish(struct insns_summary *s)
{
	s->n_helpers = sort_unique(s->helpers, s->n_helpers, sizeof(*s->helpers), cmp_int);
}

int inspect_insns_summary(const void *insns, size_t n_insns, struct insns_summary *ret,
			  char **error)
{
	_cleanup_(insns_summary_done) struct insns_summary s = {};
	int r;

	if (!insns && n_insns > 0)
		return -EINVAL;
	for (size_t i = 0; i < n_insns;) {
		struct insn_decoded d;

		r = insn_decode(insns, n_insns, i, &d, error);
		if (r < 0)
			return r;
		r = insns_summary_add(&s, &d);
		if (r < 0)
			return r;
		i += d.width;
	}
	insns_summary_finish(&s);
	*ret = s;
	s = (struct insns_summary){};
	return 0;
}
