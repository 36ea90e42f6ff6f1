/* SPDX-License-Identifier: MIT */
#include "bpfctl_setup.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bpfctl_setup_is_option(int opt)
{
	return opt >= BPFCTL_OPT_MAP_KEY_SIZE && opt <= BPFCTL_OPT_ATTACH_TARGET;
}

/*
 * A decimal (or, with hex, also 0x-prefixed hexadecimal) uint32 that ends at
 * end_char ('\0' or ':'): 0, or -EINVAL.
 */
static int parse_u32_base(const char *s, char **ret_end, char end_char, bool hex, uint32_t *ret)
{
	bool is_hex = hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long v;
	char *end;

	if (is_hex)
		s += 2;
	if (!(is_hex ? isxdigit((unsigned char)*s) : *s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, is_hex ? 16 : 10);
	if (errno || *end != end_char || v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	if (ret_end)
		*ret_end = end;
	return 0;
}

static int parse_u32(const char *s, char **ret_end, char end_char, uint32_t *ret)
{
	return parse_u32_base(s, ret_end, end_char, false, ret);
}

/* NAME=N: the map's key or value size (0 too: a ring buffer's value size). */
static int parse_map_def(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, bool key,
			 char *arg)
{
	struct bpfbroker_map_def *d = NULL;
	char *eq = strchr(arg, '=');
	uint32_t v, max = key ? PROTO_MAX_MAP_KEY_SIZE : PROTO_MAX_MAP_VALUE_SIZE;

	if (!eq || eq == arg || parse_u32(eq + 1, NULL, '\0', &v) < 0) {
		fprintf(stderr, "bpfctl: --map-%s-size takes NAME=N (N a decimal size)\n",
			key ? "key" : "value");
		return -EINVAL;
	}
	/* Also keeps N off BPFBROKER_SIZE_ZERO (UINT32_MAX), which would send 0. */
	if (v > max) {
		fprintf(stderr, "bpfctl: --map-%s-size %s: at most %u bytes\n",
			key ? "key" : "value", eq + 1, max);
		return -EINVAL;
	}
	*eq = '\0';
	/* One entry per map, both sizes on it. */
	for (size_t i = 0; i < opts->n_map_defs; i++)
		if (strcmp(s->map_defs[i].name, arg) == 0)
			d = &s->map_defs[i];
	if (!d) {
		if (opts->n_map_defs >= PROTO_MAX_CONFIG_ITEMS) {
			fprintf(stderr, "bpfctl: too many maps sized\n");
			return -EINVAL;
		}
		d = &s->map_defs[opts->n_map_defs++];
		*d = (struct bpfbroker_map_def){.name = arg};
	}
	if (v == 0)
		v = BPFBROKER_SIZE_ZERO;
	if (key)
		d->key_size = v;
	else
		d->value_size = v;
	return 0;
}

/* OUTER=TYPE:KEY:VALUE:ENTRIES[:FLAGS] */
static int parse_inner_map(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, char *arg)
{
	struct bpfbroker_inner_map *im = &s->inner_maps[opts->n_inner_maps];
	char *eq = strchr(arg, '='), *type, *p;

	if (opts->n_inner_maps >= PROTO_MAX_CONFIG_ITEMS || !eq || eq == arg)
		goto bad;
	*eq = '\0';
	type = eq + 1;
	p = strchr(type, ':');
	if (!p || p == type)
		goto bad;
	*p++ = '\0';
	*im = (struct bpfbroker_inner_map){.outer = arg, .type = type};
	if (parse_u32(p, &p, ':', &im->key_size) < 0 ||
	    parse_u32(p + 1, &p, ':', &im->value_size) < 0)
		goto bad;
	/* ENTRIES ends the option, or FLAGS follows it. */
	if (parse_u32(p + 1, NULL, '\0', &im->max_entries) < 0 &&
	    (parse_u32(p + 1, &p, ':', &im->max_entries) < 0 ||
	     parse_u32_base(p + 1, NULL, '\0', true, &im->map_flags) < 0))
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
