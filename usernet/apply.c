/* SPDX-License-Identifier: MIT */
/*
 * usernet_apply()/usernet_remove(): a unit's network settings parsed and enforced on its
 * control group through the broker (objects/net/net_enforce.h), as named objects tagged with
 * the unit's invocation id; and the tags of such objects that exist.
 */
#include "usernet/apply.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "libbpfbroker.h"
#include "objects/net/net_enforce.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct bpfbroker *, bpfbroker_close);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

#define TAG_PREFIX USERNET_TAG_PREFIX
#define INVOCATION_LEN 32

_Static_assert(sizeof(TAG_PREFIX) - 1 + INVOCATION_LEN <= NET_ENFORCE_TAG_MAX,
	       "a unit's tag fits net_enforce.h's bound");

static bool invocation_is_valid(const char *id)
{
	return strlen(id) == INVOCATION_LEN && strspn(id, "0123456789abcdef") == INVOCATION_LEN;
}

/* "unit-" and the invocation id: unique per start, and never one of `bpfctl net`'s tags. */
static int target_tag(const struct usernet_target *t, char ret[NET_ENFORCE_TAG_MAX + 1])
{
	if (!invocation_is_valid(t->invocation_id)) {
		fprintf(stderr, "%s: invocation id \"%s\" is not 32 hex digits\n", t->unit,
			t->invocation_id);
		return -EINVAL;
	}
	snprintf(ret, NET_ENFORCE_TAG_MAX + 1, TAG_PREFIX "%s", t->invocation_id);
	return 0;
}

bool usernet_apply_enforces(void)
{
	return true;
}

/* The broker at $BPFBROKER_SOCKET, else its default socket (libbpfbroker decides). */
static int broker_connect(const char *unit, struct bpfbroker **ret)
{
	int k = bpfbroker_connect(NULL, ret);

	if (k < 0)
		fprintf(stderr, "%s: cannot connect to bpfbrokerd: %s\n", unit, strerror(-k));
	return k;
}

/* " (from SLICE)" for a slice's entry, "" for the unit's own. */
static const char *origin(const struct usernet_assignments *a, size_t i, char *buf, size_t size)
{
	if (!a->from[i])
		return "";
	snprintf(buf, size, " (from %s)", a->from[i]);
	return buf;
}

int usernet_apply(const struct usernet_target *t, const struct usernet_assignments *settings)
{
	char from[300]; /* " (from NAME)", a unit name being at most 255 characters */
	_cleanup_(net_settings_done) struct net_settings s = {};
	_cleanup_(bpfbroker_closep) struct bpfbroker *b = NULL;
	_cleanup_free_ char *error = NULL;
	char tag[NET_ENFORCE_TAG_MAX + 1];
	int k;

	k = target_tag(t, tag);
	if (k < 0)
		return k;
	/*
	 * A setting we cannot parse is refused, not skipped: the unit asked for it. So is a
	 * union with a slice's lists that no longer fits the tries (the parser counts each
	 * family's prefixes across assignments: -E2BIG).
	 */
	for (size_t i = 0; i < settings->n; i++) {
		k = net_settings_assign(&s, settings->v[i], &error);
		if (k < 0) {
			fprintf(stderr, "%s: refusing \"%s\"%s: %s\n", t->unit, settings->v[i],
				origin(settings, i, from, sizeof(from)),
				error ? error : strerror(-k));
			return k;
		}
	}
	k = broker_connect(t->unit, &b);
	if (k < 0)
		return k;
	k = net_enforce_apply(b, tag, &s, t->cgroup_path, &error);
	if (k < 0) {
		fprintf(stderr, "%s: cannot apply to %s: %s\n", t->unit, t->cgroup_path,
			error ? error : strerror(-k));
		return k;
	}
	fprintf(stderr, "%s: applied to %s (invocation %s, objects net-%s-*):", t->unit,
		t->cgroup_path, t->invocation_id, tag);
	for (size_t i = 0; i < settings->n; i++)
		fprintf(stderr, " %s%s%s", settings->v[i], origin(settings, i, from, sizeof(from)),
			i + 1 < settings->n ? ";" : "");
	fputc('\n', stderr);
	return 0;
}

int usernet_remove(const struct usernet_target *t)
{
	_cleanup_(bpfbroker_closep) struct bpfbroker *b = NULL;
	_cleanup_free_ char *error = NULL;
	char tag[NET_ENFORCE_TAG_MAX + 1];
	int k;

	k = target_tag(t, tag);
	if (k < 0)
		return k;
	k = broker_connect(t->unit, &b);
	if (k < 0)
		return k;
	k = net_enforce_remove(b, tag, &error);
	if (k < 0) {
		fprintf(stderr, "%s: cannot remove net-%s-*: %s\n", t->unit, tag,
			error ? error : strerror(-k));
		return k;
	}
	fprintf(stderr, "%s: removed from %s (invocation %s)\n", t->unit,
		t->cgroup_path ? t->cgroup_path : "its control group", t->invocation_id);
	return 0;
}

/* The invocation id in "net-unit-ID-KIND", into ret (INVOCATION_LEN + 1), or false. */
static bool object_invocation(const char *name, char *ret)
{
	const char *p = "net-" TAG_PREFIX, *id, *kind;

	if (strncmp(name, p, strlen(p)) != 0)
		return false;
	id = name + strlen(p);
	kind = strchr(id, '-');
	if (!kind || kind - id != INVOCATION_LEN)
		return false;
	memcpy(ret, id, INVOCATION_LEN);
	ret[INVOCATION_LEN] = '\0';
	return invocation_is_valid(ret);
}

int usernet_applied_each(int (*f)(const char *invocation_id, void *userdata), void *userdata)
{
	_cleanup_(bpfbroker_closep) struct bpfbroker *b = NULL;
	_cleanup_(json_object_putp) json_object *o = NULL;
	_cleanup_free_ char *text = NULL;
	struct bpfbroker_error *err = NULL;
	char last[INVOCATION_LEN + 1] = "";
	json_object *objects, *name;
	size_t n;
	int k;

	k = broker_connect("bpfbroker-user-net", &b);
	if (k < 0)
		return k;
	k = bpfbroker_list(b, NULL, &text, &err);
	if (k < 0) {
		fprintf(stderr, "listing my objects: %s\n", err ? err->message : strerror(-k));
		bpfbroker_error_free(err);
		return k;
	}
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "objects", &objects) ||
	    !json_object_is_type(objects, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(objects);
	for (size_t i = 0; i < n; i++) {
		char id[INVOCATION_LEN + 1];

		if (!json_object_object_get_ex(json_object_array_get_idx(objects, i), "name",
					       &name) ||
		    !object_invocation(json_object_get_string(name), id))
			continue;
		/* An invocation's objects come one after another (the list is by name). */
		if (strcmp(last, id) == 0)
			continue;
		memcpy(last, id, sizeof(last));
		k = f(id, userdata);
		if (k < 0)
			return k;
	}
	return 0;
}
