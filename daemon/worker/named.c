/* SPDX-License-Identifier: MIT */
#include "named.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <sched.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "daemon/shared/audit.h"
#include "btffilter.h"
#include "daemon/shared/caps.h"
#include "common/fdinfo.h"
#include "common/macro.h"
#include "denial.h"
#include "handout.h"
#include "identity.h"
#include "ledger.h"
#include "daemon/shared/log.h"
#include "mapop.h"
#include "netns.h"
#include "policy/attach_type.h"
#include "proto/proto.h"
#include "reply.h"
#include "store.h"
#include "uprobe.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The kernel's internal "not supported" (524), which BPF_PROG_TEST_RUN leaks to users. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

/* tcx (Linux 6.6), newer than these headers. */
#define ATTACH_TCX_INGRESS 46
#define ATTACH_TCX_EGRESS 47
#define LINK_TYPE_TCX 11

#define TEST_RUN_MAX_DATA (16u * 1024)
#define TEST_RUN_MAX_CTX (4u * 1024)
/* Room for programs that grow the packet (bpf_xdp_adjust_tail and the like). */
#define TEST_RUN_DATA_OUT_SLACK 4096u
#define TEST_RUN_MAX_REPEAT 1000000

static void json_putp(json_object **o)
{
	json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

/* One request: who asks, under which policy, with what. */
struct call {
	const struct policy *policy;
	const struct load_config *cfg;
	struct identity ident;
	struct policy_grant *grant; /* the caller's */
	json_object *job; /* the whole job, as the event loop sent it */
	json_object *params;
	int *fds; /* the client's */
	size_t n_fds;
	int netns; /* the caller's network namespace, from the event loop (attach only), or -1 */
	/* A uprobe target's /proc/PID/status (uprobe_status_open()), or -1 and why not. */
	int target_status;
	int target_status_error;
	char target_desc[160]; /* what an attach attached to, where params don't say it all */
	int lock;
	/* For list and show: the kernel's links, walked once per request, not per object. */
	struct link_entry *links;
	size_t n_links;
	bool have_links;
	/* And the last owner's name: one user database lookup per owner, not per object. */
	uid_t owner_name_uid;
	char owner_name[64];
};

/* A named object as the request sees it. */
struct object {
	uid_t owner;
	char name[PROTO_MAX_OBJECT_NAME + 1];
	json_object *meta;
	char dir[PATH_MAX];
	bool is_owner;
	/* The owner's current grant, for what they share (NULL for the owner's own calls). */
	struct policy_grant *owner_grant;
};

static void object_done(struct object *o)
{
	json_object_put(o->meta);
	policy_grant_free(o->owner_grant);
}

static void call_done(struct call *c)
{
	free(c->links);
	identity_done(&c->ident);
	policy_grant_free(c->grant);
	safe_close(c->lock);
	safe_close(c->target_status);
}

static bool call_is_admin(const struct call *c)
{
	return c->ident.id.uid == 0 ||
	       (c->cfg->have_admin_gid && identity_in_group(&c->ident.id, c->cfg->admin_gid));
}

static const char *meta_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int64_t meta_int(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int64(v);
}

static json_object *meta_array(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

static json_object *meta_find(json_object *meta, const char *key, const char *name)
{
	json_object *a = meta_array(meta, key);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *n = meta_string(e, "name");

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return NULL;
}

static int param_string(struct call *c, struct reply *r, const char *key, bool required,
			const char **ret)
{
	_cleanup_free_ char *error = NULL;
	int k = proto_get_string(c->params, key, required, ret, &error);

	if (k < 0)
		return reply_error(r, PROTO_E_INVALID, -k, "%s", error ? error : "invalid request");
	return 1;
}

static int param_check_keys(struct call *c, struct reply *r, const char *what,
			    const char *const *keys)
{
	_cleanup_free_ char *error = NULL;
	int k = proto_check_keys(c->params, what, keys, &error);

	if (k < 0)
		return reply_error(r, PROTO_E_INVALID, -k, "%s", error ? error : "invalid request");
	return 1;
}

/* ---- access ---- */

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
static int meta_map_type(json_object *meta, const char *map)
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

static bool meta_map_is_map_of_maps(json_object *meta, const char *map)
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
static enum map_access share_access_for_type(unsigned granted, int type)
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
static enum map_access object_map_access(const struct call *c, const struct object *o,
					 const char *map)
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
static enum map_access object_map_fd_access(const struct object *o, const char *map,
					    enum map_access a)
{
	int type = meta_map_type(o->meta, map);

	if (o->is_owner)
		return a;
	if (type < 0 || mapop_class_of((unsigned)type) != MAPOP_DATA)
		return MAP_ACCESS_NONE;
	return a & MAP_ACCESS_RO;
}

static bool object_visible_as_shared(const struct call *c, const struct object *o)
{
	json_object *maps = meta_array(o->meta, "maps");

	for (size_t i = 0; maps && i < json_object_array_length(maps); i++) {
		const char *m = meta_string(json_object_array_get_idx(maps, i), "name");

		if (m && object_map_access(c, o, m) != MAP_ACCESS_NONE)
			return true;
	}
	return false;
}

/* ---- finding objects ---- */

static int object_load(struct call *c, uid_t owner, const char *name, struct object *ret)
{
	struct object o = {.owner = owner, .is_owner = owner == c->ident.id.uid};
	int k;

	snprintf(o.name, sizeof(o.name), "%s", name);
	k = store_meta_read(&c->cfg->store, owner, name, &o.meta);
	if (k < 0)
		return k;
	k = store_object_dir(&c->cfg->store, owner, name, o.dir, sizeof(o.dir));
	if (k >= 0 && !o.is_owner) {
		struct identity oi = {};

		/* An owner missing from the user database still matches rules by uid. */
		k = identity_of_uid(owner, &oi);
		if (k >= 0)
			k = policy_resolve(c->policy, &oi.id, &o.owner_grant);
		identity_done(&oi);
	}
	if (k < 0) {
		object_done(&o);
		return k;
	}
	*ret = o;
	return 0;
}

enum visibility {
	VISIBLE_OWNER, /* only the owner */
	VISIBLE_OWNER_OR_ADMIN,
	VISIBLE_SHARED, /* the owner, and those it is shared with (admins see, but get no maps) */
};

/*
 * Resolve "NAME" or "OWNER/NAME" to an object the caller may use as want
 * says. Anything the caller may not see is "not-found", so nobody learns
 * which names others use.
 */
static int object_open(struct call *c, struct reply *r, const char *ref, enum visibility want,
		       struct object *ret)
{
	char owner_s[64];
	const char *slash = strchr(ref, '/'), *name = ref;
	uid_t owner = c->ident.id.uid;
	struct object o = {};
	bool ok;
	int k;

	if (slash) {
		if ((size_t)(slash - ref) >= sizeof(owner_s) || slash == ref)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "\"object\": expected NAME or OWNER/NAME");
		memcpy(owner_s, ref, (size_t)(slash - ref));
		owner_s[slash - ref] = '\0';
		name = slash + 1;
		if (identity_parse_user(owner_s, &owner) < 0)
			return reply_error(r, PROTO_E_NOT_FOUND, ENOENT, "no user \"%s\"", owner_s);
	}
	if (!proto_object_name_is_valid(name))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "\"object\": \"%.64s\" is not a valid object name (1 to %d of "
				   "A-Z a-z 0-9 _ -, not starting with -)",
				   name, PROTO_MAX_OBJECT_NAME);
	k = object_load(c, owner, name, &o);
	if (k == -ENOENT)
		goto not_found;
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot read object \"%s\": %s", ref,
				   strerror(-k));
	switch (want) {
	case VISIBLE_OWNER:
		ok = o.is_owner;
		break;
	case VISIBLE_OWNER_OR_ADMIN:
		ok = o.is_owner || call_is_admin(c);
		break;
	default:
		ok = o.is_owner || call_is_admin(c) || object_visible_as_shared(c, &o);
		break;
	}
	if (!ok) {
		object_done(&o);
		goto not_found;
	}
	*ret = o;
	return 1;
not_found:
	return reply_error(r, PROTO_E_NOT_FOUND, ENOENT, "you have no object \"%s\"%s", ref,
			   want == VISIBLE_OWNER ? "" : " and none is shared with you");
}

/* For methods whose only param is "object": check, resolve, open. */
static int object_from_params(struct call *c, struct reply *r, const char *method,
			      enum visibility want, const char **ret_ref, struct object *ret)
{
	static const char *const keys[] = {"object", NULL};
	int k = param_check_keys(c, r, method, keys);

	if (k > 0)
		k = param_string(c, r, "object", true, ret_ref);
	if (k > 0)
		k = object_open(c, r, *ret_ref, want, ret);
	return k;
}

/* ---- links ---- */

struct link_entry {
	uint32_t id, prog_id;
	struct bpf_link_info info;
	char tp_name[128];
	char uprobe[64]; /* a perf event link's uprobe, as uprobe_link_describe() says */
	bool pinned;
};

static bool link_pinned(const char *dir, uint32_t id)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/l%u", dir, id);
	return access(path, F_OK) == 0;
}

/* Every link in the kernel, with its info. Needs CAP_SYS_ADMIN (BPF_LINK_GET_FD_BY_ID). */
static int links_walk(struct link_entry **ret, size_t *ret_n)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	struct link_entry *v = NULL;
	size_t n = 0;
	uint32_t id = 0;
	int k = caps_set_effective(caps, ARRAY_SIZE(caps));

	if (k < 0)
		return k;
	while (bpf_link_get_next_id(id, &id) == 0) {
		struct link_entry e = {.id = id}, *nv;
		uint32_t len = sizeof(e.info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		/*
		 * Without buffers first: the union's members overlap, and a pointer
		 * meant for one type's name is another type's length (the kernel
		 * then refuses a perf event link's info).
		 */
		k = bpf_obj_get_info_by_fd(fd, &e.info, &len);
		if (k == 0 && e.info.type == BPF_LINK_TYPE_RAW_TRACEPOINT) {
			e.info.raw_tracepoint.tp_name = (uint64_t)(uintptr_t)e.tp_name;
			e.info.raw_tracepoint.tp_name_len = sizeof(e.tp_name);
			k = bpf_obj_get_info_by_fd(fd, &e.info, &len);
			e.tp_name[sizeof(e.tp_name) - 1] = '\0';
		} else if (k == 0 && e.info.type == BPF_LINK_TYPE_PERF_EVENT) {
			uprobe_link_describe(fd, e.uprobe, sizeof(e.uprobe));
		}
		safe_close(fd);
		if (k < 0)
			continue;
		e.prog_id = e.info.prog_id;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			caps_clear_effective();
			return -ENOMEM;
		}
		v = nv;
		v[n++] = e;
	}
	caps_clear_effective();
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *prog_name_by_id(json_object *meta, uint32_t id)
{
	json_object *progs = meta_array(meta, "programs");

	for (size_t i = 0; progs && i < json_object_array_length(progs); i++) {
		json_object *p = json_object_array_get_idx(progs, i);

		if (meta_int(p, "id") == (int64_t)id)
			return meta_string(p, "name");
	}
	return NULL;
}

