/* SPDX-License-Identifier: MIT */
/*
 * bpfctl net show and net list: a tag's network objects and IPAccounting= counts as text or
 * JSON, with the --user unit a "unit-INVOCATION" tag belongs to, asked of the caller's own
 * service manager over sd-bus (usernet/unit.h).
 */
#include "net_show.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "common/json.h"
#include "common/macro.h"
#include "usernet/apply.h"
#include "usernet/unit.h"

/* What one tag has: its objects, its unit (if the manager knows it), its counts. */
struct tag_info {
	char tag[NET_ENFORCE_TAG_MAX + 1];
	bool has[NET_ENFORCE_KINDS];
	char *unit;
	bool counted;
	struct net_enforce_acct acct;
};

static void tag_info_done(struct tag_info *t)
{
	free(t->unit);
	t->unit = NULL;
}

/* The service manager, connected the first time a unit's tag asks for it (never, if none). */
struct manager {
	sd_bus *bus;
	bool tried;
};

static void manager_done(struct manager *m)
{
	m->bus = sd_bus_flush_close_unref(m->bus);
}

/*
 * The name of the unit whose invocation tag is ("unit-INVOCATION"), or NULL: quietly so when
 * the caller has no service manager, or it has no such invocation (any more).
 */
static char *tag_unit(struct manager *m, const char *tag)
{
	/* Its name only: its parent slices are not read (nor said to be unreadable). */
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	_cleanup_free_ char *path = NULL;
	size_t n = strlen(USERNET_TAG_PREFIX);

	if (strncmp(tag, USERNET_TAG_PREFIX, n) != 0)
		return NULL;
	if (!m->tried && usernet_bus_open(&m->bus) < 0)
		m->bus = NULL;
	m->tried = true;
	if (!m->bus || usernet_unit_path_by_invocation(m->bus, tag + n, &path) < 0 ||
	    usernet_unit_read_own(m->bus, path, &u) < 0)
		return NULL;
	return TAKE_PTR(u.name);
}

/* t's unit (unless known) and its counts (if it has an ip object): 0 or -errno, said. */
static int tag_fill(struct bpfbroker *b, struct manager *m, struct tag_info *t)
{
	char *error = NULL;
	int k;

	if (!t->unit)
		t->unit = tag_unit(m, t->tag);
	if (!t->has[NET_ENFORCE_IP])
		return 0;
	k = net_enforce_accounting(b, t->tag, &t->acct, &error);
	if (k < 0) {
		fprintf(stderr, "bpfctl: %s\n", error ?: strerror(-k));
		free(error);
		return k;
	}
	t->counted = true;
	return 0;
}

/* Which of t's objects are loaded: 0, or an exit status (the broker's error said). */
static int tag_objects(struct cli *c, struct tag_info *t)
{
	for (size_t i = 0; i < NET_ENFORCE_KINDS; i++) {
		struct bpfbroker_error *e = NULL;
		char name[NET_ENFORCE_NAME_MAX], *text = NULL;
		int k;

		net_enforce_object_name(t->tag, i, name);
		k = bpfbroker_show(c->b, name, &text, &e);
		free(text);
		t->has[i] = k == 0;
		if (k < 0 && e && strcmp(e->code, PROTO_E_NOT_FOUND) == 0) {
			bpfbroker_error_free(e);
			continue;
		}
		if (k < 0)
			return report_error(c, k, e, name);
	}
	return 0;
}

static bool tag_has_any(const struct tag_info *t)
{
	for (size_t i = 0; i < NET_ENFORCE_KINDS; i++)
		if (t->has[i])
			return true;
	return false;
}

static json_object *direction_json(uint64_t bytes, uint64_t packets)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (json_add(o, "bytes", json_object_new_uint64(bytes)) < 0 ||
	    json_add(o, "packets", json_object_new_uint64(packets)) < 0)
		return NULL;
	return TAKE_PTR(o);
}

