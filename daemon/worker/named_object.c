/* SPDX-License-Identifier: MIT */
/*
 * Named objects found for a request: the call and its identity, an object's metadata, references
 * resolved by visibility ("not-found" for what the caller may not see), the owner's lock and
 * verified pins.
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "store.h"
#include "vetted.h"

void object_done(struct object *o)
{
	json_object_put(o->meta);
	policy_grant_free(o->owner_grant);
}

void call_done(struct call *c)
{
	free(c->links);
	if (c->req_method)
		proto_method_done(c->req_method, c->req);
	free(c->req);
	identity_done(&c->ident);
	policy_grant_free(c->grant);
	safe_close(c->lock);
	safe_close(c->target_status);
}

bool call_is_admin(const struct call *c)
{
	return c->ident.id.uid == 0 ||
	       (c->cfg->have_admin_gid && identity_in_group(&c->ident.id, c->cfg->admin_gid));
}

const char *meta_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int64_t meta_int(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int64(v);
}

json_object *meta_array(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

json_object *meta_find(json_object *meta, const char *key, const char *name)
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

int object_program(const struct object *o, struct reply *r, const char *name, json_object **ret)
{
	json_object *p = meta_find(o->meta, "programs", name);

	if (!p)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "object \"%s\" has no program \"%s\"", o->name, name);
	*ret = p;
	return 0;
}

int object_load(struct call *c, uid_t owner, const char *name, struct object *ret)
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

/*
 * A vetted object (policy/vetted.h) is used with the grant it was loaded with, as long as
 * the policy still grants it: its owner's for this request (c->grant: an object_open() is
 * the one object of its request), and the owner's that caps what others get (owner_grant).
 */
static int object_use_vetted(struct call *c, struct object *o)
{
	struct policy_grant **g = o->is_owner ? &c->grant : &o->owner_grant;
	struct policy_grant *v;
	int k;

	if (!*g)
		return 0;
	k = vetted_grant_now(c->cfg, *g, meta_string(o->meta, "vetted"),
			     meta_string(o->meta, "digest"), &v);
	if (k < 0 || !v)
		return k;
	policy_grant_free(*g);
	*g = v;
	return 0;
}

/*
 * Resolve "NAME" or "OWNER/NAME" to an object the caller may use as want
 * says. Anything the caller may not see is "not-found", so nobody learns
 * which names others use.
 */
int object_open(struct call *c, struct reply *r, const char *ref, enum visibility want,
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
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "\"object\": expected NAME or OWNER/NAME");
		memcpy(owner_s, ref, (size_t)(slash - ref));
		owner_s[slash - ref] = '\0';
		name = slash + 1;
		if (identity_parse_user(owner_s, &owner) < 0)
			return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT, "no user \"%s\"",
					   owner_s);
	}
	if (!parse_object_name_is_valid(name))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "\"object\": \"%.64s\" is not a valid object name (1 to %d of "
				   "A-Z a-z 0-9 _ -, not starting with -)",
				   name, PROTO_MAX_OBJECT_NAME);
	k = object_load(c, owner, name, &o);
	if (k == -ENOENT)
		goto not_found;
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read object \"%s\": %s", ref,
				   strerror(-k));
	k = object_use_vetted(c, &o);
	if (k < 0) {
		object_done(&o);
		return k;
	}
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
	return 0;
not_found:
	return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT, "you have no object \"%s\"%s", ref,
			   want == VISIBLE_OWNER ? "" : " and none is shared with you");
}

int call_lock(struct call *c, struct reply *r, uid_t owner)
{
	c->lock = store_lock_user(&c->cfg->store, owner);
	if (c->lock < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -c->lock,
				   "cannot lock the owner's state: %s", strerror(-c->lock));
	return 0;
}

/*
 * Open a pin of the object and check it is what the metadata describes: the
 * metadata was read without the owner's lock, and an unload and a new load
 * of the same name in between must not pair the old entry (its shares) with
 * a new object's pin.
 */
int pin_open(const struct object *o, json_object *entry)
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