/*
 * The links (pinned by the broker, or held as an fd by anyone) of the
 * object's programs, out of all (from links_walk()): walking the kernel's
 * links is the only complete answer, and what unload detaches too.
 */
static int object_links_of(const struct object *o, const struct link_entry *all, size_t n_all,
			   struct link_entry **ret, size_t *ret_n)
{
	_cleanup_free_ uint32_t *prog_ids = NULL;
	struct link_entry *v = NULL;
	size_t n = 0, n_progs = 0;
	bool any = false;
	int k;

	/*
	 * Most objects have no link: when no link's program is one the metadata
	 * names, there is nothing to verify (a list of 1,000 objects would
	 * otherwise open 1,000 pin directories and every program pin in them).
	 */
	for (size_t l = 0; l < n_all && !any; l++)
		any = prog_name_by_id(o->meta, all[l].prog_id) != NULL;
	if (!any) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	/* The programs really pinned there, not ids from metadata that may be stale. */
	k = store_object_prog_ids(o->dir, &prog_ids, &n_progs);
	if (k < 0)
		return k;
	for (size_t l = 0; l < n_all; l++) {
		bool ours = false;
		struct link_entry *nv;

		for (size_t i = 0; i < n_progs && !ours; i++)
			ours = prog_ids[i] == all[l].prog_id;
		if (!ours)
			continue;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n] = all[l];
		v[n++].pinned = link_pinned(o->dir, all[l].id);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int object_links(const struct object *o, struct link_entry **ret, size_t *ret_n)
{
	_cleanup_free_ struct link_entry *all = NULL;
	size_t n_all = 0;
	int k = links_walk(&all, &n_all);

	if (k < 0)
		return k;
	return object_links_of(o, all, n_all, ret, ret_n);
}

static json_object *link_json(const struct object *o, const struct link_entry *e)
{
	json_object *l = json_object_new_object();
	const char *type =
		e->info.type == LINK_TYPE_TCX ? "tcx" : libbpf_bpf_link_type_str(e->info.type);
	const char *prog = prog_name_by_id(o->meta, e->prog_id);
	char target[160] = "";

	if (!l)
		return NULL;
	json_object_object_add(l, "id", json_object_new_int64(e->id));
	json_object_object_add(l, "program", json_object_new_string(prog ? prog : "?"));
	json_object_object_add(l, "type", json_object_new_string(type ? type : "unknown"));
	switch (e->info.type) {
	case BPF_LINK_TYPE_CGROUP: {
		const char *at = attach_type_to_string((int)e->info.cgroup.attach_type);

		snprintf(target, sizeof(target), "cgroup id %llu",
			 (unsigned long long)e->info.cgroup.cgroup_id);
		if (at)
			json_object_object_add(l, "attach_type", json_object_new_string(at));
		break;
	}
	case BPF_LINK_TYPE_RAW_TRACEPOINT:
		snprintf(target, sizeof(target), "raw_tracepoint %s", e->tp_name);
		break;
	case BPF_LINK_TYPE_XDP:
		/* An index in the caller's network namespace, which may not be ours. */
		snprintf(target, sizeof(target), "xdp ifindex %u", e->info.xdp.ifindex);
		break;
	case BPF_LINK_TYPE_PERF_EVENT:
		snprintf(target, sizeof(target), "%s", e->uprobe);
		break;
	default:
		break;
	}
	if (target[0])
		json_object_object_add(l, "target", json_object_new_string(target));
	json_object_object_add(l, "pinned", json_object_new_boolean(e->pinned));
	return l;
}

/* ---- list, show ---- */

static const char *call_owner_name(struct call *c, uid_t uid)
{
	struct passwd *pw;

	if (c->owner_name[0] && c->owner_name_uid == uid)
		return c->owner_name;
	pw = getpwuid(uid);
	if (!pw)
		return NULL;
	snprintf(c->owner_name, sizeof(c->owner_name), "%s", pw->pw_name);
	c->owner_name_uid = uid;
	return c->owner_name;
}

static json_object *object_json(struct call *c, const struct object *o)
{
	json_object *j = json_object_new_object(), *progs = json_object_new_array();
	json_object *maps = json_object_new_array(), *links = json_object_new_array();
	json_object *mp = meta_array(o->meta, "programs"), *mm = meta_array(o->meta, "maps");
	_cleanup_free_ struct link_entry *le = NULL;
	const char *owner_name = call_owner_name(c, o->owner);
	size_t n_links = 0;

	if (!j || !progs || !maps || !links) {
		json_object_put(j);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(links);
		return NULL;
	}
	json_object_object_add(j, "name", json_object_new_string(o->name));
	json_object_object_add(j, "owner", json_object_new_int64(o->owner));
	if (owner_name)
		json_object_object_add(j, "owner_name", json_object_new_string(owner_name));
	json_object_object_add(j, "loaded_at",
			       json_object_new_int64(meta_int(o->meta, "loaded_at")));
	/*
	 * Those an object is shared with see its shared maps and nothing more;
	 * the owner and admins see everything.
	 */
	bool full = o->is_owner || call_is_admin(c);

	for (size_t i = 0; full && mp && i < json_object_array_length(mp); i++) {
		json_object *p = json_object_array_get_idx(mp, i), *e = json_object_new_object(),
			    *v;
		static const char *const keys[] = {"name", "type",  "attach_type",  "id",
						   "tag",  "insns", "test_run_only"};

		for (size_t k = 0; e && k < ARRAY_SIZE(keys); k++)
			if (json_object_object_get_ex(p, keys[k], &v))
				json_object_object_add(e, keys[k], json_object_get(v));
		json_object_array_add(progs, e);
	}
	for (size_t i = 0; mm && i < json_object_array_length(mm); i++) {
		json_object *m = json_object_array_get_idx(mm, i), *e = json_object_new_object(),
			    *v;
		static const char *const keys[] = {
			"name", "type", "id", "key_size", "value_size", "max_entries", "map_flags"};
		const char *name = meta_string(m, "name");
		enum map_access a = name ? object_map_access(c, o, name) : MAP_ACCESS_NONE;

		if (!e)
			continue;
		if (!full && a == MAP_ACCESS_NONE) {
			json_object_put(e);
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
			if (json_object_object_get_ex(m, keys[k], &v))
				json_object_object_add(e, keys[k], json_object_get(v));
		json_object_object_add(e, "access",
				       json_object_new_string(map_access_to_string(a)));
		json_object_array_add(maps, e);
	}
	json_object_object_add(j, "programs", progs);
	json_object_object_add(j, "maps", maps);
	if (full && !c->have_links)
		c->have_links = links_walk(&c->links, &c->n_links) >= 0;
	if (full && c->have_links && object_links_of(o, c->links, c->n_links, &le, &n_links) >= 0)
		for (size_t i = 0; i < n_links; i++)
			json_object_array_add(links, link_json(o, &le[i]));
	json_object_object_add(j, "links", links);
	/* Who else may use the maps is the owner's (and an admin's) business. */
	if (full) {
		json_object *s;

		if (json_object_object_get_ex(o->meta, "shares", &s))
			json_object_object_add(j, "shares", json_object_get(s));
	}
	return j;
}

/*
 * One page of a list: objects in order of owner uid, then name, starting
 * after a cursor (the last object of the page before), bounded in count and
 * in bytes, so that a reply stays below PROTO_MAX_REPLY_BYTES however many
 * objects there are and however large each is.
 */
struct list_page {
	bool have_cursor;
	uid_t after_uid;
	char after_name[PROTO_MAX_OBJECT_NAME + 1];
	uint64_t limit; /* objects in the page */
	size_t n, bytes;
	bool full; /* another object follows: its page starts after the last one here */
	uid_t last_uid;
	char last_name[PROTO_MAX_OBJECT_NAME + 1];
	json_object *objects;
};

static bool list_page_skips(const struct list_page *pg, uid_t uid, const char *name)
{
	if (!pg->have_cursor || uid != pg->after_uid)
		return pg->have_cursor && uid < pg->after_uid;
	return strcmp(name, pg->after_name) <= 0;
}

/*
 * Add one object, if it fits. It is measured as the reply will encode it
 * (valid UTF-8, PROTO_JSON_FLAGS), and that text is kept as the object's
 * serialization: the reply then copies it instead of encoding it again.
 */
static int list_page_add(struct list_page *pg, json_object *j, uid_t uid, const char *name)
{
	const char *text;
	char *copy;
	size_t len = 0;

	if (!j || proto_json_sanitize_utf8(j) < 0 ||
	    !(text = json_object_to_json_string_length(j, PROTO_JSON_FLAGS, &len)) ||
	    !(copy = strndup(text, len))) {
		json_object_put(j);
		return -ENOMEM;
	}
	/* A first object larger than a page goes alone: nothing smaller could make progress. */
	if (pg->n > 0 && pg->bytes + len + 1 > PROTO_LIST_PAGE_BYTES) {
		free(copy);
		json_object_put(j);
		pg->full = true;
		return 0;
	}
	json_object_set_serializer(j, json_object_userdata_to_json_string, copy,
				   json_object_free_userdata);
	if (json_object_array_add(pg->objects, j) < 0) {
		json_object_put(j);
		return -ENOMEM;
	}
	pg->n++;
	pg->bytes += len + 1;
	pg->last_uid = uid;
	snprintf(pg->last_name, sizeof(pg->last_name), "%s", name);
	return 0;
}

static int list_user(struct call *c, uid_t uid, bool shared_only, struct list_page *pg)
{
	char **names = NULL;
	size_t n = 0;
	int k = store_list_names(&c->cfg->store, uid, &names, &n);

	if (k == -ENOENT)
		return 0;
	if (k < 0)
		return k;
	for (size_t i = 0; i < n && k >= 0 && !pg->full; i++) {
		struct object o = {};

		if (list_page_skips(pg, uid, names[i]) || object_load(c, uid, names[i], &o) < 0)
			continue; /* before the cursor, or gone meanwhile */
		if (!shared_only || object_visible_as_shared(c, &o)) {
			if (pg->n >= pg->limit)
				pg->full = true;
			else
				k = list_page_add(pg, object_json(c, &o), uid, names[i]);
		}
		object_done(&o);
	}
	store_names_free(names, n);
	return k;
}

static int cmp_uid(const void *a, const void *b)
{
	uid_t x = *(const uid_t *)a, y = *(const uid_t *)b;

	return x < y ? -1 : x > y;
}

/* Every owner's objects (all: to admins; or only what others share with the caller). */
static int list_owners(struct call *c, bool shared_only, struct list_page *pg)
{
	_cleanup_free_ uid_t *owners = NULL;
	size_t n = 0;
	int k = store_list_owners(&c->cfg->store, &owners, &n);

	/* By uid, as the cursor orders them (the store lists directory names). */
	if (k >= 0 && n > 1)
		qsort(owners, n, sizeof(*owners), cmp_uid);
	for (size_t i = 0; k >= 0 && i < n && !pg->full; i++) {
		if ((i > 0 && owners[i] == owners[i - 1]) ||
		    (shared_only && owners[i] == c->ident.id.uid) ||
		    (pg->have_cursor && owners[i] < pg->after_uid))
			continue;
		k = list_user(c, owners[i], shared_only, pg);
	}
	return k;
}

/* "cursor": "UID/NAME", as a reply's "next" gave it. */
static int list_parse_cursor(struct call *c, struct reply *r, struct list_page *pg)
{
	const char *cursor = NULL, *slash;
	_cleanup_free_ char *error = NULL;
	unsigned long uid;
	char *end;

	if (proto_get_string(c->params, "cursor", false, &cursor, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	if (!cursor)
		return 1;
	slash = strchr(cursor, '/');
	errno = 0;
	uid = strtoul(cursor, &end, 10);
	if (!slash || end != slash || cursor[0] < '0' || cursor[0] > '9' || errno ||
	    uid >= (uid_t)-1 || !proto_object_name_is_valid(slash + 1))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "\"cursor\": expected UID/NAME, as \"next\" of the page "
				   "before gave it");
	pg->have_cursor = true;
	pg->after_uid = (uid_t)uid;
	snprintf(pg->after_name, sizeof(pg->after_name), "%s", slash + 1);
	return 1;
}

static int named_list(struct call *c, struct reply *r)
{
	static const char *const keys[] = {"all", "user", "shared", "cursor", "limit", NULL};
	_cleanup_free_ char *error = NULL;
	_cleanup_json_ json_object *objects = json_object_new_array();
	struct list_page pg = {.objects = objects, .limit = PROTO_MAX_LIST_LIMIT};
	json_object *result;
	const char *user = NULL;
	bool all = false, shared = false;
	uid_t uid = c->ident.id.uid;
	int64_t limit = PROTO_MAX_LIST_LIMIT;
	int k;

	if (!objects)
		return -ENOMEM;
	k = param_check_keys(c, r, "list", keys);
	if (k > 0)
		k = list_parse_cursor(c, r, &pg);
	if (k <= 0)
		return k;
	if (proto_get_bool(c->params, "all", false, &all, &error) < 0 ||
	    proto_get_bool(c->params, "shared", false, &shared, &error) < 0 ||
	    proto_get_string(c->params, "user", false, &user, &error) < 0 ||
	    proto_get_int(c->params, "limit", false, 1, PROTO_MAX_LIST_LIMIT, &limit, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	pg.limit = (uint64_t)limit;
	/* The admin group is the daemon's option, not a policy key. */
	if ((all || user) && !call_is_admin(c))
		return denial_reply(r, PROTO_E_DENIED, EPERM, "object", NULL, NULL,
				    "listing other users' objects needs root or the broker's admin "
				    "group");
	if (user && shared)
		return reply_error(
			r, PROTO_E_INVALID, EINVAL,
			"\"shared\" lists what others share with you; it takes no \"user\"");
	if (user && identity_parse_user(user, &uid) < 0)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT, "no user \"%.64s\"", user);

	if (all || shared)
		k = list_owners(c, !all, &pg);
	else
		k = list_user(c, uid, false, &pg);
	if (k == -ENOMEM)
		return k;
	if (k < 0 && k != -ENOENT)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot list objects: %s",
				   strerror(-k));
	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	json_object_object_add(result, "objects", TAKE_PTR(objects));
	if (pg.full) {
		char next[32 + PROTO_MAX_OBJECT_NAME];

		snprintf(next, sizeof(next), "%u/%s", (unsigned)pg.last_uid, pg.last_name);
		json_object_object_add(result, "next", json_object_new_string(next));
	}
	return reply_result(r, result);
}

static int named_show(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	json_object *result, *j;
	const char *ref;
	int k;

	k = object_from_params(c, r, "show", VISIBLE_SHARED, &ref, &o);
	if (k <= 0)
		return k;
	j = object_json(c, &o);
	result = json_object_new_object();
	if (!j || !result) {
		json_object_put(j);
		json_object_put(result);
		return -ENOMEM;
	}
	json_object_object_add(result, "object", j);
	return reply_result(r, result);
}

/* ---- unload ---- */

static int call_lock(struct call *c, struct reply *r, uid_t owner)
{
	c->lock = store_lock_user(&c->cfg->store, owner);
	if (c->lock < 0)
		return reply_error(r, PROTO_E_INTERNAL, -c->lock,
				   "cannot lock the owner's state: %s", strerror(-c->lock));
	return 1;
}

static int named_unload(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	json_object *result;
	const char *ref;
	int k;

	k = object_from_params(c, r, "unload", VISIBLE_OWNER_OR_ADMIN, &ref, &o);
	if (k > 0)
		k = call_lock(c, r, o.owner);
	if (k <= 0)
		return k;
	/* Removing the metadata is the commit: from here on the object is gone (store.h). */
	k = store_meta_remove(&c->cfg->store, o.owner, o.name);
	if (k == -ENOENT)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT, "object \"%s\" was just unloaded",
				   ref);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot unload \"%s\": %s", ref,
				   strerror(-k));
	store_fault(&c->cfg->store, "unload-committed");
	k = store_object_remove_pins(&c->cfg->store, o.owner, o.name);
	if (k < 0)
		log_warning("unload of %u/%s: cannot remove every pin (%s); the next change "
			    "sweeps it",
			    (unsigned)o.owner, o.name, strerror(-k));
	log_info("uid %u unloaded %u/%s", (unsigned)c->ident.id.uid, (unsigned)o.owner, o.name);
	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	json_object_object_add(result, "name", json_object_new_string(o.name));
	json_object_object_add(result, "owner", json_object_new_int64(o.owner));
	return reply_result(r, result);
}

/* ---- fds ---- */

/*
 * Open a pin of the object and check it is what the metadata describes: the
 * metadata was read without the owner's lock, and an unload and a new load
 * of the same name in between must not pair the old entry (its shares) with
 * a new object's pin.
 */
static int pin_open(const struct object *o, json_object *entry)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	const char *pin = meta_string(entry, "pin");
	union {
		struct bpf_prog_info prog;
		struct bpf_map_info map;
	} info = {};
	uint32_t len = sizeof(info), id;
	char path[PATH_MAX];
	int fd, k;