/* "ingress" and "egress" of a, each {"bytes", "packets"}, added to o: 0 or -ENOMEM. */
static int acct_json(json_object *o, const struct net_enforce_acct *a)
{
	int k = json_add(o, "ingress", direction_json(a->in_bytes, a->in_packets));

	return k < 0 ? k : json_add(o, "egress", direction_json(a->out_bytes, a->out_packets));
}

/* ["ip", "ifaces", "bind"]: those t has. */
static json_object *kinds_json(const struct tag_info *t)
{
	_cleanup_json_ json_object *a = json_object_new_array();

	for (size_t i = 0; i < NET_ENFORCE_KINDS; i++)
		if (t->has[i] && json_append(a, json_object_new_string(net_enforce_kinds[i])) < 0)
			return NULL;
	return TAKE_PTR(a);
}

/* {"tag", "unit" (null if not known), "objects": [KIND...], "ingress" and "egress" if counted} */
static json_object *tag_json(const struct tag_info *t)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	int k = json_add(o, "tag", json_object_new_string(t->tag));

	if (k == 0 && t->unit)
		k = json_add(o, "unit", json_object_new_string(t->unit));
	else if (k == 0 && json_object_object_add(o, "unit", NULL) < 0)
		k = -ENOMEM;
	if (k == 0)
		k = json_add(o, "objects", kinds_json(t));
	if (k == 0 && t->counted)
		k = acct_json(o, &t->acct);
	return k == 0 ? TAKE_PTR(o) : NULL;
}

static void print_acct_text(FILE *f, const struct net_enforce_acct *a)
{
	fprintf(f,
		"IP traffic received: %" PRIu64 " bytes, %" PRIu64 " packets\n"
		"IP traffic sent: %" PRIu64 " bytes, %" PRIu64 " packets\n",
		a->in_bytes, a->in_packets, a->out_bytes, a->out_packets);
}

