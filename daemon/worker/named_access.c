/* SPDX-License-Identifier: MIT */
/*
 * Who gets which access to a map of a named object, decided now: the owner by the policy, anyone
 * else by shares, capped by the map's type.
 */
#include "named_call.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "mapop.h"

/* What an owner's share entries grant this identity for map (before capping). */
static enum map_access owner_share_access(json_object *meta, const struct policy_identity *id,
					  const char *map)
{
	json_object *shares = meta_array(meta, "shares");
	unsigned access = MAP_ACCESS_NONE;

	for (size_t i = 0; shares && i < json_object_array_length(shares); i++) {
		json_object *s = json_object_array_get_idx(shares, i), *v;
		const char *m = meta_string(s, "map");
		enum map_access a;
		bool who;

		if (!m || strcmp(m, map) != 0 ||
		    map_access_from_string(meta_string(s, "access"), &a) < 0)
			continue;
		if (json_object_object_get_ex(s, "uid", &v))
			who = (int64_t)id->uid == json_object_get_int64(v);
		else if (json_object_object_get_ex(s, "gid", &v))
			who = identity_in_group(id, (gid_t)json_object_get_int64(v));
		else
			who = false;
		if (who)
			access |= a;
	}
	return (enum map_access)access;
}

/* The map's type as the metadata names it (libbpf's name), or -1. */
int meta_map_type(json_object *meta, const char *map)
{
	json_object *m = meta_find(meta, "maps", map);
	const char *type = m ? meta_string(m, "type") : NULL;

	for (int t = 0; type && t < 64; t++) {
		const char *s = libbpf_bpf_map_type_str(t);

		if (s && strcmp(s, type) == 0)
			return t;
	}
	return -1;
}

bool meta_map_is_map_of_maps(json_object *meta, const char *map)
{
	return policy_map_type_is_map_of_maps(meta_map_type(meta, map));
}

/*
 * A share grants access to data, nothing more. Anyone but the owner writes
 * only through the broker's map method, which writes plain data and nothing
 * else: a map whose values are programs, sockets, devices, CPUs or maps (or
 * that holds no plain data at all) is at most readable for them, and then
 * only through the broker too (see object_map_fd_access()). A ring buffer
 * is not shared at all: consuming takes its records from every other
 * consumer.
 */
enum map_access share_access_for_type(unsigned granted, int type)
{
	enum map_access a;

	if (type < 0 || type == BPF_MAP_TYPE_RINGBUF)
		return MAP_ACCESS_NONE;
	a = policy_map_access_for_type((enum map_access)granted, type);
	if (mapop_class_of((unsigned)type) != MAPOP_DATA)
		a &= MAP_ACCESS_RO;
	return a;
}

/*
 * The access the caller gets to one map of the object, decided now: the
 * owner gets what the policy grants them; anyone else what the policy shares
 * with them, plus what the owner shared, which can never exceed what the
 * owner may do themselves.
 */
enum map_access object_map_access(const struct call *c, const struct object *o, const char *map)
{
	int type = meta_map_type(o->meta, map);
	unsigned a;

	/*
	 * As for a load: a map of maps is never writable (an fd of any mode put
	 * in it would be, see map_insert), a ring buffer comes only for consume.
	 */
	if (o->is_owner)
		return policy_map_access_for_type(policy_grant_map_access(c->grant, map), type);
	a = policy_grant_shared_access(c->grant, o->owner, o->name, map);
	a |= owner_share_access(o->meta, &c->ident.id, map) &
	     policy_grant_map_access(o->owner_grant, map);
	return share_access_for_type(a, type);
}

/*
 * The mode of the fd the caller gets for a map it has access a to. The
 * owner's fd carries its access. Anyone else never gets a writable fd: a
 * write fd can freeze the map (BPF_MAP_FREEZE needs no more), after which
 * the owner's own writes fail, and a map whose values are fds takes the
 * holder's programs, sockets and maps. So they get a read-only fd of a map
 * of plain data they may read, and no fd otherwise: their writes (and reads
 * of other maps) go through the broker's map method, which offers no freeze
 * and writes no fds.
 */
enum map_access object_map_fd_access(const struct object *o, const char *map, enum map_access a)
{
	int type = meta_map_type(o->meta, map);

	if (o->is_owner)
		return a;
	if (type < 0 || mapop_class_of((unsigned)type) != MAPOP_DATA)
		return MAP_ACCESS_NONE;
	return a & MAP_ACCESS_RO;
}

bool object_visible_as_shared(const struct call *c, const struct object *o)
{
	json_object *maps = meta_array(o->meta, "maps");

	for (size_t i = 0; maps && i < json_object_array_length(maps); i++) {
		const char *m = meta_string(json_object_array_get_idx(maps, i), "name");

		if (m && object_map_access(c, o, m) != MAP_ACCESS_NONE)
			return true;
	}
	return false;
}