	if (!pin || strchr(pin, '/') || (pin[0] != 'p' && pin[0] != 'm'))
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%s", o->dir, pin) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/*
	 * Before Linux 6.5, with kernel.unprivileged_bpf_disabled set, every bpf()
	 * command needs CAP_BPF effective, BPF_OBJ_GET and BPF_OBJ_GET_INFO_BY_FD too.
	 */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	fd = bpf_obj_get(path);
	k = fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ? negative_errno() : 0;
	caps_clear_effective();
	if (k < 0) {
		safe_close(fd);
		return k;
	}
	id = pin[0] == 'p' ? info.prog.id : info.map.id;
	if ((int64_t)id != meta_int(entry, "id")) {
		safe_close(fd);
		return -ESTALE;
	}
	return fd;
}

/* ---- BTF: the owner's whole, anyone else's only what is shared with them ---- */

/* The object's BTF, as the owner gets it: read-only type information for pretty-printing. */
static int object_btf_fd(const struct object *o)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	int64_t id = meta_int(o->meta, "btf_id");
	int fd, k;

	if (id <= 0 || id > UINT32_MAX)
		return -ENOENT;
	/* BPF_BTF_GET_FD_BY_ID, like BPF_MAP_GET_FD_BY_ID, is CAP_SYS_ADMIN's. */
	k = caps_set_effective(sys_admin, 1);
	if (k < 0)
		return k;
	fd = bpf_btf_get_fd_by_id((uint32_t)id);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	return k;
}

/* The object's BTF as the kernel holds it, read back by id. */
static int object_btf_read(const struct object *o, void **ret, size_t *ret_size)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	_cleanup_close_ int fd = object_btf_fd(o);
	_cleanup_free_ void *data = NULL;
	struct bpf_btf_info info = {};
	uint32_t len = sizeof(info), size;
	int k;

	if (fd < 0)
		return fd;
	/* Before Linux 6.5 with unprivileged BPF disabled, every bpf() command wants CAP_BPF. */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
		k = negative_errno();
	} else if (info.btf_size == 0 || info.btf_size > BTFFILTER_MAX_BYTES) {
		k = -E2BIG;
	} else if (!(data = malloc(info.btf_size))) {
		k = -ENOMEM;
	} else {
		size = info.btf_size;
		info = (struct bpf_btf_info){.btf = (uint64_t)(uintptr_t)data, .btf_size = size};
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			k = negative_errno();
		else if (info.btf_size != size)
			k = -ESTALE;
	}
	caps_clear_effective();
	if (k < 0)
		return k;
	*ret = TAKE_PTR(data);
	*ret_size = size;
	return 0;
}

/*
 * What the caller may know of the object's types, and its maps' type ids
 * in that: for the owner the object's BTF as loaded (the bytes only if
 * want_bytes), for anyone else a BTF of only the key and value types of the
 * maps they have access to (btffilter.h): nothing of the other maps, the
 * programs, globals, source lines or file names the object's BTF holds.
 */
struct btf_view {
	void *data; /* NULL: none (or, for the owner, not asked for) */
	size_t size;
	uint32_t *ids; /* per map of the metadata: key and value type id; 0: none */
	size_t n_maps;
};

static void btf_view_done(struct btf_view *v)
{
	free(v->data);
	free(v->ids);
}

static int object_btf_view(const struct call *c, const struct object *o, bool want_bytes,
			   struct btf_view *ret)
{
	json_object *mm = meta_array(o->meta, "maps");
	struct btf_view v = {.n_maps = mm ? json_object_array_length(mm) : 0};
	_cleanup_free_ void *whole = NULL;
	size_t size = 0;
	int k;

