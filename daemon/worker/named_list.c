/* SPDX-License-Identifier: MIT */
/*
 * Methods "list" (in pages, by owner uid and name) and "show": an object described as the caller
 * may see it.
 */
#include "named_call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "denial.h"
#include "common/parse.h"
#include "proto/jsontext.h"
#include "store.h"

static const char *call_owner_name(struct call *c, uid_t uid)
{
	_cleanup_free_ char *name = NULL;

	if (c->owner_name[0] && c->owner_name_uid == uid)
		return c->owner_name;
	if (uid_to_name(uid, &name) < 0)
		return NULL;
	snprintf(c->owner_name, sizeof(c->owner_name), "%s", name);
	c->owner_name_uid = uid;
	return c->owner_name;
}

/* Append "key":value for each of keys that e has, as the metadata holds it; commas after *first. */
static void text_members(struct json_text *t, json_object *e, const char *const *keys, size_t n,
			 bool *first)
{
	json_object *v;

	for (size_t k = 0; k < n; k++)
		if (json_object_object_get_ex(e, keys[k], &v)) {
			json_text_lit(t, *first ? "\"" : ",\"");
			*first = false;
			json_text_lit(t, keys[k]);
			json_text_lit(t, "\":");
			json_text_value(t, v);
		}
}

/*
 * The object as the caller may see it, appended to t as JSON text (NAMED.md's
 * OBJECT): written directly, since building a json-c tree per object and
 * serializing it was most of a list's cost.
 */
static int object_text(struct call *c, const struct object *o, struct json_text *t)
{
	json_object *mp = meta_array(o->meta, "programs"), *mm = meta_array(o->meta, "maps"), *s;
	_cleanup_free_ struct link_entry *le = NULL;
	const char *owner_name = call_owner_name(c, o->owner);
	size_t n_links = 0;
	bool first = true;

	json_text_lit(t, "{\"name\":");
	json_text_string(t, o->name, strlen(o->name));
	json_text_lit(t, ",\"owner\":");
	json_text_int(t, o->owner);
	if (owner_name) {
		json_text_lit(t, ",\"owner_name\":");
		json_text_string(t, owner_name, strlen(owner_name));
	}
	json_text_lit(t, ",\"loaded_at\":");
	json_text_int(t, meta_int(o->meta, "loaded_at"));
	/*
	 * Those an object is shared with see its shared maps and nothing more;
	 * the owner and admins see everything.
	 */
	bool full = o->is_owner || call_is_admin(c);

	json_text_lit(t, ",\"programs\":[");
	for (size_t i = 0; full && mp && i < json_object_array_length(mp); i++) {
		static const char *const keys[] = {"name", "type",  "attach_type",  "id",
						   "tag",  "insns", "test_run_only"};
		bool none = true;

		json_text_lit(t, i ? ",{" : "{");
		text_members(t, json_object_array_get_idx(mp, i), keys, ARRAY_SIZE(keys), &none);
		json_text_lit(t, "}");
	}
	json_text_lit(t, "],\"maps\":[");
	for (size_t i = 0; mm && i < json_object_array_length(mm); i++) {
		json_object *m = json_object_array_get_idx(mm, i);
		static const char *const keys[] = {
			"name", "type", "id", "key_size", "value_size", "max_entries", "map_flags"};
		const char *name = meta_string(m, "name");
		enum map_access a = name ? object_map_access(c, o, name) : MAP_ACCESS_NONE;
		bool none = true;

		if (!full && a == MAP_ACCESS_NONE)
			continue;
		json_text_lit(t, first ? "{" : ",{");
		first = false;
		text_members(t, m, keys, ARRAY_SIZE(keys), &none);
		json_text_lit(t, none ? "\"access\":\"" : ",\"access\":\"");
		json_text_lit(t, map_access_to_string(a));
		json_text_lit(t, "\"}");
	}
	json_text_lit(t, "],\"links\":[");
	if (full && !c->have_links)
		c->have_links = links_walk(&c->links, &c->n_links) >= 0;
	if (full && c->have_links && object_links_of(o, c->links, c->n_links, &le, &n_links) >= 0)
		for (size_t i = 0; i < n_links; i++) {
			json_object *l = link_json(o, &le[i]);

			if (!l)
				return -ENOMEM;
			if (i > 0)
				json_text_lit(t, ",");
			json_text_value(t, l);
			json_object_put(l);
		}
	json_text_lit(t, "]");
	/* Who else may use the maps is the owner's (and an admin's) business. */
	if (full && json_object_object_get_ex(o->meta, "shares", &s)) {
		json_text_lit(t, ",\"shares\":");
		json_text_value(t, s);
	}
	json_text_lit(t, "}");
	return t->err;
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
	struct json_text objects; /* "[" and the page's objects, comma separated */
};

