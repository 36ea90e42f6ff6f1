/* SPDX-License-Identifier: MIT */
/*
 * The reference the corpus test compares the broker with: an object loaded
 * directly with libbpf, as root, with the setup real loaders do between open
 * and load (program types, attach types and autoload, globals, map sizes,
 * inner maps, attach targets), in a forked child so that nothing it makes
 * outlives the comparison.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each array below ends with an entry whose name is NULL; the array itself may be NULL. */
struct setup_prog {
	const char *name;
	/* 0 / NULL: what the section says. Numbers for libbpf, names for the broker. */
	int type;
	const char *type_name;
	int attach_type;
	const char *attach_name;
};

struct setup_global {
	const char *name;
	const void *value;
	size_t size;
};

/* 0: keep what the object declares; SETUP_ZERO: set to 0 (a ring buffer's value size). */
#define SETUP_ZERO UINT32_MAX
struct setup_map {
	const char *name;
	uint32_t key_size, value_size, max_entries;
};

struct setup_inner {
	const char *outer;
	int type;
	const char *type_name;
	uint32_t key_size, value_size, max_entries;
};

struct setup_target {
	const char *program;
	const char *target;
};

struct setup {
	const char *object_name; /* bpf_object_open_opts.object_name: names .rodata & co */
	const struct setup_prog *progs; /* NULL: every program; else only these load */
	const struct setup_global *globals;
	const struct setup_map *maps;
	const struct setup_inner *inner;
	const struct setup_target *targets;
	const char *pin_root; /* for maps pinned by name */
};

#define DIRECT_MAX 32
/* How the log says that the setup itself failed (as a loader's setter call would), not a load. */
#define DIRECT_SETUP_FAILED "setup failed: "

struct direct_prog {
	char name[64];
	int type;
	int attach_type;
	bool load;
};

#define DIRECT_VALUE_MAX 256

struct direct_map {
	char name[64];
	int type;
	uint32_t key_size, value_size, max_entries; /* as the kernel made it */
	/* What the frozen sections (.rodata*, .kconfig) hold after load; no programs change them.
	 */
	bool has_value;
	uint8_t value[DIRECT_VALUE_MAX];
};

struct direct_outcome {
	int err; /* 0, or bpf_object__load()'s negative errno */
	char log[32768]; /* what libbpf printed (warnings and info, as the broker keeps) */
	size_t n_progs, n_maps;
	struct direct_prog progs[DIRECT_MAX];
	struct direct_map maps[DIRECT_MAX];
};

/* Load path with s as root in a child, into *out. < 0: the child could not run. */
int direct_load(const char *path, const struct setup *s, struct direct_outcome *out);
/* Whether a map named name is one of an object's frozen sections. */
bool direct_map_is_frozen_section(const char *name);
/* The first line of out->log that holds needle, without libbpf's "libbpf: " prefix. */
int direct_log_line(const struct direct_outcome *out, const char *needle, char *buf, size_t size);
