/* SPDX-License-Identifier: MIT */
/*
 * Methods "map_insert" (the one way into a map of maps) and "map" (map operations on the caller's
 * behalf).
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "common/fdinfo.h"
#include "denial.h"
#include "handout.h"
#include "mapop.h"

/*
 * The kernel takes any map fd into a map of maps without looking at its mode,
 * and the program can then write the inner map. So clients never get a
 * writable fd of a map of maps; instead they ask the broker, which inserts
 * only maps they hold a read-write fd of.
 */
int named_map_insert(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	const struct proto_map_insert_params *p = c->req;
	_cleanup_close_ int outer = -EBADF;
	const char *ref = p->object, *map = p->map;
	const uint8_t *key = p->key.data;
	json_object *m, *result;
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	size_t key_size = p->key.size;
	int64_t fd_index = p->fd;
	uint64_t frozen = 0;
	int k, inner_fd, value;

	if ((size_t)fd_index >= c->n_fds)
		return reply_error(r, PROTO_ERR_FDS, EBADF,
				   "\"fd\" must be the index of the inner map's fd, sent with the "
				   "request");
	inner_fd = c->fds[fd_index];
	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k == 0)
		k = protect_check(c, r, &o, "map_insert", 0, 0);
	if (k != 0)
		return k;
	m = meta_find(o.meta, "maps", map);
	if (!m || !meta_map_is_map_of_maps(o.meta, map))
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "object \"%s\" has no map of maps \"%s\"", o.name, map);
	/* The policy's grant for the outer map still says whether you may change it at all. */
	if (!(policy_grant_map_access(c->grant, map) & MAP_ACCESS_WO))
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "map", map, "maps",
				    "your policy does not let you write map \"%s\"", map);
	if (bpf_obj_get_info_by_fd(inner_fd, &info, &len) < 0)
		return reply_error(r, PROTO_ERR_INVALID, EBADF, "the fd sent is not a BPF map");
	/*
	 * Two kinds of O_RDWR fd do not mean the right to write the map: a
	 * ring buffer's is the right to consume it (inserted, programs could
	 * write records into it), a frozen map's may be an ro grant (see
	 * handout_map_fd()).
	 */
	if (info.type == BPF_MAP_TYPE_RINGBUF)
		return denial_reply(r, PROTO_ERR_DENIED, EACCES, "map", map, NULL,
				    "map %u is a ring buffer: its fd is for consuming it, and a "
				    "map of maps would let programs write records into it",
				    info.id);
	k = fdinfo_get_u64(inner_fd, "frozen", &frozen);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot tell whether map %u is frozen: %s", info.id,
				   strerror(-k));
	if (frozen)
		return denial_reply(r, PROTO_ERR_DENIED, EACCES, "map", map, NULL,
				    "map %u is frozen: its fd may be a read-only grant, and a map "
				    "of maps would let programs write it",
				    info.id);
	if ((fcntl(inner_fd, F_GETFL) & O_ACCMODE) != O_RDWR)
		return denial_reply(
			r, PROTO_ERR_DENIED, EACCES, "map", map, NULL,
			"map %u is not writable through the fd you sent: a map of maps "
			"would let programs write it, so it takes only maps you may write",
			info.id);
	if ((uint32_t)key_size != (uint32_t)meta_int(m, "key_size"))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL, "map \"%s\" takes %lld-byte keys",
				   map, (long long)meta_int(m, "key_size"));
	outer = pin_open(&o, m);
	if (outer < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -outer, "cannot open map \"%s\": %s", map,
				   strerror(-outer));
	value = inner_fd;
	if (bpf_map_update_elem(outer, key, &value, BPF_ANY) < 0)
		return reply_error(r, PROTO_ERR_LOAD, errno,
				   "the kernel refused map %u in \"%s\": %m (an inner map must "
				   "match the outer map's template)",
				   info.id, map);
	result = json_object_new_object();
	if (json_add(result, "inserted", json_object_new_int64(info.id)) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply_result(r, result);
}

/*
 * For callers whose own bpf() calls fail on the fds they hold (before Linux
 * 6.5 with unprivileged BPF disabled, or under a seccomp filter): the broker
 * does the operation, allowed by the access decided now, as for fds.
 */
int named_map(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	const struct proto_map_request *req = c->req;
	_cleanup_(btf_view_done) struct btf_view btf = {};
	_cleanup_close_ int fd = -EBADF;
	enum map_access a = MAP_ACCESS_NONE, most;
	struct mapop_btf mb = {};
	json_object *m;
	int type, k;

	k = object_open(c, r, req->object, VISIBLE_SHARED, &o);
	if (k != 0)
		return k;
	m = meta_find(o.meta, "maps", req->map);
	if (m)
		a = object_map_access(c, &o, req->map);
	/* Others don't learn of maps not shared with them (as for fds). */
	if (!m || (a == MAP_ACCESS_NONE && !o.is_owner))
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "object \"%s\" has no map \"%s\"%s", req->object, req->map,
				   o.is_owner ? "" : " shared with you");
	if (a == MAP_ACCESS_NONE) /* only the owner gets here (above) */
		return denial_reply(r, PROTO_ERR_DENIED, EACCES, "map", req->map, "maps",
				    "your policy grants you no access to map \"%s\"", req->map);
	fd = pin_open(&o, m);
	if (fd < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -fd, "cannot open map \"%s\": %s",
				   req->map, strerror(-fd));
	if (req->op == PROTO_MAP_BTF || req->op == PROTO_MAP_INFO) {
		json_object *mm = meta_array(o.meta, "maps");

		k = object_btf_view(c, &o, req->op == PROTO_MAP_BTF, &btf);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot read the object's BTF: %s", strerror(-k));
		mb = (struct mapop_btf){.data = btf.data, .size = btf.size};
		for (size_t i = 0; i < btf.n_maps; i++)
			if (json_object_array_get_idx(mm, i) == m) {
				mb.key_type_id = btf.ids[2 * i];
				mb.value_type_id = btf.ids[2 * i + 1];
			}
	}
	/* The most a grant could give ("maps", or "shared" for others), as the type caps it. */
	type = meta_map_type(o.meta, req->map);
	most = o.is_owner ? policy_map_access_for_type(MAP_ACCESS_RW | MAP_ACCESS_CONSUME, type)
			  : share_access_for_type(MAP_ACCESS_RW, type);
	if (req->op == PROTO_MAP_UPDATE || req->op == PROTO_MAP_DELETE) {
		k = protect_check(c, r, &o, "writing a map", 0, 0);
		if (k != 0)
			return k;
	}
	return mapop_run(fd, &mb, req->map, a, most, o.is_owner ? "maps" : "shared", req, r);
}