	v.ids = calloc(2 * v.n_maps + 1, sizeof(*v.ids));
	if (!v.ids)
		return -ENOMEM;
	if (meta_int(o->meta, "btf_id") <= 0) {
		*ret = v; /* no BTF, no type ids */
		return 0;
	}
	for (size_t i = 0; i < v.n_maps; i++) {
		json_object *m = json_object_array_get_idx(mm, i);
		const char *name = meta_string(m, "name");

		if (!o->is_owner && (!name || object_map_access(c, o, name) == MAP_ACCESS_NONE))
			continue;
		v.ids[2 * i] = (uint32_t)meta_int(m, "btf_key_type_id");
		v.ids[2 * i + 1] = (uint32_t)meta_int(m, "btf_value_type_id");
	}
	if (o->is_owner) {
		k = want_bytes ? object_btf_read(o, &v.data, &v.size) : 0;
		if (k < 0) {
			btf_view_done(&v);
			return k;
		}
		*ret = v;
		return 0;
	}
	k = object_btf_read(o, &whole, &size);
	/* A root it cannot keep (a global-data map's section) becomes 0. */
	if (k >= 0)
		k = btffilter_build(whole, size, v.ids, 2 * v.n_maps, &v.data, &v.size);
	if (k < 0) {
		/* Never the whole BTF instead: none at all. */
		log_warning("no BTF for uid %u of %u/%s: %s", (unsigned)c->ident.id.uid,
			    (unsigned)o->owner, o->name, strerror(-k));
		memset(v.ids, 0, (2 * v.n_maps + 1) * sizeof(*v.ids));
	}
	*ret = v;
	return 0;
}

/*
 * A BTF the broker made for the caller stays in the kernel while the caller
 * holds its fd: it counts against the caller's max_map_memory_bytes like
 * any object the broker makes for them (ledger.h). -EDQUOT over the quota.
 */
static int call_charge_btf(struct call *c, int fd)
{
	_cleanup_close_ int lock = store_lock_user(&c->cfg->store, c->ident.id.uid);
	struct ledger l = {};
	struct ledger_usage u = {};
	int k;

	if (lock < 0)
		return lock;
	/* As for loads: the recorded figures first, every object looked up only if over. */
	for (int prune = 0; prune < 2; prune++) {
		k = ledger_open(&c->cfg->store, c->ident.id.uid, prune, &l);
		if (k >= 0)
			k = ledger_add_btf(&l, fd);
		if (k < 0) {
			ledger_done(&l);
			return k;
		}
		ledger_usage(&l, &u);
		if (u.map_bytes <= c->grant->limits.max_map_memory_bytes)
			break;
		ledger_done(&l);
	}
	k = u.map_bytes <= c->grant->limits.max_map_memory_bytes ? ledger_commit(&l) : -EDQUOT;
	ledger_done(&l);
	return k;
}

/* A BTF fd of the caller's view: the object's own for the owner, a new one for others. */
static int btf_view_fd(struct call *c, const struct object *o, const struct btf_view *v)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	int fd, k;

	if (o->is_owner)
		return object_btf_fd(o);
	if (!v->data)
		return -ENOENT;
	/* BPF_BTF_LOAD: CAP_BPF. The kernel keeps the new BTF while the client holds the fd. */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	fd = bpf_btf_load(v->data, v->size, NULL);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	if (fd >= 0) {
		k = call_charge_btf(c, fd);
		if (k < 0)
			safe_close(fd);
		else
			k = fd;
	}
	return k;
}

static int named_fds(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	_cleanup_(btf_view_done) struct btf_view btf = {};
	json_object *mp, *mm, *result = NULL, *progs = NULL, *maps = NULL;
	const char *ref;
	int k, fd;

	k = object_from_params(c, r, "fds", VISIBLE_SHARED, &ref, &o);
	if (k <= 0)
		return k;
	k = object_btf_view(c, &o, false, &btf);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot read the object's BTF: %s",
				   strerror(-k));
	mp = meta_array(o.meta, "programs");
	mm = meta_array(o.meta, "maps");
	result = json_object_new_object();
	progs = json_object_new_array();
	maps = json_object_new_array();
	if (!result || !progs || !maps) {
		json_object_put(result);
		json_object_put(progs);
		json_object_put(maps);
		return -ENOMEM;
	}
	json_object_object_add(result, "allowed", json_object_new_boolean(true));
	json_object_object_add(result, "name", json_object_new_string(o.name));
	json_object_object_add(result, "owner", json_object_new_int64(o.owner));
	json_object_object_add(result, "programs", progs);
	json_object_object_add(result, "maps", maps);
	/* Owned by result from here on; reply_error() below frees a half-built reply. */
	k = reply_result(r, result);
	if (k < 0)
		return k;
	for (size_t i = 0; o.is_owner && mp && i < json_object_array_length(mp); i++) {
		json_object *p = json_object_array_get_idx(mp, i), *e = json_object_new_object(),
			    *v;
		int type = (int)meta_int(p, "prog_type");
		bool test_run_only = !policy_grant_prog_type(c->grant, type);
		static const char *const pkeys[] = {"name", "type", "attach_type",
						    "id",   "tag",  "insns"};

		if (!e)
			return -ENOMEM;
		for (size_t n = 0; n < ARRAY_SIZE(pkeys); n++)
			if (json_object_object_get_ex(p, pkeys[n], &v))
				json_object_object_add(e, pkeys[n], json_object_get(v));
		json_object_object_add(e, "test_run_only", json_object_new_boolean(test_run_only));
		json_object_array_add(progs, e);
		/* As for load: the fd is the right to attach, so only where the policy says so now.
		 */
		if (test_run_only || !policy_grant_prog_fd(c->grant, type))
			continue;
		fd = pin_open(&o, p);
		k = fd < 0 ? fd : reply_add_fd(r, fd);
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k,
					   "cannot open program \"%s\": %s", meta_string(p, "name"),
					   strerror(-k));
		json_object_object_add(e, "fd", json_object_new_int(k));
	}
	for (size_t i = 0; mm && i < json_object_array_length(mm); i++) {
		json_object *m = json_object_array_get_idx(mm, i), *e, *v;
		const char *name = meta_string(m, "name");
		enum map_access a = name ? object_map_access(c, &o, name) : MAP_ACCESS_NONE, fa;
		static const char *const mkeys[] = {
			"name", "type", "id", "key_size", "value_size", "max_entries", "map_flags"};
		struct handout_map h = {};
		int pinfd;

		if (!o.is_owner && a == MAP_ACCESS_NONE)
			continue; /* others don't even learn of maps not shared with them */
		e = json_object_new_object();
		if (!e)
			return -ENOMEM;
		for (size_t n = 0; n < ARRAY_SIZE(mkeys); n++)
			if (json_object_object_get_ex(m, mkeys[n], &v))
				json_object_object_add(e, mkeys[n], json_object_get(v));
		/* Type ids in the BTF this caller gets, which for others is not the object's. */
		json_object_object_add(e, "btf_key_type_id", json_object_new_int64(btf.ids[2 * i]));
		json_object_object_add(e, "btf_value_type_id",
				       json_object_new_int64(btf.ids[2 * i + 1]));
		json_object_object_add(e, "access",
				       json_object_new_string(map_access_to_string(a)));
		json_object_array_add(maps, e);
		if (a == MAP_ACCESS_NONE)
			continue;
		fa = object_map_fd_access(&o, name, a);
		json_object_object_add(e, "fd_access",
				       json_object_new_string(map_access_to_string(fa)));
		if (fa == MAP_ACCESS_NONE)
			continue; /* the broker's map method does what a is, see NAMED.md */
		if (fa != MAP_ACCESS_RW) {
			char msg[2048];

			if (handout_check_bpffs(msg, sizeof(msg)) < 0)
				return denial_reply(r, PROTO_E_DENIED, EACCES, "map", name, NULL,
						    "%s", msg);
		}
		pinfd = pin_open(&o, m);
		fd = pinfd < 0 ? pinfd : handout_map_fd(pinfd, fa, &h);
		safe_close(pinfd);
		k = fd < 0 ? fd : reply_add_fd(r, fd);
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k,
					   "cannot open map \"%s\" with %s access: %s", name,
					   map_access_to_string(fa), strerror(-k));
		json_object_object_add(e, "map_flags", json_object_new_int64(h.map_flags));
		json_object_object_add(e, "frozen", json_object_new_boolean(h.frozen));
		json_object_object_add(e, "fd", json_object_new_int(k));
	}
	/* Type information is a convenience: without it the maps are still there. */
	fd = btf_view_fd(c, &o, &btf);
	if (fd < 0 && fd != -ENOENT)
		log_warning("no BTF fd for uid %u of %u/%s: %s", (unsigned)c->ident.id.uid,
			    (unsigned)o.owner, o.name, strerror(-fd));
	if (fd >= 0) {
		k = reply_add_fd(r, fd);
		if (k >= 0)
			json_object_object_add(result, "btf_fd", json_object_new_int(k));
	}
	return 0;
}

/* ---- attach, detach ---- */

static bool prog_type_attaches_to_cgroup(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
		return true;
	default:
		return false;
	}
}

/*
 * The caller owns a cgroup when it may manage it as a delegated subtree: the
 * directory and the files that move processes and enable controllers are
 * theirs (what systemd and container runtimes chown on delegation). The fd
 * is the client's own, so it also proves they could open the directory.
 */
static int check_cgroup_owned(struct call *c, struct reply *r, int fd)
{
	static const char *const files[] = {"cgroup.procs", "cgroup.threads",
					    "cgroup.subtree_control"};
	uid_t uid = c->ident.id.uid;
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) < 0 || (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC ||
	    fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "the target fd is not a cgroup v2 directory");
	/* Ownership is the system's to delegate: no policy key grants others' cgroups. */
	if (st.st_uid != uid)
		return denial_reply(r, PROTO_E_DENIED, EPERM, "object", NULL, NULL,
				    "you do not own this cgroup (its directory belongs to uid %u); "
				    "the broker attaches only to cgroups delegated to you",
				    (unsigned)st.st_uid);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (fstatat(fd, files[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return reply_error(r, PROTO_E_INTERNAL, errno, "cannot check %s: %m",
					   files[i]);
		}
		if (st.st_uid != uid)
			return denial_reply(
				r, PROTO_E_DENIED, EPERM, "object", NULL, NULL,
				"you do not own this cgroup (its %s belongs to uid %u); "
				"the broker attaches only to cgroups delegated to you",
				files[i], (unsigned)st.st_uid);
	}
	return 1;
}

/* tracefs' id of a tracepoint: where tracefs is mounted, in its two usual places. */
static int tracepoint_id(const char *category_name, uint64_t *ret)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char cat[128], path[PATH_MAX], buf[32];
	const char *colon = strchr(category_name, ':');

	if (!colon || (size_t)(colon - category_name) >= sizeof(cat))
		return -EINVAL;
	memcpy(cat, category_name, (size_t)(colon - category_name));
	cat[colon - category_name] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], cat, colon + 1);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		safe_close(fd);
		if (n <= 0)
			return -EIO;
		buf[n] = '\0';
		*ret = strtoull(buf, NULL, 10);
		return 0;
	}
	return -ENOENT;
}