void net_print_acct(FILE *f, bool json, const char *tag, const struct net_enforce_acct *a)
{
	_cleanup_json_ json_object *o = NULL;

	if (!json) {
		print_acct_text(f, a);
		return;
	}
	o = json_object_new_object();
	if (json_add(o, "tag", json_object_new_string(tag)) < 0 || acct_json(o, a) < 0) {
		fprintf(stderr, "bpfctl: out of memory\n");
		return;
	}
	/* One line: it goes to stderr, among CMD's own messages. */
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

/* One tag as net show prints it: 0 or an exit status. */
static int print_tag(struct cli *c, const struct tag_info *t)
{
	_cleanup_json_ json_object *o = NULL;

	if (c->json) {
		o = tag_json(t);
		if (!o)
			return die_errno(-ENOMEM, "JSON");
		print_json_value(o);
		return 0;
	}
	printf("Tag: %s\n", t->tag);
	if (t->unit)
		printf("Unit: %s\n", t->unit);
	printf("Objects:");
	for (size_t i = 0; i < NET_ENFORCE_KINDS; i++)
		if (t->has[i])
			printf(" net-%s-%s", t->tag, net_enforce_kinds[i]);
	printf("\n");
	if (t->counted)
		print_acct_text(stdout, &t->acct);
	else
		printf("IP traffic: not counted (no net-%s-ip: none of IPAddressAllow=, "
		       "IPAddressDeny=, IPAccounting=)\n",
		       t->tag);
	return 0;
}

/* net show of a tag whose objects are in t->has: 0 or an exit status. */
static int show(struct cli *c, struct tag_info *t)
{
	_cleanup_(manager_done) struct manager m = {};

	if (tag_fill(c->b, &m, t) < 0)
		return EXIT_ERROR;
	return print_tag(c, t);
}

int net_show_tag(struct cli *c, const char *tag)
{
	_cleanup_(tag_info_done) struct tag_info t = {};
	int k;

	snprintf(t.tag, sizeof(t.tag), "%s", tag);
	k = tag_objects(c, &t);
	if (k != 0)
		return k;
	if (!tag_has_any(&t)) {
		fprintf(stderr, "bpfctl: no objects of tag %s (net-%s-ip, -ifaces, -bind)\n", tag,
			tag);
		return EXIT_NOT_THERE;
	}
	return show(c, &t);
}

/* Why unit u, running, has no objects: it asks for none, the watcher did not apply them, or
 * its parent slices could not be read. */
static void explain_no_objects(const struct usernet_unit *u, const char *tag)
{
	/* What it sets is unknown (the reason said above): do not guess. */
	if (u->settings_error < 0)
		fprintf(stderr,
			"bpfctl: %s has no network objects, and its parent slices could not be "
			"read (%s): which network settings it has is unknown\n",
			u->name, strerror(-u->settings_error));
	else if (u->settings.n == 0)
		fprintf(stderr,
			"bpfctl: %s has no network objects: it sets none of IPAddressAllow=, "
			"IPAddressDeny=, IPAccounting=, RestrictNetworkInterfaces=, "
			"SocketBindAllow=, SocketBindDeny=\n",
			u->name);
	else
		fprintf(stderr,
			"bpfctl: %s has no network objects (net-%s-*) although it sets %s%s: is "
			"bpfbroker-user-net running? (systemctl --user status "
			"bpfbroker-user-net)\n",
			u->name, tag, u->settings.v[0], u->settings.n > 1 ? " and more" : "");
}

int net_show_unit(struct cli *c, const char *unit)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	_cleanup_(tag_info_done) struct tag_info t = {};
	_cleanup_free_ char *name = NULL, *path = NULL;
	int k;

	/* "foo" is "foo.service", as systemctl takes it. */
	if (asprintf(&name, "%s%s", unit, strchr(unit, '.') ? "" : ".service") < 0)
		return die_errno(-ENOMEM, unit);
	k = usernet_bus_open(&bus);
	if (k < 0)
		return die_errno(k, "cannot reach your service manager (systemctl --user's)");
	k = usernet_unit_path_by_name(bus, name, &path);
	if (k == -ENOENT) {
		fprintf(stderr, "bpfctl: %s is not loaded in your service manager\n", name);
		return EXIT_NOT_THERE;
	}
	if (k < 0)
		return die_errno(k, name);
	k = usernet_unit_read(bus, path, &u);
	if (k < 0)
		return die_errno(k, name);
	if (!usernet_unit_is_running(&u) || !u.invocation_id[0]) {
		fprintf(stderr, "bpfctl: %s is not running (it is %s)\n", u.name, u.active_state);
		return EXIT_NOT_THERE;
	}
	snprintf(t.tag, sizeof(t.tag), "%s%s", USERNET_TAG_PREFIX, u.invocation_id);
	k = tag_objects(c, &t);
	if (k != 0)
		return k;
	if (!tag_has_any(&t)) {
		explain_no_objects(&u, t.tag);
		return EXIT_NOT_THERE;
	}
	t.unit = TAKE_PTR(u.name);
	return show(c, &t);
}

/* A tag's objects, found by name in the caller's list. */
struct tag_list {
	struct tag_info *v;
	size_t n;
};

static void tag_list_done(struct tag_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		tag_info_done(&l->v[i]);
	free(l->v);
}

