/* SPDX-License-Identifier: MIT */
/*
 * bpfctl's options for the setup real loaders do between open and load:
 * --map-key-size NAME=N, --map-value-size NAME=N, --inner-map
 * OUTER=TYPE:KEY:VALUE:ENTRIES[:FLAGS], --attach-target PROG=NAME.
 */
#pragma once

#include "client/libbpfbroker.h"
#include "proto/proto.h"

enum {
	BPFCTL_OPT_MAP_KEY_SIZE = 0x200,
	BPFCTL_OPT_MAP_VALUE_SIZE,
	BPFCTL_OPT_INNER_MAP,
	BPFCTL_OPT_ATTACH_TARGET,
};

struct bpfctl_setup {
	struct bpfbroker_map_def map_defs[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_inner_map inner_maps[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_attach_target attach_targets[PROTO_MAX_CONFIG_ITEMS];
};

/* The getopt_long entries, for the option table. */
#define BPFCTL_SETUP_LONGOPTS                                                                      \
	{"map-key-size", required_argument, NULL, BPFCTL_OPT_MAP_KEY_SIZE},                        \
		{"map-value-size", required_argument, NULL, BPFCTL_OPT_MAP_VALUE_SIZE},            \
		{"inner-map", required_argument, NULL, BPFCTL_OPT_INNER_MAP},                      \
	{                                                                                          \
		"attach-target", required_argument, NULL, BPFCTL_OPT_ATTACH_TARGET                 \
	}

/* Is opt one of these options? */
bool bpfctl_setup_is_option(int opt);
/*
 * Parse one into s and opts (arg is modified and must outlive opts): 0, or
 * -EINVAL after saying on stderr what is wrong.
 */
int bpfctl_setup_option(struct bpfctl_setup *s, struct bpfbroker_load_opts *opts, int opt,
			char *arg);