static int perf_tracepoint_open(uint64_t id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1 /* any task */, 0 /* cpu */, -1,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? negative_errno() : (int)fd;
}

struct attach_req {
	const char *program;
	const char *type; /* target type */
	const char *name; /* tracepoint names */
	const char *attach_type;
	int64_t fd_index;
	bool pin;
	struct uprobe_request uprobe; /* type "uprobe" */
};

static int attach_parse(struct call *c, struct reply *r, struct attach_req *a)
{
	static const char *const keys[] = {"object", "program", "pin", "target", NULL};
	static const char *const tkeys[] = {"type", "fd", "attach_type", "name", NULL};
	_cleanup_free_ char *error = NULL;
	json_object *t;
	int k;

	k = param_check_keys(c, r, "attach", keys);
	if (k > 0)
		k = param_string(c, r, "program", true, &a->program);
	if (k <= 0)
		return k;
	if (proto_get_bool(c->params, "pin", false, &a->pin, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	if (!json_object_object_get_ex(c->params, "target", &t) ||
	    !json_object_is_type(t, json_type_object))
		return reply_error(r, PROTO_E_INVALID, EINVAL, "\"target\" must be an object");
	if (proto_get_string(t, "type", true, &a->type, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	if (strcmp(a->type, "uprobe") == 0) {
		/* Its own keys, and its fds: the binary and a pidfd (uprobe.h). */
		if (proto_check_keys(t, "target", uprobe_target_keys, &error) < 0)
			return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
		k = uprobe_request_parse(t, c->fds, c->n_fds, &a->uprobe, &error);
		if (k < 0)
			return reply_error(r, k == -EBADF ? PROTO_E_FDS : PROTO_E_INVALID, -k, "%s",
					   error ?: "bad uprobe target");
		/* The process's /proc/PID/status, held by the call (closed with it). */
		k = uprobe_status_open(c->params, c->fds, c->n_fds);
		c->target_status = k >= 0 ? k : -1;
		c->target_status_error = k >= 0 ? 0 : -k;
		a->uprobe.status_fd = c->target_status;
		a->uprobe.status_error = c->target_status_error;
		a->name = a->uprobe.symbol;
		a->fd_index = -1;
		return 1;
	}
	if (proto_check_keys(t, "target", tkeys, &error) < 0 ||
	    proto_get_string(t, "name", false, &a->name, &error) < 0 ||
	    proto_get_string(t, "attach_type", false, &a->attach_type, &error) < 0 ||
	    proto_get_int(t, "fd", false, 0, PROTO_MAX_REQUEST_FDS - 1, &a->fd_index, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	if (!json_object_object_get_ex(t, "fd", NULL))
		a->fd_index = -1;
	return 1;
}

static int attach_cgroup(struct call *c, struct reply *r, const struct attach_req *a,
			 json_object *prog, int prog_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_NET_ADMIN};
	int type = (int)meta_int(prog, "prog_type"), at, fd, k;

	if (!prog_type_attaches_to_cgroup(type))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "program \"%s\" has type %s, which does not attach to cgroups",
				   a->program, policy_prog_type_to_string(type) ?: "unknown");
	if (a->fd_index < 0 || (size_t)a->fd_index >= c->n_fds)
		return reply_error(r, PROTO_E_FDS, EBADF,
				   "a cgroup target needs the cgroup directory's fd (\"fd\": index "
				   "of an fd sent with the request)");
	fd = c->fds[a->fd_index];
	k = check_cgroup_owned(c, r, fd);
	if (k <= 0)
		return k;
	if (a->attach_type) {
		at = attach_type_from_string(a->attach_type);
		if (at < 0)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "unknown attach type \"%.64s\"", a->attach_type);
	} else {
		at = (int)meta_int(prog, "expected_attach_type");
	}
	/* No policy lists a type that is not a cgroup's in attach.cgroups: no key to name. */
	if (!attach_type_is_cgroup(at))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "attach type %s does not attach to cgroups",
				   attach_type_to_string(at) ?: "unknown");
	if (!policy_grant_attach_cgroup(c->grant, at)) {
		const char *name = attach_type_to_string(at);
		char key[96];

		/* A type without a name cannot be listed in attach.cgroups. */
		snprintf(key, sizeof(key), "attach.cgroups: %s", name ?: "");
		return denial_reply(r, PROTO_E_DENIED, EPERM, "program", a->program,
				    name ? key : NULL,
				    "your policy does not allow attaching to cgroups as %s",
				    name ?: "this type");
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	k = bpf_link_create(prog_fd, fd, (enum bpf_attach_type)at, NULL);
	if (k < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_E_LOAD, -k,
				   "the kernel refused to attach \"%s\" as %s: %s", a->program,
				   attach_type_to_string(at) ?: "?", strerror(-k));
	return k;
}

static int attach_raw_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
				 json_object *prog, int prog_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON};
	int type = (int)meta_int(prog, "prog_type"), k;

	if (type != BPF_PROG_TYPE_RAW_TRACEPOINT && type != BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "program \"%s\" is not a raw_tracepoint program", a->program);
	if (!a->name)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "a raw_tracepoint target needs \"name\"");
	/* A name no policy could grant (policy_grant_attach_raw_tracepoint()): no key to name. */
	if (!policy_raw_tracepoint_name_is_valid(a->name, false))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "\"%.64s\" is not a raw tracepoint name (1 to 128 of "
				   "[A-Za-z0-9_])",
				   a->name);
	if (!policy_grant_attach_raw_tracepoint(c->grant, a->name)) {
		char key[PROTO_MAX_NAME + 32];

		snprintf(key, sizeof(key), "attach.raw_tracepoints: %s", a->name);
		return denial_reply(
			r, PROTO_E_DENIED, EPERM, "program", a->program, key,
			"your policy does not allow attaching to raw tracepoint \"%.64s\"",
			a->name);
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	k = bpf_raw_tracepoint_open(a->name, prog_fd);
	if (k < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_E_LOAD, -k,
				   "the kernel refused to attach \"%s\" to raw tracepoint %s: %s",
				   a->program, a->name, strerror(-k));
	return k;
}

static int attach_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
			     json_object *prog, int prog_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON};
	int type = (int)meta_int(prog, "prog_type"), pfd, k;
	uint64_t id = 0;

	if (type != BPF_PROG_TYPE_TRACEPOINT)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "program \"%s\" is not a tracepoint program", a->program);
	if (!a->name)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "a tracepoint target needs \"name\": \"CATEGORY:NAME\"");
	if (!policy_tracepoint_name_is_valid(a->name, false))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "\"%.64s\" is not a tracepoint name (\"CATEGORY:NAME\", 1 to "
				   "128 of [A-Za-z0-9_] and the colon)",
				   a->name);
	if (!policy_grant_attach_tracepoint(c->grant, a->name)) {
		char key[PROTO_MAX_NAME + 32];

		snprintf(key, sizeof(key), "attach.tracepoints: %s", a->name);
		return denial_reply(r, PROTO_E_DENIED, EPERM, "program", a->program, key,
				    "your policy does not allow attaching to tracepoint \"%.64s\"",
				    a->name);
	}
	k = tracepoint_id(a->name, &id);
	if (k < 0)
		return reply_error(r, PROTO_E_NOT_FOUND, -k,
				   "no tracepoint %s (is tracefs mounted at /sys/kernel/tracing?)",
				   a->name);
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	pfd = perf_tracepoint_open(id);
	k = pfd;
	if (pfd >= 0) {
		/* The link holds the perf event: our fd can go once it exists. */
		k = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, NULL);
		if (k < 0)
			k = negative_errno();
		safe_close(pfd);
	}
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_E_LOAD, -k,
				   "the kernel refused to attach \"%s\" to tracepoint %s: %s",
				   a->program, a->name, strerror(-k));
	return k;
}

/*
 * Interfaces are the caller's: names resolve, and programs attach, in the
 * network namespace of the calling process, which the event loop opened for
 * us (a container's veth is not the host's).
 */
static int netns_enter_caller(struct call *c, struct reply *r, int *ret_saved)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	int saved, k;

	if (c->netns < 0)
		return reply_error(r, PROTO_E_INTERNAL, ENOSYS,
				   "the broker cannot tell your network namespace (it needs "
				   "SO_PEERPIDFD, Linux 6.5, and your process alive)");
	saved = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0)
		return reply_error(r, PROTO_E_INTERNAL, errno,
				   "cannot open our network namespace: %m");
	k = caps_set_effective(sys_admin, 1);
	if (k >= 0 && setns(c->netns, CLONE_NEWNET) < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0) {
		safe_close(saved);
		return reply_error(r, PROTO_E_INTERNAL, -k,
				   "cannot enter your network namespace: %s%s", strerror(-k),
				   k == -ESRCH ? " (your process is gone)" : "");
	}
	*ret_saved = saved;
	return 1;
}

static void netns_leave(int saved)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};

	if (saved < 0)
		return;
	if (caps_set_effective(sys_admin, 1) < 0 || setns(saved, CLONE_NEWNET) < 0)
		log_warning("cannot return to our network namespace: %m");
	caps_clear_effective();
	safe_close(saved);
}

/*
 * An interface grant applies only in a network namespace of the caller's
 * own (netns.h): "veth*" for a container's uids means the container's
 * veths, not the host's, wherever those uids run. Elsewhere (the host's, one
 * root made, anyone else's) only host_interfaces grants interfaces.
 */
static int check_interface_grant(struct call *c, struct reply *r, const char *ifname)
{
	char key[64];
	int own;

	if (c->netns < 0)
		return reply_error(r, PROTO_E_INTERNAL, ENOSYS,
				   "the broker cannot tell your network namespace (it needs "
				   "SO_PEERPIDFD, Linux 6.5, and your process alive)");
	own = netns_owned_by(c->netns, c->ident.id.uid);
	if (own < 0)
		return reply_error(r, PROTO_E_INTERNAL, -own,
				   "cannot tell whose your network namespace is: %s",
				   strerror(-own));
	if (own ? policy_grant_attach_interface(c->grant, ifname)
		: policy_grant_attach_host_interface(c->grant, ifname))
		return 1;
	/* In a namespace not yours only host_interfaces grants, even what interfaces names. */
	snprintf(key, sizeof(key), "attach.%sinterfaces: %.16s", own ? "" : "host_", ifname);
	if (!own && policy_grant_attach_interface(c->grant, ifname))
		return denial_reply(
			r, PROTO_E_DENIED, EPERM, "object", NULL, key,
			"the network namespace you are in is not yours (no user namespace you own "
			"owns it: it is the host's, or one root or another user made): your policy "
			"grants interface \"%.16s\" only in network namespaces you own "
			"(\"interfaces\"); in others only \"host_interfaces\" grants interfaces, "
			"and it does not name this one",
			ifname);
	return denial_reply(r, PROTO_E_DENIED, EPERM, "object", NULL, key,
			    "your policy does not allow attaching to interface \"%.16s\" in %s "
			    "network namespace",
			    ifname, own ? "your own" : "a (host's or another's)");
}

