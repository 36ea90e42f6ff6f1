/* SPDX-License-Identifier: MIT */
/*
 * bpfctl's options for the setup between open and load (setup.h): map key
 * and value sizes, inner maps of maps of maps, BTF attach targets.
 */
#include "setup.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "number.h"

bool bpfctl_setup_is_option(int opt)
{
	return opt >= BPFCTL_OPT_MAP_KEY_SIZE && opt <= BPFCTL_OPT_ATTACH_TARGET;
}

/* NAME=N: the map's key or value size (0 too: a ring buffer's value size). */
static int parse_map_def(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, bool key,
			 char *arg)
{
	struct bpfbroker_map_def *d = NULL;
	uint32_t max = key ? PROTO_MAX_MAP_KEY_SIZE : PROTO_MAX_MAP_VALUE_SIZE;
	const char *name;
	uint64_t v;

	if (bpfctl_parse_assignment(arg, UINT32_MAX, &name, &v) < 0 || !*name) {
		fprintf(stderr, "bpfctl: --map-%s-size takes NAME=N (N a decimal size)\n",
			key ? "key" : "value");
		return -EINVAL;
	}
	/* Also keeps N off BPFBROKER_SIZE_ZERO (UINT32_MAX), which would send 0. */
	if (v > max) {
		fprintf(stderr, "bpfctl: --map-%s-size %" PRIu64 ": at most %u bytes\n",
			key ? "key" : "value", v, max);
		return -EINVAL;
	}
	/* One entry per map, both sizes on it. */
	for (size_t i = 0; i < opts->n_map_defs; i++)
		if (strcmp(s->map_defs[i].name, name) == 0)
			d = &s->map_defs[i];
	if (!d) {
		if (opts->n_map_defs >= PROTO_MAX_CONFIG_ITEMS) {
			fprintf(stderr, "bpfctl: too many maps sized\n");
			return -EINVAL;
		}
		d = &s->map_defs[opts->n_map_defs++];
		*d = (struct bpfbroker_map_def){.name = name};
	}
	if (v == 0)
		v = BPFBROKER_SIZE_ZERO;
	if (key)
		d->key_size = (uint32_t)v;
	else
		d->value_size = (uint32_t)v;
	return 0;
}

/* OUTER=TYPE:KEY:VALUE:ENTRIES[:FLAGS] */
static int parse_inner_map(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, char *arg)
{
	struct bpfbroker_inner_map *im = &s->inner_maps[opts->n_inner_maps];
	char *eq = strchr(arg, '='), *type, *p, *field[4] = {};
	size_t n;

	if (opts->n_inner_maps >= PROTO_MAX_CONFIG_ITEMS || !eq || eq == arg)
		goto bad;
	*eq = '\0';
	type = eq + 1;
	p = strchr(type, ':');
	if (!p || p == type)
		goto bad;
	*p++ = '\0';
	*im = (struct bpfbroker_inner_map){.outer = arg, .type = type};
	/* KEY:VALUE:ENTRIES, and FLAGS after them or not. */
	for (n = 0; p && n < ARRAY_SIZE(field); n++)
		field[n] = strsep(&p, ":");
	if (p || n < 3 || bpfctl_parse_u32(field[0], false, &im->key_size) < 0 ||
	    bpfctl_parse_u32(field[1], false, &im->value_size) < 0 ||
	    bpfctl_parse_u32(field[2], false, &im->max_entries) < 0 ||
	    (field[3] && bpfctl_parse_u32(field[3], true, &im->map_flags) < 0))
		goto bad;
	opts->n_inner_maps++;
	return 0;
bad:
	fprintf(stderr, "bpfctl: --inner-map takes OUTER=TYPE:KEY:VALUE:ENTRIES[:FLAGS], e.g. "
			"tables=array:4:8:1024 or prefixes=lpm_trie:8:4:256:0x1\n");
	return -EINVAL;
}

/* PROG=NAME */
static int parse_attach_target(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, char *arg)
{
	char *eq = strchr(arg, '=');

	if (opts->n_attach_targets >= PROTO_MAX_CONFIG_ITEMS || !eq || eq == arg || !eq[1]) {
		fprintf(stderr, "bpfctl: --attach-target takes PROG=NAME, e.g. "
				"on_fork=sched_process_fork\n");
		return -EINVAL;
	}
	*eq = '\0';
	s->attach_targets[opts->n_attach_targets++] =
		(struct bpfbroker_attach_target){.program = arg, .target = eq + 1};
	return 0;
}

int bpfctl_setup_option(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, int opt,
			char *arg)
{
	opts->map_defs = s->map_defs;
	opts->inner_maps = s->inner_maps;
	opts->attach_targets = s->attach_targets;
	switch (opt) {
	case BPFCTL_OPT_MAP_KEY_SIZE:
	case BPFCTL_OPT_MAP_VALUE_SIZE:
		return parse_map_def(s, opts, opt == BPFCTL_OPT_MAP_KEY_SIZE, arg);
	case BPFCTL_OPT_INNER_MAP:
		return parse_inner_map(s, opts, arg);
	case BPFCTL_OPT_ATTACH_TARGET:
		return parse_attach_target(s, opts, arg);
	default:
		return -EINVAL;
	}
}
