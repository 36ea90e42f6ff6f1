// SPDX-License-Identifier: MIT
/*
 * The words policies and requests use: map access modes, program and map
 * types by their libbpf names, and which tracepoint and interface names are
 * valid.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "internal.h"
#include "policy.h"

/* Indexed by the bits; only the first five are words a policy or request may use. */
static const char *const map_access_names[] = {
	[MAP_ACCESS_NONE] = "none",
	[MAP_ACCESS_RO] = "ro",
	[MAP_ACCESS_WO] = "wo",
	[MAP_ACCESS_RW] = "rw",
	[MAP_ACCESS_CONSUME] = "consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_RO] = "ro+consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_WO] = "wo+consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_RW] = "rw+consume",
};

const char *map_access_to_string(enum map_access a)
{
	if ((unsigned int)a >= ARRAY_SIZE(map_access_names))
		return NULL;
	return map_access_names[a];
}

int map_access_from_string(const char *s, enum map_access *ret)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i <= MAP_ACCESS_CONSUME; i++) {
		if (streq(map_access_names[i], s)) {
			*ret = (enum map_access)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* libbpf's names of enum values, as plain functions of an int. */
static const char *prog_type_name(int t)
{
	return libbpf_bpf_prog_type_str((enum bpf_prog_type)t);
}

static const char *map_type_name(int t)
{
	return libbpf_bpf_map_type_str((enum bpf_map_type)t);
}

/* The value in [first, bits) that name() calls s, or -EINVAL. */
static int enum_from_string(const char *(*name)(int), int first, int bits, const char *s)
{
	if (!s)
		return -EINVAL;
	for (int t = first; t < bits; t++) {
		const char *n = name(t);

		if (n && streq(n, s))
			return t;
	}
	return -EINVAL;
}

int policy_prog_type_from_string(const char *s)
{
	/* Type 0 (unspec) is not a program type anything can be loaded as. */
	return enum_from_string(prog_type_name, 1, PROG_TYPE_BITS, s);
}

const char *policy_prog_type_to_string(int prog_type)
{
	return prog_type < 0 || prog_type >= PROG_TYPE_BITS ? NULL : prog_type_name(prog_type);
}

int policy_map_type_from_string(const char *s)
{
	/* Type 0 (unspec) is not a map type anything can be created as. */
	return enum_from_string(map_type_name, 1, MAP_TYPE_BITS, s);
}

const char *policy_map_type_to_string(int map_type)
{
	return map_type < 0 || map_type >= MAP_TYPE_BITS ? NULL : map_type_name(map_type);
}

static bool name_chars_ok(const char *s, bool pattern, size_t max_colons)
{
	size_t colons = 0;

	if (!s || !*s || strlen(s) > 128)
		return false;
	for (const char *p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_')
			continue;
		if (pattern && (*p == '*' || *p == '?'))
			continue;
		if (*p == ':' && ++colons <= max_colons && p != s && p[1])
			continue;
		return false;
	}
	return colons == max_colons;
}

bool policy_tracepoint_name_is_valid(const char *s, bool pattern)
{
	return name_chars_ok(s, pattern, 1);
}

bool policy_raw_tracepoint_name_is_valid(const char *s, bool pattern)
{
	return name_chars_ok(s, pattern, 0);
}

bool policy_interface_name_is_valid(const char *s, bool pattern)
{
	size_t len = s ? strlen(s) : 0;

	/* IFNAMSIZ is 16 with the NUL; "." and ".." are not names. */
	if (len == 0 || len > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '/' || *p == ':' || *p <= ' ' || *p == 0x7f)
			return false;
		if (!pattern && (*p == '*' || *p == '?' || *p == '['))
			return false;
	}
	return true;
}