static int attach_interface(struct call *c, struct reply *r, const struct attach_req *a,
			    json_object *prog, int prog_fd, bool tc)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_NET_ADMIN};
	int type = (int)meta_int(prog, "prog_type"), at, saved = -1, k;
	unsigned ifindex;

	if (type != (tc ? BPF_PROG_TYPE_SCHED_CLS : BPF_PROG_TYPE_XDP))
		return reply_error(r, PROTO_E_INVALID, EINVAL, "program \"%s\" is not a%s program",
				   a->program, tc ? " tc (sched_cls)" : "n xdp");
	if (!a->name)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "an interface target needs \"name\": the interface");
	if (!policy_interface_name_is_valid(a->name, false))
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "\"%.64s\" is not an interface name (1 to 15 characters, none "
				   "of '/', ':' or whitespace)",
				   a->name);
	k = check_interface_grant(c, r, a->name);
	if (k <= 0)
		return k;
	if (tc) {
		if (!a->attach_type || strcmp(a->attach_type, "ingress") == 0)
			at = ATTACH_TCX_INGRESS;
		else if (strcmp(a->attach_type, "egress") == 0)
			at = ATTACH_TCX_EGRESS;
		else
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "tc attaches on \"ingress\" or \"egress\"");
	} else {
		if (a->attach_type)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "xdp targets take no attach_type");
		at = BPF_XDP;
	}
	k = netns_enter_caller(c, r, &saved);
	if (k <= 0)
		return k;
	ifindex = if_nametoindex(a->name);
	if (ifindex == 0) {
		netns_leave(saved);
		return reply_error(r, PROTO_E_NOT_FOUND, ENODEV,
				   "there is no interface %s in your network namespace", a->name);
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k >= 0) {
		k = bpf_link_create(prog_fd, (int)ifindex, (enum bpf_attach_type)at, NULL);
		if (k < 0)
			k = negative_errno();
	}
	caps_clear_effective();
	netns_leave(saved);
	if (k < 0)
		return reply_error(
			r, PROTO_E_LOAD, -k, "the kernel refused to attach \"%s\" to %s %s%s%s: %s",
			a->program, tc ? "tc" : "xdp", a->name, tc ? " " : "",
			tc ? (at == ATTACH_TCX_INGRESS ? "ingress" : "egress") : "", strerror(-k));
	return k;
}

static int attach_uprobe(struct call *c, struct reply *r, const struct attach_req *a,
			 json_object *prog, int prog_fd)
{
	if ((int)meta_int(prog, "prog_type") != BPF_PROG_TYPE_KPROBE)
		return reply_error(r, PROTO_E_INVALID, EINVAL,
				   "program \"%s\" is not a kprobe-type program (SEC(\"uprobe\"))",
				   a->program);
	if (!policy_grant_attach_uprobes(c->grant))
		return denial_reply(r, PROTO_E_DENIED, EPERM, "program", a->program,
				    "attach.uprobes",
				    "your policy does not allow attaching uprobes");
	return uprobe_attach(&a->uprobe, &c->ident.id, prog_fd, a->program, r, c->target_desc,
			     sizeof(c->target_desc));
}

static int link_id_of(int fd, uint32_t *ret)
{
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return negative_errno();
	*ret = info.id;
	return 0;
}

/* How many links the user's named objects have, against max_attachments. */
static int user_attachments(struct call *c, uid_t uid, uint64_t *ret)
{
	char **names = NULL;
	size_t n = 0;
	uint64_t total = 0;
	int k = store_list_names(&c->cfg->store, uid, &names, &n);

	if (k == -ENOENT)
		k = 0;
	for (size_t i = 0; k >= 0 && i < n; i++) {
		_cleanup_(object_done) struct object o = {};
		_cleanup_free_ struct link_entry *le = NULL;
		size_t n_links = 0;

		if (object_load(c, uid, names[i], &o) < 0)
			continue;
		k = object_links(&o, &le, &n_links);
		total += n_links;
	}
	store_names_free(names, n);
	if (k < 0)
		return k;
	*ret = total;
	return 0;
}

/* Attachments are bounded in number (per minute, with loads, by the event loop). */
static int attach_check_quotas(struct call *c, struct reply *r)
{
	const struct policy_limits *l = &c->grant->limits;
	uint64_t n = 0;
	int k = user_attachments(c, c->ident.id.uid, &n);

	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot count your attachments: %s",
				   strerror(-k));
	/* n counts the link just made. */
	if (n > l->max_attachments) {
		char note[128];
		const char *key = policy_limit_key("max_attachments", n, note, sizeof(note));

		return denial_reply(r, PROTO_E_QUOTA, EDQUOT, "object", NULL, key,
				    "this attach would exceed your quota max_attachments: you have "
				    "%llu, your limit is %llu%s",
				    (unsigned long long)(n - 1),
				    (unsigned long long)l->max_attachments, note);
	}
	return 1;
}

static int named_attach(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	_cleanup_close_ int prog_fd = -EBADF, link_fd = -EBADF;
	struct attach_req a = {};
	json_object *prog, *result, *link;
	const char *ref;
	uint32_t link_id = 0;
	int k, type;

	k = attach_parse(c, r, &a);
	if (k > 0)
		k = param_string(c, r, "object", true, &ref);
	if (k > 0)
		k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k > 0)
		k = call_lock(c, r, o.owner);
	if (k > 0 && !a.pin &&
	    (strcmp(a.type, "tracepoint") == 0 || strcmp(a.type, "raw_tracepoint") == 0 ||
	     strcmp(a.type, "uprobe") == 0))
		/* The kernel can't detach these links: one held by a client would outlive unload.
		 */
		k = reply_error(r, PROTO_E_INVALID, EINVAL,
				"%s attachments are always pinned (the kernel cannot detach them "
				"from a link fd you hold): attach with pin",
				a.type);
	if (k <= 0)
		return k;
	prog = meta_find(o.meta, "programs", a.program);
	if (!prog)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT,
				   "object \"%s\" has no program \"%s\"", o.name, a.program);
	type = (int)meta_int(prog, "prog_type");
	if (!policy_grant_prog_type(c->grant, type)) {
		const char *tname = policy_prog_type_to_string(type);
		char key[64];

		snprintf(key, sizeof(key), "program_types: %s", tname ?: "");
		return denial_reply(
			r, PROTO_E_DENIED, EPERM, "program", a.program, tname ? key : NULL,
			"program \"%s\" has type %s, which your policy allows %s", a.program,
			tname ?: "unknown",
			policy_grant_test_run(c->grant, type) ? "for test runs only" : "no longer");
	}
	prog_fd = pin_open(&o, prog);
	if (prog_fd < 0)
		return reply_error(r, PROTO_E_INTERNAL, -prog_fd, "cannot open program \"%s\": %s",
				   a.program, strerror(-prog_fd));
	if (strcmp(a.type, "cgroup") == 0)
		k = attach_cgroup(c, r, &a, prog, prog_fd);
	else if (strcmp(a.type, "raw_tracepoint") == 0)
		k = attach_raw_tracepoint(c, r, &a, prog, prog_fd);
	else if (strcmp(a.type, "tracepoint") == 0)
		k = attach_tracepoint(c, r, &a, prog, prog_fd);
	else if (strcmp(a.type, "xdp") == 0 || strcmp(a.type, "tc") == 0)
		k = attach_interface(c, r, &a, prog, prog_fd, strcmp(a.type, "tc") == 0);
	else if (strcmp(a.type, "uprobe") == 0)
		k = attach_uprobe(c, r, &a, prog, prog_fd);
	else
		return reply_error(
			r, PROTO_E_INVALID, EINVAL,
			"unknown target type \"%.32s\" (expected cgroup, raw_tracepoint, "
			"tracepoint, xdp, tc or uprobe)",
			a.type);
	if (k <= 0)
		return k;
	link_fd = k;
	/*
	 * Quotas are checked with the new link in place, so every target's own
	 * checks (and their clearer errors) come first; over quota, closing our
	 * only reference ends the link again.
	 */
	k = attach_check_quotas(c, r);
	if (k <= 0)
		return k;
	k = link_id_of(link_fd, &link_id);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot query the new link: %s",
				   strerror(-k));
	if (a.pin) {
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/l%u", o.dir, link_id);
		if (bpf_obj_pin(link_fd, path) < 0)
			return reply_error(r, PROTO_E_INTERNAL, errno, "cannot pin the link: %m");
	}
	result = json_object_new_object();
	link = json_object_new_object();
	if (!result || !link) {
		json_object_put(result);
		json_object_put(link);
		return -ENOMEM;
	}
	json_object_object_add(link, "id", json_object_new_int64(link_id));
	json_object_object_add(link, "pinned", json_object_new_boolean(a.pin));
	json_object_object_add(result, "link", link);
	k = reply_result(r, result);
	if (k < 0)
		return k;
	if (!a.pin) {
		k = reply_add_fd(r, TAKE_FD(link_fd));
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k, "cannot pass the link");
		json_object_object_add(link, "fd", json_object_new_int(k));
	}
	log_info("uid %u attached %s/%s (link %u%s%s%s)", (unsigned)c->ident.id.uid, o.name,
		 a.program, link_id, a.pin ? ", pinned" : "", c->target_desc[0] ? ", " : "",
		 c->target_desc);
	return 0;
}

static int named_detach(struct call *c, struct reply *r)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	static const char *const keys[] = {"object", "program", "link", NULL};
	_cleanup_(object_done) struct object o = {};
	_cleanup_free_ struct link_entry *le = NULL;
	_cleanup_free_ char *error = NULL;
	_cleanup_json_ json_object *detached = json_object_new_array();
	json_object *prog, *result;
	const char *ref, *program;
	int64_t link = 0;
	size_t n = 0;
	int k;

	if (!detached)
		return -ENOMEM;
	k = param_check_keys(c, r, "detach", keys);
	if (k > 0)
		k = param_string(c, r, "object", true, &ref);
	if (k > 0)
		k = param_string(c, r, "program", true, &program);
	if (k <= 0)
		return k;
	if (proto_get_int(c->params, "link", false, 1, UINT32_MAX, &link, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k > 0)
		k = call_lock(c, r, o.owner);
	if (k <= 0)
		return k;
	prog = meta_find(o.meta, "programs", program);
	if (!prog)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT,
				   "object \"%s\" has no program \"%s\"", o.name, program);
	k = object_links(&o, &le, &n);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot list links: %s", strerror(-k));
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + 16];
		int fd;

		if ((int64_t)le[i].prog_id != meta_int(prog, "id"))
			continue;
		/* Without a link id: what the broker pinned; with one: that link, pinned or not. */
		if (link ? (int64_t)le[i].id != link : !le[i].pinned)
			continue;
		fd = bpf_link_get_fd_by_id(le[i].id);
		if (fd >= 0) {
			/* Some link types can't detach; unpinning then ends them once unheld. */
			if (bpf_link_detach(fd) < 0 && errno != EOPNOTSUPP && errno != EINVAL)
				log_warning("cannot detach link %u: %m", le[i].id);
			safe_close(fd);
		}
		snprintf(path, sizeof(path), "%s/l%u", o.dir, le[i].id);
		if (le[i].pinned && unlink(path) < 0)
			log_warning("cannot unpin %s: %m", path);
		json_object_array_add(detached, json_object_new_int64(le[i].id));
	}
	caps_clear_effective();
	if (link && json_object_array_length(detached) == 0)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT, "program \"%s\" has no link %lld",
				   program, (long long)link);
	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	json_object_object_add(result, "detached", TAKE_PTR(detached));
	return reply_result(r, result);
}