/* Note name ("net-TAG-KIND") in l; other names are not net_enforce's: 0 or -ENOMEM. */
static int tag_list_add(struct tag_list *l, const char *name)
{
	const char *dash = strrchr(name, '-'), *tag = name + strlen("net-");
	char t[NET_ENFORCE_TAG_MAX + 1];
	size_t len, kind, i;

	if (strncmp(name, "net-", 4) != 0 || !dash || dash <= tag)
		return 0;
	len = (size_t)(dash - tag);
	for (kind = 0; kind < NET_ENFORCE_KINDS && strcmp(dash + 1, net_enforce_kinds[kind]) != 0;
	     kind++)
		;
	if (kind == NET_ENFORCE_KINDS || len > NET_ENFORCE_TAG_MAX)
		return 0;
	memcpy(t, tag, len);
	t[len] = '\0';
	if (!net_enforce_tag_is_valid(t))
		return 0;
	/* Not in order: "net-a-b-ip" sorts between "net-a-bind" and "net-a-ip". */
	for (i = 0; i < l->n && strcmp(l->v[i].tag, t) != 0; i++)
		;
	if (i == l->n) {
		struct tag_info *v = reallocarray(l->v, l->n + 1, sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->v[l->n++] = (struct tag_info){};
		memcpy(l->v[i].tag, t, len + 1);
	}
	l->v[i].has[kind] = true;
	return 0;
}

/* The caller's tags from the broker's list: 0 or an exit status. */
static int tags_listed(struct cli *c, struct tag_list *l)
{
	_cleanup_json_ json_object *o = NULL;
	_cleanup_free_ char *text = NULL;
	struct bpfbroker_error *e = NULL;
	json_object *objects, *name;
	int k;

	k = bpfbroker_list(c->b, NULL, &text, &e);
	if (k < 0)
		return report_error(c, k, e, "cannot list your objects");
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "objects", &objects) ||
	    !json_object_is_type(objects, json_type_array))
		return die_errno(-EBADMSG, "the broker's list");
	for (size_t i = 0; i < json_object_array_length(objects); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(objects, i), "name",
					      &name) &&
		    json_object_is_type(name, json_type_string) &&
		    tag_list_add(l, json_object_get_string(name)) < 0)
			return die_errno(-ENOMEM, "listing");
	return 0;
}

/* {"tags": [TAG...]}, each as net show -j prints one. */
static int print_list_json(const struct tag_list *l)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object *tags = json_object_new_array();
	int k = json_add(o, "tags", tags);

	for (size_t i = 0; k == 0 && i < l->n; i++)
		k = json_append(tags, tag_json(&l->v[i]));
	if (k < 0)
		return die_errno(k, "JSON");
	print_json_value(o);
	return 0;
}

static void print_list_text(const struct tag_list *l)
{
	if (l->n > 0)
		printf("%-37s %-24s %-14s %12s %10s %12s %10s\n", "TAG", "UNIT", "OBJECTS",
		       "IN-BYTES", "IN-PACKETS", "OUT-BYTES", "OUT-PACKETS");
	for (size_t i = 0; i < l->n; i++) {
		const struct tag_info *t = &l->v[i];
		char objects[32] = "", counts[4][24];
		const uint64_t values[4] = {t->acct.in_bytes, t->acct.in_packets, t->acct.out_bytes,
					    t->acct.out_packets};

		for (size_t j = 0; j < NET_ENFORCE_KINDS; j++)
			if (t->has[j])
				snprintf(objects + strlen(objects),
					 sizeof(objects) - strlen(objects), "%s%s",
					 objects[0] ? "," : "", net_enforce_kinds[j]);
		for (size_t j = 0; j < 4; j++)
			if (t->counted)
				snprintf(counts[j], sizeof(counts[j]), "%" PRIu64, values[j]);
			else
				snprintf(counts[j], sizeof(counts[j]), "-");
		printf("%-37s %-24s %-14s %12s %10s %12s %10s\n", t->tag, t->unit ?: "-", objects,
		       counts[0], counts[1], counts[2], counts[3]);
	}
}

int net_list(struct cli *c)
{
	_cleanup_(tag_list_done) struct tag_list l = {};
	_cleanup_(manager_done) struct manager m = {};
	int k, r = 0;

	k = tags_listed(c, &l);
	if (k != 0)
		return k;
	/* A tag whose counts cannot be read is listed without them; the exit status says so. */
	for (size_t i = 0; i < l.n; i++)
		if (tag_fill(c->b, &m, &l.v[i]) < 0)
			r = EXIT_ERROR;
	if (c->json)
		k = print_list_json(&l);
	else
		print_list_text(&l);
	return k != 0 ? k : r;
}