static bool list_page_skips(const struct list_page *pg, uid_t uid, const char *name)
{
	if (!pg->have_cursor || uid != pg->after_uid)
		return pg->have_cursor && uid < pg->after_uid;
	return strcmp(name, pg->after_name) <= 0;
}

/* Add one object, if it fits, measured as the reply will encode it. */
static int list_page_add(struct list_page *pg, struct call *c, const struct object *o)
{
	size_t start = pg->objects.len, len;
	int k;

	if (pg->n > 0)
		json_text_lit(&pg->objects, ",");
	k = object_text(c, o, &pg->objects);
	if (k < 0)
		return k;
	len = pg->objects.len - start - (pg->n > 0);
	/* A first object larger than a page goes alone: nothing smaller could make progress. */
	if (pg->n > 0 && pg->bytes + len + 1 > PROTO_LIST_PAGE_BYTES) {
		pg->objects.len = start;
		pg->objects.buf[start] = '\0';
		pg->full = true;
		return 0;
	}
	pg->n++;
	pg->bytes += len + 1;
	pg->last_uid = o->owner;
	snprintf(pg->last_name, sizeof(pg->last_name), "%s", o->name);
	return 0;
}

/* A json-c value that encodes as text (taken): a reply built around text written directly. */
static json_object *json_of_text(json_object *empty, char *text)
{
	if (!empty || !text) {
		json_object_put(empty);
		free(text);
		return NULL;
	}
	json_object_set_serializer(empty, json_object_userdata_to_json_string, text,
				   json_object_free_userdata);
	return empty;
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
				k = list_page_add(pg, c, &o);
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
	char digits[16] = "";
	const char *slash;
	uint64_t uid = 0;

	if (!cursor)
		return 0;
	slash = strchr(cursor, '/');
	if (slash && (size_t)(slash - cursor) < sizeof(digits))
		memcpy(digits, cursor, (size_t)(slash - cursor));
	if (!slash || parse_u64(digits, (uid_t)-1 - 1, &uid) < 0 ||
	    !parse_object_name_is_valid(slash + 1))
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
	struct list_page pg = {.limit = (uint64_t)p->limit};
	json_object *result, *objects;
	const char *user = p->user;
	bool all = p->all, shared = p->shared;
	uid_t uid = c->ident.id.uid;
	int k;

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

	json_text_lit(&pg.objects, "[");
	if (all || shared)
		k = list_owners(c, !all, &pg);
	else
		k = list_user(c, uid, false, &pg);
	json_text_lit(&pg.objects, "]");
	if (k >= 0 && pg.objects.err)
		k = pg.objects.err;
	if (k < 0 && k != -ENOENT) {
		json_text_done(&pg.objects);
		if (k == -ENOMEM)
			return k;
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot list objects: %s",
				   strerror(-k));
	}
	/* The page's text goes out as it is: no json-c tree of 1,000 objects. */
	objects = json_of_text(json_object_new_array(), TAKE_PTR(pg.objects.buf));
	result = json_object_new_object();
	if (json_add(result, "objects", objects) < 0) {
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
	struct json_text t = {};
	json_object *result, *j;
	const char *ref = ((const struct proto_object_params *)c->req)->object;
	int k;

	k = object_open(c, r, ref, VISIBLE_SHARED, &o);
	if (k != 0)
		return k;
	k = object_text(c, &o, &t);
	if (k < 0) {
		json_text_done(&t);
		return k;
	}
	j = json_of_text(json_object_new_object(), TAKE_PTR(t.buf));
	result = json_object_new_object();
	if (json_add(result, "object", j) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply_result(r, result);
}