/* ---- test_run ---- */

static int hex_decode(const char *s, size_t max, uint8_t **ret, size_t *ret_n)
{
	size_t len = strlen(s), n = len / 2;
	uint8_t *buf;

	if (len % 2)
		return -EINVAL;
	if (n > max)
		return -E2BIG;
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1])) {
			free(buf);
			return -EINVAL;
		}
		buf[i] = (uint8_t)v;
	}
	*ret = buf;
	*ret_n = n;
	return 0;
}

static char *hex_encode(const uint8_t *buf, size_t n)
{
	char *s = malloc(2 * n + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", buf[i]);
	s[2 * n] = '\0';
	return s;
}

static int param_hex(struct call *c, struct reply *r, const char *key, size_t max, uint8_t **ret,
		     size_t *ret_n)
{
	const char *s = NULL;
	int k = param_string(c, r, key, false, &s);

	if (k <= 0 || !s)
		return k;
	k = hex_decode(s, max, ret, ret_n);
	if (k == -E2BIG)
		return reply_error(r, PROTO_E_TOO_LARGE, E2BIG, "\"%s\" is over %zu bytes", key,
				   max);
	if (k < 0)
		return reply_error(r, PROTO_E_INVALID, -k, "\"%s\" must be hex bytes", key);
	return 1;
}

static int named_test_run(struct call *c, struct reply *r)
{
	static const char *const keys[] = {"object", "program", "data_in",
					   "ctx_in", "repeat",	NULL};
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN};
	_cleanup_(object_done) struct object o = {};
	_cleanup_free_ uint8_t *data = NULL, *ctx = NULL, *out = NULL;
	_cleanup_free_ char *error = NULL, *out_hex = NULL;
	_cleanup_close_ int prog_fd = -EBADF;
	size_t n_data = 0, n_ctx = 0, n_out = 0;
	const char *ref, *program;
	json_object *prog, *result;
	int64_t repeat = 0; /* the kernel's default, once; raw_tracepoint refuses any other */
	int k, type;

	k = param_check_keys(c, r, "test_run", keys);
	if (k > 0)
		k = param_string(c, r, "object", true, &ref);
	if (k > 0)
		k = param_string(c, r, "program", true, &program);
	if (k > 0)
		k = param_hex(c, r, "data_in", TEST_RUN_MAX_DATA, &data, &n_data);
	if (k > 0)
		k = param_hex(c, r, "ctx_in", TEST_RUN_MAX_CTX, &ctx, &n_ctx);
	if (k <= 0)
		return k;
	if (proto_get_int(c->params, "repeat", false, 1, TEST_RUN_MAX_REPEAT, &repeat, &error) < 0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k <= 0)
		return k;
	prog = meta_find(o.meta, "programs", program);
	if (!prog)
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT,
				   "object \"%s\" has no program \"%s\"", o.name, program);
	type = (int)meta_int(prog, "prog_type");
	if (!policy_grant_test_run(c->grant, type)) {
		const char *tname = policy_prog_type_to_string(type);
		char key[64];

		/* test_run_types grants test runs and nothing more; program_types would too. */
		snprintf(key, sizeof(key), "test_run_types: %s", tname ?: "");
		return denial_reply(
			r, PROTO_E_DENIED, EPERM, "program", program, tname ? key : NULL,
			"program \"%s\" has type %s, which your policy no longer allows", program,
			tname ?: "unknown");
	}
	prog_fd = pin_open(&o, prog);
	if (prog_fd < 0)
		return reply_error(r, PROTO_E_INTERNAL, -prog_fd, "cannot open program \"%s\": %s",
				   program, strerror(-prog_fd));
	n_out = n_data ? n_data + TEST_RUN_DATA_OUT_SLACK : 0;
	out = malloc(n_out ? n_out : 1);
	if (!out)
		return -ENOMEM;
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = n_data ? data : NULL,
			    .data_size_in = (uint32_t)n_data, .data_out = n_out ? out : NULL,
			    .data_size_out = (uint32_t)n_out, .ctx_in = n_ctx ? ctx : NULL,
			    .ctx_size_in = (uint32_t)n_ctx, .repeat = (int)repeat);

		k = caps_set_effective(caps, ARRAY_SIZE(caps));
		if (k < 0)
			return k;
		k = bpf_prog_test_run_opts(prog_fd, &opts);
		if (k < 0)
			k = negative_errno();
		caps_clear_effective();
		if (k < 0)
			return reply_error(r, PROTO_E_LOAD, -k,
					   "the kernel refused to test-run \"%s\": %s%s", program,
					   strerror(-k),
					   k == -ENOTSUPP || k == -EOPNOTSUPP
						   ? " (this program type has no test runs)"
						   : "");
		n_out = opts.data_size_out < n_out ? opts.data_size_out : n_out;
		out_hex = hex_encode(out, n_out);
		result = json_object_new_object();
		if (!out_hex || !result) {
			json_object_put(result);
			return -ENOMEM;
		}
		json_object_object_add(result, "retval", json_object_new_int64(opts.retval));
		json_object_object_add(result, "duration_ns", json_object_new_int64(opts.duration));
		json_object_object_add(result, "data_out", json_object_new_string(out_hex));
	}
	return reply_result(r, result);
}

/* ---- map_insert: the one way into a map of maps ---- */

/*
 * The kernel takes any map fd into a map of maps without looking at its mode,
 * and the program can then write the inner map. So clients never get a
 * writable fd of a map of maps; instead they ask the broker, which inserts
 * only maps they hold a read-write fd of.
 */
static int named_map_insert(struct call *c, struct reply *r)
{
	static const char *const keys[] = {"object", "map", "key", "fd", NULL};
	_cleanup_(object_done) struct object o = {};
	_cleanup_free_ char *error = NULL;
	_cleanup_free_ uint8_t *key = NULL;
	_cleanup_close_ int outer = -EBADF;
	const char *ref, *map;
	json_object *m, *result;
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	size_t key_size = 0;
	int64_t fd_index = 0;
	uint64_t frozen = 0;
	int k, inner_fd, value;

	k = param_check_keys(c, r, "map_insert", keys);
	if (k > 0)
		k = param_string(c, r, "object", true, &ref);
	if (k > 0)
		k = param_string(c, r, "map", true, &map);
	if (k > 0)
		k = param_hex(c, r, "key", 512, &key, &key_size);
	if (k <= 0)
		return k;
	if (!key)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "\"key\" is required");
	if (proto_get_int(c->params, "fd", true, 0, PROTO_MAX_REQUEST_FDS - 1, &fd_index, &error) <
	    0)
		return reply_error(r, PROTO_E_INVALID, EINVAL, "%s", error);
	if ((size_t)fd_index >= c->n_fds)
		return reply_error(r, PROTO_E_FDS, EBADF,
				   "\"fd\" must be the index of the inner map's fd, sent with the "
				   "request");
	inner_fd = c->fds[fd_index];
	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k <= 0)
		return k;
	m = meta_find(o.meta, "maps", map);
	if (!m || !meta_map_is_map_of_maps(o.meta, map))
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT,
				   "object \"%s\" has no map of maps \"%s\"", o.name, map);
	/* The policy's grant for the outer map still says whether you may change it at all. */
	if (!(policy_grant_map_access(c->grant, map) & MAP_ACCESS_WO))
		return denial_reply(r, PROTO_E_DENIED, EPERM, "map", map, "maps",
				    "your policy does not let you write map \"%s\"", map);
	if (bpf_obj_get_info_by_fd(inner_fd, &info, &len) < 0)
		return reply_error(r, PROTO_E_INVALID, EBADF, "the fd sent is not a BPF map");
	/*
	 * Two kinds of O_RDWR fd do not mean the right to write the map: a
	 * ring buffer's is the right to consume it (inserted, programs could
	 * write records into it), a frozen map's may be an ro grant (see
	 * handout_map_fd()).
	 */
	if (info.type == BPF_MAP_TYPE_RINGBUF)
		return denial_reply(r, PROTO_E_DENIED, EACCES, "map", map, NULL,
				    "map %u is a ring buffer: its fd is for consuming it, and a "
				    "map of maps would let programs write records into it",
				    info.id);
	k = fdinfo_get_u64(inner_fd, "frozen", &frozen);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k,
				   "cannot tell whether map %u is frozen: %s", info.id,
				   strerror(-k));
	if (frozen)
		return denial_reply(r, PROTO_E_DENIED, EACCES, "map", map, NULL,
				    "map %u is frozen: its fd may be a read-only grant, and a map "
				    "of maps would let programs write it",
				    info.id);
	if ((fcntl(inner_fd, F_GETFL) & O_ACCMODE) != O_RDWR)
		return denial_reply(
			r, PROTO_E_DENIED, EACCES, "map", map, NULL,
			"map %u is not writable through the fd you sent: a map of maps "
			"would let programs write it, so it takes only maps you may write",
			info.id);
	if ((uint32_t)key_size != (uint32_t)meta_int(m, "key_size"))
		return reply_error(r, PROTO_E_INVALID, EINVAL, "map \"%s\" takes %lld-byte keys",
				   map, (long long)meta_int(m, "key_size"));
	outer = pin_open(&o, m);
	if (outer < 0)
		return reply_error(r, PROTO_E_INTERNAL, -outer, "cannot open map \"%s\": %s", map,
				   strerror(-outer));
	value = inner_fd;
	if (bpf_map_update_elem(outer, key, &value, BPF_ANY) < 0)
		return reply_error(r, PROTO_E_LOAD, errno,
				   "the kernel refused map %u in \"%s\": %m (an inner map must "
				   "match the outer map's template)",
				   info.id, map);
	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	json_object_object_add(result, "inserted", json_object_new_int64(info.id));
	return reply_result(r, result);
}

