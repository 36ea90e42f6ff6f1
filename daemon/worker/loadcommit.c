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

static json_object *job_meta_new(struct job *j, const char *dir, int *ret_err)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	json_object *meta = json_object_new_object(), *progs = json_object_new_array();
	json_object *maps = json_object_new_array(), *shares = json_object_new_array();
	size_t n = 0;
	int k = caps_set_effective(bpf_cap, 1);

	if (!meta || !progs || !maps || !shares || k < 0) {
		json_object_put(meta);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(shares);
		*ret_err = k < 0 ? k : -ENOMEM;
		caps_clear_effective();
		return NULL;
	}
	json_object_object_add(meta, "name", json_object_new_string(j->req.name));
	json_object_object_add(meta, "owner", json_object_new_int64(j->id.uid));
	json_object_object_add(meta, "loaded_at", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(meta, "programs", progs);
	json_object_object_add(meta, "maps", maps);
	json_object_object_add(meta, "shares", shares);
	/* A vetted object keeps its vetted grant at later requests (vetted_grant_now()). */
	if (j->vetted[0]) {
		json_object_object_add(meta, "vetted", json_object_new_string(j->vetted));
		json_object_object_add(meta, "digest", json_object_new_string(j->vetted_digest));
	}
	for (size_t i = 0; i < j->desc.n_programs && k >= 0; i++) {
		const struct object_program *p = &j->desc.programs[i];
		int fd = job_prog_fd(j, i);
		json_object *o;
		uint32_t id = 0;
		char tag[17] = "", pin[24];

		if (!p->load || fd < 0)
			continue;
		id = j->prog_info[i].id;
		handout_prog_tag(&j->prog_info[i], tag);
		k = pin_into(dir, 'p', n, fd);
		snprintf(pin, sizeof(pin), "p%zu", n++);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(policy_prog_type_to_string(p->prog_type)
						       ?: "unspec"));
		json_object_object_add(o, "prog_type", json_object_new_int(p->prog_type));
		json_object_object_add(o, "expected_attach_type",
				       json_object_new_int(p->attach_type));
		if (attach_type_to_string(p->attach_type))
			json_object_object_add(
				o, "attach_type",
				json_object_new_string(attach_type_to_string(p->attach_type)));
		json_object_object_add(o, "id", json_object_new_int64(id));
		json_object_object_add(o, "tag", json_object_new_string(tag));
		json_object_object_add(o, "insns", json_object_new_int64(p->insn_cnt));
		json_object_object_add(o, "test_run_only",
				       json_object_new_boolean(j->verdict.test_run_only[i]));
		json_object_object_add(o, "pin", json_object_new_string(pin));
		json_object_array_add(progs, o);
	}
	n = 0;
	for (size_t i = 0; i < j->desc.n_maps && k >= 0; i++) {
		const struct object_map *m = &j->desc.maps[i];
		int map_fd = job_map_fd(j, i);
		const struct bpf_map_info info = j->map_info[i];
		json_object *o;
		char pin[24];

		if (map_fd < 0)
			continue;
		k = pin_into(dir, 'm', n, map_fd);
		snprintf(pin, sizeof(pin), "m%zu", n++);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(m->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown"));
		json_object_object_add(o, "id", json_object_new_int64(info.id));
		json_object_object_add(o, "key_size", json_object_new_int64(info.key_size));
		json_object_object_add(o, "value_size", json_object_new_int64(info.value_size));
		json_object_object_add(o, "max_entries", json_object_new_int64(info.max_entries));
		json_object_object_add(o, "map_flags", json_object_new_int64(info.map_flags));
		json_object_object_add(o, "btf_key_type_id",
				       json_object_new_int64(info.btf_key_type_id));
		json_object_object_add(o, "btf_value_type_id",
				       json_object_new_int64(info.btf_value_type_id));
		json_object_object_add(o, "pin", json_object_new_string(pin));
		json_object_array_add(maps, o);
		if (info.btf_id)
			json_object_object_add(meta, "btf_id", json_object_new_int64(info.btf_id));
	}
	caps_clear_effective();
	for (size_t i = 0; i < j->req.n_shares; i++) {
		const struct proto_share *sh = &j->req.shares[i];
		json_object *o = json_object_new_object();
		uint32_t who = 0;

		if (sh->user)
			identity_parse_user(sh->user, &who);
		else
			identity_parse_group(sh->group, &who);
		json_object_object_add(o, "map", json_object_new_string(sh->map));
		json_object_object_add(o, sh->user ? "uid" : "gid", json_object_new_int64(who));
		json_object_object_add(o, "access", json_object_new_string(sh->access));
		json_object_array_add(shares, o);
	}
	if (k < 0) {
		json_object_put(meta);
		*ret_err = k;
		return NULL;
	}
	return meta;
}

/* Pin everything, then commit by writing the metadata (see store.h for why in this order). */
int job_commit_named(struct job *j, struct reply *r, json_object *result)
{
	const struct store_config *c = &j->cfg->store;
	char dir[PATH_MAX];
	json_object *meta;
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
	meta = job_meta_new(j, dir, &k);
	if (meta) {
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
