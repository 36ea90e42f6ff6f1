/* SPDX-License-Identifier: MIT */
/*
 * A named load's commit: its shares checked, its programs and maps pinned, its metadata written
 * last.
 */
#include "job.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/shared/caps.h"
#include "denial.h"
#include "common/json.h"
#include "handout.h"
#include "identity.h"
#include "policy/attach_type.h"
#include "proto/proto.h"
#include "reply.h"
#include "store.h"

/* An owner's shares: each names a real map, a real principal, and no more than the owner has. */
int job_check_shares(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->req.n_shares; i++) {
		const struct proto_share *sh = &j->req.shares[i];
		enum map_access want;
		uint32_t who;
		int m = job_map_index(j, sh->map);
		int k = sh->user ? identity_parse_user(sh->user, &who)
				 : identity_parse_group(sh->group, &who);

		if (m < 0)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "shares[%zu]: the object has no map \"%s\"", i, sh->map);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "shares[%zu]: there is no %s \"%s\"", i,
					   sh->user ? "user" : "group", sh->user ?: sh->group);
		if (map_access_from_string(sh->access, &want) < 0 || want == MAP_ACCESS_NONE)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "shares[%zu]: access must be ro, wo, rw or consume", i);
		if ((want & j->verdict.map_access[m]) != want) {
			/* What no grant gives a map of its type, no key can lift. */
			bool possible = job_access_possible(j, m, want);

			return denial_reply(
				r, PROTO_ERR_DENIED, EPERM, "map", sh->map, possible ? "maps" : "",
				"shares[%zu]: you may not share map \"%s\" as %s: your "
				"own access to it is %s%s",
				i, sh->map, sh->access,
				map_access_to_string(j->verdict.map_access[m]),
				possible ? ""
					 : " (and no policy grants that access to a map "
					   "of its type)");
		}
	}
	return 0;
}

static int pin_into(const char *dir, char kind, size_t i, int fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%c%zu", dir, kind, i);
	return bpf_obj_pin(fd, path) < 0 ? negative_errno() : 0;
}

/* Program i pinned as p<n> and described in progs: 0 or -errno. */
static int meta_add_program(struct job *j, size_t i, const char *dir, size_t n, json_object *progs)
{
	const struct object_program *p = &j->desc.programs[i];
	const char *attach = attach_type_to_string(p->attach_type);
	char tag[17] = "", pin[24];
	json_object *o;
	int k;

	handout_prog_tag(&j->prog_info[i], tag);
	k = pin_into(dir, 'p', n, job_prog_fd(j, i));
	if (k < 0)
		return k;
	snprintf(pin, sizeof(pin), "p%zu", n);
	o = json_object_new_object();
	/* o is progs' from here on, also when a member below cannot be added. */
	if (json_append(progs, o) < 0 || json_add(o, "name", json_object_new_string(p->name)) < 0 ||
	    json_add(o, "type",
		     json_object_new_string(policy_prog_type_to_string(p->prog_type) ?: "unspec")) <
		    0 ||
	    json_add(o, "prog_type", json_object_new_int(p->prog_type)) < 0 ||
	    json_add(o, "expected_attach_type", json_object_new_int(p->attach_type)) < 0 ||
	    (attach && json_add(o, "attach_type", json_object_new_string(attach)) < 0) ||
	    json_add(o, "id", json_object_new_int64(j->prog_info[i].id)) < 0 ||
	    json_add(o, "tag", json_object_new_string(tag)) < 0 ||
	    json_add(o, "insns", json_object_new_int64(p->insn_cnt)) < 0 ||
	    json_add(o, "test_run_only", json_object_new_boolean(j->verdict.test_run_only[i])) <
		    0 ||
	    json_add(o, "pin", json_object_new_string(pin)) < 0)
		return -ENOMEM;
	return 0;
}

