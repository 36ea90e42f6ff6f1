/* SPDX-License-Identifier: MIT */
/*
 * Protected links (attach "protect", proto/NAMED.md): a cgroup link that
 * confines the processes of its cgroup and of those below it, so that none
 * of them may detach it, unload its object or change what it enforces, even
 * running as the owner's uid (a rootless container's root is its user's).
 * The record kept in the object's metadata, and the check each method that
 * could undo the link makes.
 */
#include "named_call.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/shared/cgroupfs.h"
#include "denial.h"
#include "store.h"

#define PROTECTED_KEY "protected_links"

static int64_t protected_cgroup_of(json_object *meta, uint32_t link_id)
{
	json_object *a = meta_array(meta, PROTECTED_KEY);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);

		if (meta_int(e, "link") == (int64_t)link_id)
			return meta_int(e, "cgroup_id");
	}
	return -1;
}

bool object_link_is_protected(const struct object *o, uint32_t link_id)
{
	return protected_cgroup_of(o->meta, link_id) >= 0;
}

int protect_record(struct call *c, struct reply *r, const struct object *o, int link_fd,
		   int cgroup_fd)
{
	_cleanup_json_ json_object *meta = NULL;
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);
	json_object *a, *e;
	struct stat st;
	int k;

	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, errno, "cannot query the new link: %m");
	/*
	 * The check walks directories comparing inode numbers with the link's
	 * cgroup id: if they are not the same thing here, nothing would ever be
	 * found inside, so refuse rather than protect nothing.
	 */
	if (info.type != BPF_LINK_TYPE_CGROUP || fstat(cgroup_fd, &st) < 0 ||
	    (uint64_t)st.st_ino != info.cgroup.cgroup_id)
		return reply_error(
			r, PROTO_ERR_INTERNAL, EOPNOTSUPP,
			"cannot protect the link: the kernel's cgroup id %llu is not the "
			"cgroup directory's inode number",
			(unsigned long long)info.cgroup.cgroup_id);
	/* Read again under the owner's lock: the metadata is rewritten whole. */
	k = store_meta_read(&c->cfg->store, o->owner, o->name, &meta);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read the object: %s",
				   strerror(-k));
	a = meta_array(meta, PROTECTED_KEY);
	if (!a) {
		a = json_object_new_array();
		if (json_add(meta, PROTECTED_KEY, a) < 0)
			return -ENOMEM;
	}
	e = json_object_new_object();
	if (json_append(a, e) < 0 || json_add(e, "link", json_object_new_int64(info.id)) < 0 ||
	    json_add(e, "cgroup_id", json_object_new_int64((int64_t)info.cgroup.cgroup_id)) < 0)
		return -ENOMEM;
	k = store_meta_write(&c->cfg->store, o->owner, o->name, meta);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot record the protection: %s",
				   strerror(-k));
	return 0;
}

int protect_forget(struct call *c, const struct object *o, json_object *link_ids)
{
	_cleanup_json_ json_object *meta = NULL;
	json_object *a, *kept;
	bool changed = false;
	int k;

	if (!meta_array(o->meta, PROTECTED_KEY))
		return 0;
	k = store_meta_read(&c->cfg->store, o->owner, o->name, &meta);
	if (k < 0)
		return k;
	a = meta_array(meta, PROTECTED_KEY);
	kept = json_object_new_array();
	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		bool gone = false;

		for (size_t j = 0; j < json_object_array_length(link_ids); j++)
			gone |= json_object_get_int64(json_object_array_get_idx(link_ids, j)) ==
				meta_int(e, "link");
		changed |= gone;
		if (!gone && json_append(kept, json_object_get(e)) < 0) {
			json_object_put(kept);
			return -ENOMEM;
		}
	}
	if (!changed) {
		json_object_put(kept);
		return 0;
	}
	if (json_add(meta, PROTECTED_KEY, kept) < 0)
		return -ENOMEM;
	return store_meta_write(&c->cfg->store, o->owner, o->name, meta);
}

/* Is the caller's cgroup that cgroup or below it? Unknown counts as inside. */
static bool caller_within(const struct call *c, uint64_t cgroup_id)
{
	return !c->ident.peer_cgroup || cgroupfs_path_within(c->ident.peer_cgroup, cgroup_id) != 0;
}

int protect_confines(struct call *c, const struct object *o, int64_t prog_id, int64_t link_id,
		     uint32_t *ret_link, uint64_t *ret_cgroup_id)
{
	_cleanup_free_ struct link_entry *le = NULL;
	size_t n = 0;
	int k;

	/* Root and the admin group keep their rights; most objects protect nothing. */
	if (call_is_admin(c) || !meta_array(o->meta, PROTECTED_KEY))
		return 0;
	k = object_links(o, &le, &n);
	if (k < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		int64_t recorded = protected_cgroup_of(o->meta, le[i].id);
		uint64_t id = (uint64_t)recorded;

		if (recorded < 0 || (prog_id && (int64_t)le[i].prog_id != prog_id) ||
		    (link_id && (int64_t)le[i].id != link_id))
			continue;
		/* The cgroup recorded, and the one the kernel says (the same, but for a reused id).
		 */
		if (!caller_within(c, id)) {
			if (le[i].info.type != BPF_LINK_TYPE_CGROUP)
				continue;
			id = le[i].info.cgroup.cgroup_id;
			if (!caller_within(c, id))
				continue;
		}
		*ret_link = le[i].id;
		*ret_cgroup_id = id;
		return 1;
	}
	return 0;
}

int protect_check(struct call *c, struct reply *r, const struct object *o, const char *what,
		  int64_t prog_id, int64_t link_id)
{
	uint64_t id = 0;
	uint32_t link = 0;
	int k = protect_confines(c, o, prog_id, link_id, &link, &id);

	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot list links: %s",
				   strerror(-k));
	if (k == 0)
		return 0;
	if (!c->ident.peer_cgroup)
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
			"%s refused: link %u of \"%s\" is protected and the broker could "
			"not establish the cgroup you connected from, so it counts as "
			"confined by it (cgroup id %" PRIu64 "); do it from outside that cgroup",
			what, link, o->name, id);
	return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
			    "%s refused: link %u of \"%s\" confines your own cgroup (cgroup id "
			    "%" PRIu64 ", which %s is in or below); its processes may not remove "
			    "or change it: do it from outside that cgroup",
			    what, link, o->name, id, c->ident.peer_cgroup);
}
