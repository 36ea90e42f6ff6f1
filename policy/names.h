/* SPDX-License-Identifier: MIT */
/*
 * The words policies and requests use: map access modes, program and map
 * types by their libbpf names, and which tracepoint and interface names are
 * valid (policy/names.c).
 */
#pragma once

#include <stdbool.h>

enum map_access {
	MAP_ACCESS_NONE = 0,
	MAP_ACCESS_RO = 1,
	MAP_ACCESS_WO = 2,
	MAP_ACCESS_RW = 3, /* == RO | WO, so access modes combine with | */
	/*
	 * Ring buffers only: an O_RDWR fd, to map the consumer position
	 * writable and the data read-only. A bit of its own, so that it
	 * combines with | like the others; policy_map_access_for_type() turns
	 * a union into what one map of a given type gets.
	 */
	MAP_ACCESS_CONSUME = 4,
};

/* "none", "ro", "wo", "rw", "consume"; unions of consume and others as "ro+consume" etc. */
const char *map_access_to_string(enum map_access a);
/* One of the five words; 0 or -EINVAL. */
int map_access_from_string(const char *s, enum map_access *ret);
/* Map type by libbpf name ("hash") or -EINVAL; name by type or NULL. */
int policy_map_type_from_string(const char *s);
const char *policy_map_type_to_string(int map_type);
/* Program type by libbpf name ("socket_filter") or -EINVAL; name by type or NULL. */
int policy_prog_type_from_string(const char *s);
const char *policy_prog_type_to_string(int prog_type);
/*
 * Tracepoint and raw tracepoint names as the broker accepts them in requests
 * and policies: [A-Za-z0-9_] (and one ':' between category and name for
 * tracepoints); patterns may also use '*' and '?'. Keeps names safe to use in
 * tracefs paths.
 */
bool policy_tracepoint_name_is_valid(const char *s, bool pattern);
bool policy_raw_tracepoint_name_is_valid(const char *s, bool pattern);
/* Interface names: 1 to 15 characters, none of '/', ':', whitespace (as the kernel's
 * dev_valid_name). */
bool policy_interface_name_is_valid(const char *s, bool pattern);
