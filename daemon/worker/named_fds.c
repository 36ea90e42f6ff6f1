/* SPDX-License-Identifier: MIT */
/* Method "fds": fresh fds of a named object's programs and maps, with the modes decided now. */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "daemon/shared/log.h"
#include "denial.h"
#include "handout.h"

int named_fds(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	_cleanup_(btf_view_done) struct btf_view btf = {};
	json_object *mp, *mm, *result = NULL, *progs = NULL, *maps = NULL;
	const char *ref = ((const struct proto_object_params *)c->req)->object;
	uint64_t cgroup_id;
	uint32_t link;
	bool confined, vetted;
	int k, fd, idx = -1;

	k = object_open(c, r, ref, VISIBLE_SHARED, &o);
	if (k != 0)
		return k;
	/* A protected link's cgroup gets no writable fd: writing a map changes what it enforces. */
	k = protect_confines(c, &o, 0, 0, &link, &cgroup_id);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot list links: %s",
				   strerror(-k));
	confined = k > 0;
	vetted = meta_string(o.meta, "vetted") != NULL;
	k = object_btf_view(c, &o, false, &btf);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read the object's BTF: %s",
				   strerror(-k));
	mp = meta_array(o.meta, "programs");
	mm = meta_array(o.meta, "maps");
	result = json_object_new_object();
	progs = json_object_new_array();
	maps = json_object_new_array();
	if (!result || !progs || !maps ||
	    json_add(result, "allowed", json_object_new_boolean(true)) < 0 ||
	    json_add(result, "name", json_object_new_string(o.name)) < 0 ||
	    json_add(result, "owner", json_object_new_int64(o.owner)) < 0 ||
	    json_add(result, "programs", TAKE_PTR(progs)) < 0 ||
	    json_add(result, "maps", TAKE_PTR(maps)) < 0) {
		json_object_put(result);
		json_object_put(progs);
		json_object_put(maps);
		return -ENOMEM;
	}
	progs = meta_array(result, "programs");
	maps = meta_array(result, "maps");
	/*
	 * Owned by result from here on; reply_error() below frees a half-built
	 * reply. After a refusal (k > 0) result is gone, progs and maps with it.
	 */
	k = reply_result(r, result);
	if (k != 0)
		return k;
	for (size_t i = 0; o.is_owner && mp && i < json_object_array_length(mp); i++) {
		json_object *p = json_object_array_get_idx(mp, i), *e = json_object_new_object(),
			    *v;
		int type = (int)meta_int(p, "prog_type");
		bool test_run_only = !policy_grant_prog_type(c->grant, type);
		static const char *const pkeys[] = {"name", "type", "attach_type",
						    "id",   "tag",  "insns"};

		if (json_append(progs, e) < 0)
			return -ENOMEM;
		for (size_t n = 0; n < ARRAY_SIZE(pkeys); n++)
			if (json_object_object_get_ex(p, pkeys[n], &v) &&
			    json_add(e, pkeys[n], json_object_get(v)) < 0)
				return -ENOMEM;
		if (json_add(e, "test_run_only", json_object_new_boolean(test_run_only)) < 0)
			return -ENOMEM;
		/*
		 * As for load: the fd is the right to attach, so only where the policy
		 * says so now; and never to a protected link's own cgroup, since with a
		 * program fd it could test-run the program (no capability needed on
		 * Linux 6.5 and later), and a run may write the object's maps. Never of
		 * a vetted object (loaded as one: its grant may have lapsed since), whose
		 * programs are never test-run.
		 */
		if (test_run_only || confined || vetted || !policy_grant_prog_fd(c->grant, type))
			continue;
		fd = pin_open(&o, p);
		k = fd < 0 ? fd : reply_add_fd(r, fd, &idx);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot open program \"%s\": %s", meta_string(p, "name"),
					   strerror(-k));
		if (k > 0)
			return k;
		if (json_add(e, "fd", json_object_new_int(idx)) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; mm && i < json_object_array_length(mm); i++) {
		json_object *m = json_object_array_get_idx(mm, i), *e, *v;
		const char *name = meta_string(m, "name");
		enum map_access a = name ? object_map_access(c, &o, name) : MAP_ACCESS_NONE, fa;
		static const char *const mkeys[] = {
			"name", "type", "id", "key_size", "value_size", "max_entries", "map_flags"};
		struct handout_map h = {};
		uint32_t key_id, value_id;
		int pinfd;

		if (confined)
			a = (enum map_access)(a & ~MAP_ACCESS_WO);
		if (!o.is_owner && a == MAP_ACCESS_NONE)
			continue; /* others don't even learn of maps not shared with them */
		e = json_object_new_object();
		if (json_append(maps, e) < 0)
			return -ENOMEM;
		for (size_t n = 0; n < ARRAY_SIZE(mkeys); n++)
			if (json_object_object_get_ex(m, mkeys[n], &v) &&
			    json_add(e, mkeys[n], json_object_get(v)) < 0)
				return -ENOMEM;
		/* Type ids in the BTF this caller gets, which for others is not the object's. */
		key_id = btf.ids[2 * i];
		value_id = btf.ids[2 * i + 1];
		if (json_add(e, "btf_key_type_id", json_object_new_int64(key_id)) < 0 ||
		    json_add(e, "btf_value_type_id", json_object_new_int64(value_id)) < 0 ||
		    json_add(e, "access", json_object_new_string(map_access_to_string(a))) < 0)
			return -ENOMEM;
		if (a == MAP_ACCESS_NONE)
			continue;
		fa = object_map_fd_access(&o, name, a);
		if (json_add(e, "fd_access", json_object_new_string(map_access_to_string(fa))) < 0)
			return -ENOMEM;
		if (fa == MAP_ACCESS_NONE)
			continue; /* the broker's map method does what a is, see NAMED.md */
		if (fa != MAP_ACCESS_RW) {
			char msg[2048];

			if (handout_check_bpffs(msg, sizeof(msg)) < 0)
				return denial_reply(r, PROTO_ERR_DENIED, EACCES, "map", name, NULL,
						    "%s", msg);
		}
		pinfd = pin_open(&o, m);
		fd = pinfd < 0 ? pinfd : handout_map_fd(pinfd, fa, &h);
		safe_close(pinfd);
		k = fd < 0 ? fd : reply_add_fd(r, fd, &idx);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot open map \"%s\" with %s access: %s", name,
					   map_access_to_string(fa), strerror(-k));
		if (k > 0)
			return k;
		if (json_add(e, "map_flags", json_object_new_int64(h.map_flags)) < 0 ||
		    json_add(e, "frozen", json_object_new_boolean(h.frozen)) < 0 ||
		    json_add(e, "fd", json_object_new_int(idx)) < 0)
			return -ENOMEM;
	}
	/* Type information is a convenience: without it the maps are still there. */
	fd = btf_view_fd(c, &o, &btf);
	if (fd < 0 && fd != -ENOENT)
		log_warning("no BTF fd for uid %u of %u/%s: %s", (unsigned)c->ident.id.uid,
			    (unsigned)o.owner, o.name, strerror(-fd));
	if (fd >= 0) {
		k = reply_add_fd(r, fd, &idx);
		if (k > 0)
			return k;
		/* Without room for it (-ETOOMANYREFS), as without it. */
		if (k == 0 && json_add(result, "btf_fd", json_object_new_int(idx)) < 0)
			return -ENOMEM;
	}
	return 0;
}
