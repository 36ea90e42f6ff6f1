/* SPDX-License-Identifier: MIT */
/*
 * Methods "list" (in pages, by owner uid and name) and "show": an object described as the caller
 * may see it.
 */
#include "named_call.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "denial.h"
#include "store.h"

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
static int list_parse_cursor(const char *cursor, struct reply *r, struct list_page *pg)
{
	const char *slash;
	unsigned long uid;
	char *end;

	if (!cursor)
		return 0;
	slash = strchr(cursor, '/');
	errno = 0;
	uid = strtoul(cursor, &end, 10);
	if (!slash || end != slash || cursor[0] < '0' || cursor[0] > '9' || errno ||
	    uid >= (uid_t)-1 || !proto_object_name_is_valid(slash + 1))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "\"cursor\": expected UID/NAME, as \"next\" of the page "
				   "before gave it");
	pg->have_cursor = true;
	pg->after_uid = (uid_t)uid;
	snprintf(pg->after_name, sizeof(pg->after_name), "%s", slash + 1);
	return 0;
}

int named_list(struct call *c, struct reply *r)
{
	const struct proto_list_params *p = c->req;
	_cleanup_json_ json_object *objects = json_object_new_array();
	struct list_page pg = {.objects = objects, .limit = (uint64_t)p->limit};
	json_object *result;
	const char *user = p->user;
	bool all = p->all, shared = p->shared;
	uid_t uid = c->ident.id.uid;
	int k;

	if (!objects)
		return -ENOMEM;
	k = list_parse_cursor(p->cursor, r, &pg);
	if (k != 0)
		return k;
	/* The admin group is the daemon's option, not a policy key. */
	if ((all || user) && !call_is_admin(c))
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
				    "listing other users' objects needs root or the broker's admin "
				    "group");
	if (user && shared)
		return reply_error(
			r, PROTO_ERR_INVALID, EINVAL,
			"\"shared\" lists what others share with you; it takes no \"user\"");
	if (user && identity_parse_user(user, &uid) < 0)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT, "no user \"%.64s\"", user);

	if (all || shared)
		k = list_owners(c, !all, &pg);
	else
		k = list_user(c, uid, false, &pg);
	if (k == -ENOMEM)
		return k;
	if (k < 0 && k != -ENOENT)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot list objects: %s",
				   strerror(-k));
	result = json_object_new_object();
	if (json_add(result, "objects", TAKE_PTR(objects)) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	if (pg.full) {
		char next[32 + PROTO_MAX_OBJECT_NAME];

		snprintf(next, sizeof(next), "%u/%s", (unsigned)pg.last_uid, pg.last_name);
		if (json_add(result, "next", json_object_new_string(next)) < 0) {
			json_object_put(result);
			return -ENOMEM;
		}
	}
	return reply_result(r, result);
}

int named_show(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	json_object *result, *j;
	const char *ref = ((const struct proto_object_params *)c->req)->object;
	int k;

	k = object_open(c, r, ref, VISIBLE_SHARED, &o);
	if (k != 0)
		return k;
	j = object_json(c, &o);
	result = json_object_new_object();
	if (json_add(result, "object", j) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply_result(r, result);
}
