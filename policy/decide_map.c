// SPDX-License-Identifier: MIT
/*
 * Deciding on one map of an inspected object (its size, pinning, flags and
 * type), and the access a map of a given type gets from what is granted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "policy.h"
#include "verdict.h"

bool policy_map_type_is_map_of_maps(int map_type)
{
	return map_type == BPF_MAP_TYPE_ARRAY_OF_MAPS || map_type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

enum map_access policy_map_access_for_type(enum map_access granted, int map_type)
{
	/*
	 * A ring buffer's fd does nothing but map it (lookups and updates are
	 * not supported), and consuming needs it O_RDWR. An O_RDONLY fd would
	 * show the records without consuming them: not handed out either, so
	 * a ring buffer not granted consume gives no fd.
	 */
	if (map_type == BPF_MAP_TYPE_RINGBUF)
		return (granted & MAP_ACCESS_CONSUME) ? MAP_ACCESS_CONSUME : MAP_ACCESS_NONE;
	/*
	 * Whoever can write a map of maps can put any map fd they hold in it,
	 * whatever its mode. So its fd is at most read-only; the broker does
	 * the inserts (map_insert) after checking the inserted fd allows
	 * writing.
	 */
	if (policy_map_type_is_map_of_maps(map_type))
		return granted & MAP_ACCESS_RO;
	return granted & MAP_ACCESS_RW;
}

/* "map_types: NAME" for a type that could be granted by name; "" for one libbpf cannot name. */
static void map_type_key(char key[static 64], int map_type)
{
	const char *type = policy_map_type_to_string(map_type);

	snprintf(key, 64, "%s%s", type ? "map_types: " : "", type ?: "");
}

static int decide_map_type(const struct policy_grant *g, const struct object_map *map,
			   const char *name, struct verdict_item *it)
{
	char key[64];
	int k = 0;

	/* Default deny: what a type carries beyond data must have been granted by name. */
	for (int inner = 0; inner < 2 && k >= 0; inner++) {
		int t = inner ? map->inner_map_type : map->map_type;
		const char *type = policy_map_type_to_string(t);
		const char *what = inner ? "'s inner map" : "";

		if ((inner && !t) || policy_grant_map_type(g, t))
			continue;
		map_type_key(key, t);
		/* The kernel doesn't check an fd's mode when it goes into a map of maps. */
		if (!inner && policy_map_type_is_map_of_maps(t))
			k = verdict_item_deny(it, key,
					      "map \"%s\" is a map of maps, which your policy does "
					      "not allow (it would let your programs write any map "
					      "you hold a read-only fd of)",
					      name);
		else if (type)
			k = verdict_item_deny(it, key,
					      "map \"%s\"%s has type %s, which your policy does "
					      "not allow (types beyond plain data are granted by "
					      "name, in map_types)",
					      name, what, type);
		else
			k = verdict_item_deny(it, key,
					      "map \"%s\"%s has unknown type %d, which your policy "
					      "does not allow",
					      name, what, t);
	}
	return k;
}

static bool map_type_sized_in_bytes(int map_type)
{
	return map_type == BPF_MAP_TYPE_RINGBUF || map_type == BPF_MAP_TYPE_USER_RINGBUF;
}

/*
 * max_entries over max_map_entries, of map name or (inner) of its inner map.
 * A ring buffer's max_entries is its data size in bytes, limited by the same
 * key: said so, whether it is the map or a map of maps' inner map.
 */
static int deny_size(const struct policy_grant *g, struct verdict_item *it, const char *name,
		     bool inner, int map_type, uint32_t max_entries)
{
	char *text = NULL;

	if (!map_type_sized_in_bytes(map_type))
		return verdict_item_deny(
			it, "max_map_entries",
			"map \"%s\"%s has %" PRIu32 " entries, over your limit of %" PRIu64, name,
			inner ? "'s inner map" : "", max_entries, g->limits.max_map_entries);
	if (asprintf(&text,
		     "%s%s%s is %" PRIu32 " bytes, over your limit of %" PRIu64
		     " (policy key max_map_entries, which limits a ring buffer's size in bytes)",
		     inner ? "map \"" : "ring buffer \"", name,
		     inner ? "\"'s inner ring buffer" : "\"", max_entries,
		     g->limits.max_map_entries) < 0)
		return -ENOMEM;
	return verdict_item_add(it, "max_map_entries", text);
}

int decide_map(const struct policy_grant *g, const struct object_map *map, struct verdict_item *it)
{
	const char *name = name_or_unnamed(map->name);
	int k = 0;

	if (map->max_entries > g->limits.max_map_entries)
		k = deny_size(g, it, name, false, map->map_type, map->max_entries);
	if (k >= 0 && map->pinned && !g->pinning)
		k = verdict_item_deny(
			it, "pinning",
			"map \"%s\" is pinned by name, which your policy does not allow", name);
	/* Its inner map is a map too, for as long as the load runs. */
	if (k >= 0 && map->inner_max_entries > g->limits.max_map_entries)
		k = deny_size(g, it, name, true, map->inner_map_type, map->inner_max_entries);
	/*
	 * Flags the broker knows to change only how the map holds its data;
	 * the rest (a token or BTF object passed by fd, which the kernel would
	 * look up in the worker's table, and anything newer) is refused, by
	 * every policy: no key.
	 */
	if (k >= 0 && (map->map_flags & ~POLICY_MAP_FLAGS_KNOWN))
		k = verdict_item_deny(
			it, NULL,
			"map \"%s\" has flags 0x%" PRIx32 " the broker does not allow "
			"(it allows 0x%x)",
			name, map->map_flags & ~POLICY_MAP_FLAGS_KNOWN, POLICY_MAP_FLAGS_KNOWN);
	if (k >= 0 && (map->inner_map_flags & ~POLICY_MAP_FLAGS_KNOWN))
		k = verdict_item_deny(it, NULL,
				      "map \"%s\"'s inner map has flags 0x%" PRIx32
				      " the broker does not allow (it allows 0x%x)",
				      name, map->inner_map_flags & ~POLICY_MAP_FLAGS_KNOWN,
				      POLICY_MAP_FLAGS_KNOWN);
	if (k >= 0)
		k = decide_map_type(g, map, name, it);
	return k;
}