/* ---- map: map operations on the caller's behalf (mapop.c) ---- */

/*
 * For callers whose own bpf() calls fail on the fds they hold (before Linux
 * 6.5 with unprivileged BPF disabled, or under a seccomp filter): the broker
 * does the operation, allowed by the access decided now, as for fds.
 */
static int named_map(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	_cleanup_(proto_map_request_done) struct proto_map_request req = {};
	_cleanup_free_ char *error = NULL;
	_cleanup_(btf_view_done) struct btf_view btf = {};
	_cleanup_close_ int fd = -EBADF;
	enum map_access a = MAP_ACCESS_NONE, most;
	struct mapop_btf mb = {};
	json_object *m;
	int type, k;

	k = proto_map_request_decode(c->params, &req, &error);
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return reply_error(r, k == -E2BIG ? PROTO_E_TOO_LARGE : PROTO_E_INVALID, -k, "%s",
				   error ? error : "invalid request");
	k = object_open(c, r, req.object, VISIBLE_SHARED, &o);
	if (k <= 0)
		return k;
	m = meta_find(o.meta, "maps", req.map);
	if (m)
		a = object_map_access(c, &o, req.map);
	/* Others don't learn of maps not shared with them (as for fds). */
	if (!m || (a == MAP_ACCESS_NONE && !o.is_owner))
		return reply_error(r, PROTO_E_NOT_FOUND, ENOENT,
				   "object \"%s\" has no map \"%s\"%s", req.object, req.map,
				   o.is_owner ? "" : " shared with you");
	if (a == MAP_ACCESS_NONE) /* only the owner gets here (above) */
		return denial_reply(r, PROTO_E_DENIED, EACCES, "map", req.map, "maps",
				    "your policy grants you no access to map \"%s\"", req.map);
	fd = pin_open(&o, m);
	if (fd < 0)
		return reply_error(r, PROTO_E_INTERNAL, -fd, "cannot open map \"%s\": %s", req.map,
				   strerror(-fd));
	if (req.op == PROTO_MAP_BTF || req.op == PROTO_MAP_INFO) {
		json_object *mm = meta_array(o.meta, "maps");

		k = object_btf_view(c, &o, req.op == PROTO_MAP_BTF, &btf);
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k,
					   "cannot read the object's BTF: %s", strerror(-k));
		mb = (struct mapop_btf){.data = btf.data, .size = btf.size};
		for (size_t i = 0; i < btf.n_maps; i++)
			if (json_object_array_get_idx(mm, i) == m) {
				mb.key_type_id = btf.ids[2 * i];
				mb.value_type_id = btf.ids[2 * i + 1];
			}
	}
	/* The most a grant could give ("maps", or "shared" for others), as the type caps it. */
	type = meta_map_type(o.meta, req.map);
	most = o.is_owner ? policy_map_access_for_type(MAP_ACCESS_RW | MAP_ACCESS_CONSUME, type)
			  : share_access_for_type(MAP_ACCESS_RW, type);
	return mapop_run(fd, &mb, req.map, a, most, o.is_owner ? "maps" : "shared", &req, r);
}

/* ---- policy: the caller's effective policy and what counts against it ---- */

static int named_policy(struct call *c, struct reply *r)
{
	static const char *const keys[] = {NULL};
	struct ledger ledger = {};
	struct ledger_usage lu = {};
	json_object *result, *usage, *identity;
	uint64_t named = 0;
	int k;

	k = param_check_keys(c, r, "policy", keys);
	if (k <= 0)
		return k;
	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	/* The identity as the event loop took it at accept, units included. */
	if (json_object_object_get_ex(c->job, "identity", &identity))
		json_object_object_add(result, "identity", json_object_get(identity));
	json_object_object_add(result, "policy", policy_grant_to_json(c->grant));
	/* What counts against the quotas now, as the kernel has it (ledger.h). */
	if (store_count_objects(&c->cfg->store, c->ident.id.uid, &named) >= 0 &&
	    ledger_open(&c->cfg->store, c->ident.id.uid, true, &ledger) >= 0) {
		ledger_usage(&ledger, &lu);
		ledger_done(&ledger);
		usage = json_object_new_object();
		json_object_object_add(usage, "named_objects",
				       json_object_new_int64((int64_t)named));
		json_object_object_add(usage, "loaded_programs",
				       json_object_new_int64((int64_t)lu.programs));
		json_object_object_add(usage, "maps", json_object_new_int64((int64_t)lu.maps));
		json_object_object_add(usage, "map_memory_bytes",
				       json_object_new_int64((int64_t)lu.map_bytes));
		json_object_object_add(usage, "btf_bytes",
				       json_object_new_int64((int64_t)lu.btf_bytes));
		json_object_object_add(usage, "kernel_threads",
				       json_object_new_int64((int64_t)lu.kernel_threads));
		json_object_object_add(result, "usage", usage);
	}
	return reply_result(r, result);
}

/* ---- dispatch ---- */

static const struct method {
	const char *name;
	int (*handle)(struct call *c, struct reply *r);
} methods[] = {
	{"list", named_list},	      {"show", named_show},
	{"unload", named_unload},     {"fds", named_fds},
	{"attach", named_attach},     {"detach", named_detach},
	{"test_run", named_test_run}, {"map_insert", named_map_insert},
	{"map", named_map},	      {"policy", named_policy},
};

static const struct method *method_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(methods); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

bool named_is_method(const char *method)
{
	return method_find(method) != NULL;
}

/* An fd the event loop appended to the client's (the last), named by key in the job. */
static int call_take_job_fd(struct call *c, json_object *job, const char *key, int *ret)
{
	json_object *v;
	int64_t i;

	if (!json_object_object_get_ex(job, key, &v))
		return 0;
	i = json_object_get_int64(v);
	if (c->n_fds == 0 || i != (int64_t)c->n_fds - 1)
		return -EINVAL;
	*ret = c->fds[i];
	c->n_fds--;
	return 0;
}

static int call_run(struct call *c, json_object *job, const struct method **ret_m, struct reply *r)
{
	json_object *m;
	int k;

	c->job = job;
	if (identity_from_job(job, &c->ident) < 0 ||
	    !json_object_object_get_ex(job, "method", &m) ||
	    !json_object_object_get_ex(job, "params", &c->params) ||
	    !json_object_is_type(c->params, json_type_object) ||
	    !(*ret_m = method_find(json_object_get_string(m))))
		return reply_error(r, PROTO_E_INTERNAL, EINVAL, "malformed job from the broker");
	/* The event loop appends the caller's netns to an attach, last, and says so in the job. */
	if (call_take_job_fd(c, job, "netns", &c->netns) < 0)
		return reply_error(r, PROTO_E_INTERNAL, EINVAL, "malformed job from the broker");
	k = policy_resolve(c->policy, &c->ident.id, &c->grant);
	if (k < 0)
		return k;
	return 1;
}

/* One audit record per request (list and show only when refused: they decide nothing). */
static void call_audit(struct call *c, const char *method, struct reply *r)
{
	const char *code = reply_error_code(r), *ref = NULL, *program = NULL;
	char object[160], target[192] = "";
	json_object *t, *v;
	struct audit_record a = {.event = method,
				 .uid = c->ident.id.uid,
				 .pid = c->ident.pid,
				 .unit = c->ident.id.unit,
				 .user_unit = c->ident.id.user_unit};

	if (!code && (strcmp(method, "list") == 0 || strcmp(method, "show") == 0 ||
		      strcmp(method, "policy") == 0))
		return;
	(void)proto_get_string(c->params, "object", false, &ref, NULL);
	(void)proto_get_string(c->params, "program", false, &program, NULL);
	if (strcmp(method, "map") == 0) {
		const char *op = NULL;

		/* Map reads decide nothing new (like show): only writes and refusals. */
		(void)proto_get_string(c->params, "op", false, &op, NULL);
		if (!code && op && !proto_map_op_name_writes(op))
			return;
		(void)proto_get_string(c->params, "map", false, &program, NULL);
		if (op)
			snprintf(target, sizeof(target), "%.32s", op);
		a.target = target;
	}
	if (ref) {
		/* OWNER/NAME (the caller's own when no owner is given), and /PROGRAM. */
		if (strchr(ref, '/'))
			snprintf(object, sizeof(object), "%.64s%s%.64s", ref, program ? "/" : "",
				 program ? program : "");
		else
			snprintf(object, sizeof(object), "%u/%.64s%s%.64s",
				 (unsigned)c->ident.id.uid, ref, program ? "/" : "",
				 program ? program : "");
		a.object = object;
	}
	if (json_object_object_get_ex(c->params, "target", &t) &&
	    json_object_is_type(t, json_type_object)) {
		const char *type = NULL, *name = NULL, *at = NULL;

		if (json_object_object_get_ex(t, "type", &v))
			type = json_object_get_string(v);
		if (json_object_object_get_ex(t, "name", &v))
			name = json_object_get_string(v);
		if (json_object_object_get_ex(t, "attach_type", &v))
			at = json_object_get_string(v);
		snprintf(target, sizeof(target), "%.32s%s%.64s%s%.32s", type ? type : "?",
			 name ? " " : "", name ? name : "", at ? " " : "", at ? at : "");
		/* Where the request names no target (a uprobe's process), what the worker found. */
		if (c->target_desc[0])
			snprintf(target, sizeof(target), "%.64s%s%.120s", name ? name : "",
				 name ? " " : "", c->target_desc);
		a.target = target;
	}
	if (!code) {
		a.decision = "allow";
	} else {
		a.decision = strcmp(code, PROTO_E_DENIED) == 0 ||
					     strcmp(code, PROTO_E_QUOTA) == 0 ||
					     strcmp(code, PROTO_E_NOT_FOUND) == 0
				     ? "deny"
				     : "error";
		a.reason = reply_error_message(r);
	}
	audit_log(&a);
}

int named_handle(const struct policy *policy, const struct load_config *cfg, json_object *job,
		 int *fds, size_t n_fds, json_object **ret_body, int **ret_fds, size_t *ret_n_fds)
{
	struct call c = {.policy = policy,
			 .cfg = cfg,
			 .fds = fds,
			 .n_fds = n_fds,
			 .netns = -1,
			 .target_status = -1,
			 .target_status_error = ENOENT,
			 .lock = -EBADF};
	const struct method *m = NULL;
	struct reply r = {};
	int k;

	k = call_run(&c, job, &m, &r);
	if (k > 0)
		k = m->handle(&c, &r);
	/* A handler failing after it changed something (unload's commit, say) is on record too. */
	k = reply_fail(&r, k);
	if (k >= 0 && m)
		call_audit(&c, m->name, &r);
	call_done(&c);
	close_many(fds, n_fds);
	return reply_finish(&r, k, ret_body, ret_fds, ret_n_fds);
}