/* Map i pinned as m<n> and described in maps: 0 or -errno. */
static int meta_add_map(struct job *j, size_t i, const char *dir, size_t n, json_object *maps)
{
	const struct object_map *m = &j->desc.maps[i];
	const struct bpf_map_info info = j->map_info[i];
	char pin[24];
	json_object *o;
	int k;

	k = pin_into(dir, 'm', n, job_map_fd(j, i));
	if (k < 0)
		return k;
	snprintf(pin, sizeof(pin), "m%zu", n);
	o = json_object_new_object();
	/* o is maps' from here on, also when a member below cannot be added. */
	if (json_append(maps, o) < 0 || json_add(o, "name", json_object_new_string(m->name)) < 0 ||
	    json_add(o, "type",
		     json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown")) <
		    0 ||
	    json_add(o, "id", json_object_new_int64(info.id)) < 0 ||
	    json_add(o, "key_size", json_object_new_int64(info.key_size)) < 0 ||
	    json_add(o, "value_size", json_object_new_int64(info.value_size)) < 0 ||
	    json_add(o, "max_entries", json_object_new_int64(info.max_entries)) < 0 ||
	    json_add(o, "map_flags", json_object_new_int64(info.map_flags)) < 0 ||
	    json_add(o, "btf_key_type_id", json_object_new_int64(info.btf_key_type_id)) < 0 ||
	    json_add(o, "btf_value_type_id", json_object_new_int64(info.btf_value_type_id)) < 0 ||
	    json_add(o, "pin", json_object_new_string(pin)) < 0)
		return -ENOMEM;
	return 0;
}

/* Pin the loaded programs and maps and describe them in meta's "programs" and "maps". */
static int meta_add_pins(struct job *j, const char *dir, json_object *meta)
{
	json_object *progs = json_object_object_get(meta, "programs");
	json_object *maps = json_object_object_get(meta, "maps");
	size_t n = 0;
	int k;

	for (size_t i = 0; i < j->desc.n_programs; i++) {
		if (!j->desc.programs[i].load || job_prog_fd(j, i) < 0)
			continue;
		k = meta_add_program(j, i, dir, n++, progs);
		if (k < 0)
			return k;
	}
	n = 0;
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		if (job_map_fd(j, i) < 0)
			continue;
		k = meta_add_map(j, i, dir, n++, maps);
		if (k < 0)
			return k;
		if (j->map_info[i].btf_id &&
		    json_add(meta, "btf_id", json_object_new_int64(j->map_info[i].btf_id)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The share, as the metadata keeps it: with the uid or gid its name had at load time. */
static int meta_add_share(const struct proto_share *sh, json_object *shares)
{
	json_object *o;
	uint32_t who = 0;
	int k;

	/*
	 * Checked at the start of the load; a name gone since must not become
	 * uid or gid 0 (root's group) in the metadata: refused instead.
	 */
	k = sh->user ? identity_parse_user(sh->user, &who) : identity_parse_group(sh->group, &who);
	if (k < 0)
		return k;
	o = json_object_new_object();
	/* o is shares' from here on, also when a member below cannot be added. */
	if (json_append(shares, o) < 0 || json_add(o, "map", json_object_new_string(sh->map)) < 0 ||
	    json_add(o, sh->user ? "uid" : "gid", json_object_new_int64(who)) < 0 ||
	    json_add(o, "access", json_object_new_string(sh->access)) < 0)
		return -ENOMEM;
	return 0;
}

/* The object's metadata, its programs and maps pinned into dir on the way: 0 or -errno. */
static int job_meta_new(struct job *j, const char *dir, json_object **ret)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	_cleanup_json_ json_object *meta = json_object_new_object();
	json_object *shares;
	int k;

	if (json_add(meta, "name", json_object_new_string(j->req.name)) < 0 ||
	    json_add(meta, "owner", json_object_new_int64(j->id.uid)) < 0 ||
	    json_add(meta, "loaded_at", json_object_new_int64((int64_t)time(NULL))) < 0 ||
	    json_add(meta, "programs", json_object_new_array()) < 0 ||
	    json_add(meta, "maps", json_object_new_array()) < 0 ||
	    json_add(meta, "shares", json_object_new_array()) < 0)
		return -ENOMEM;
	/* A vetted object keeps its vetted grant at later requests (vetted_grant_now()). */
	if (j->vetted[0] &&
	    (json_add(meta, "vetted", json_object_new_string(j->vetted)) < 0 ||
	     json_add(meta, "digest", json_object_new_string(j->vetted_digest)) < 0))
		return -ENOMEM;
	k = caps_set_effective(bpf_cap, 1);
	if (k >= 0)
		k = meta_add_pins(j, dir, meta);
	caps_clear_effective();
	if (k < 0)
		return k;
	shares = json_object_object_get(meta, "shares");
	for (size_t i = 0; i < j->req.n_shares; i++) {
		k = meta_add_share(&j->req.shares[i], shares);
		if (k < 0)
			return k;
	}
	*ret = TAKE_PTR(meta);
	return 0;
}

/* Pin everything, then commit by writing the metadata (see store.h for why in this order). */
int job_commit_named(struct job *j, struct reply *r, json_object *result)
{
	const struct store_config *c = &j->cfg->store;
	char dir[PATH_MAX];
	json_object *meta = NULL;
	int k;

	/* Named in the result before the commit: once committed, nothing may fail. */
	k = json_add(result, "name", json_object_new_string(j->req.name));
	if (k < 0)
		return k;
	k = store_object_dir(c, j->id.uid, j->req.name, dir, sizeof(dir));
	if (k >= 0)
		k = store_object_dir_create(c, j->id.uid, j->req.name);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot create the directory for \"%s\": %s", j->req.name,
				   strerror(-k));
	k = job_meta_new(j, dir, &meta);
	if (k >= 0) {
		store_fault(c, "load-pinned");
		k = store_meta_write(c, j->id.uid, j->req.name, meta);
		json_object_put(meta);
	}
	if (k < 0) {
		store_object_remove_pins(c, j->id.uid, j->req.name);
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot keep \"%s\" loaded: %s",
				   j->req.name, strerror(-k));
	}
	store_fault(c, "load-committed");
	return 0;
}
