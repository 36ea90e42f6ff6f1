/* SPDX-License-Identifier: MIT */
/*
 * bpfctl list, show and unload: named objects as the broker describes them,
 * printed one line per program, map, link and share.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bpfctl.h"
#include "common/macro.h"

/* A field as text (numbers too), or dflt. */
static const char *field(json_object *o, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return dflt;
	return json_object_get_string(v);
}

static bool field_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static json_object *field_array(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

/* OWNER/NAME loaded DATE, then one line per program, map, link and share. */
static void print_object(json_object *o)
{
	json_object *a, *v;
	char date[64] = "?";
	struct tm tm;
	time_t t;

	if (json_object_object_get_ex(o, "loaded_at", &v) &&
	    json_object_is_type(v, json_type_int)) {
		t = (time_t)json_object_get_int64(v);
		if (localtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %z", &tm);
	}
	printf("%s/%s loaded %s\n", field(o, "owner_name", NULL) ?: field(o, "owner", "?"),
	       field(o, "name", "?"), date);
	a = field_array(o, "programs");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *p = json_object_array_get_idx(a, i);

		printf("  program %-24s %-20s id %s%s\n", field(p, "name", "?"),
		       field(p, "type", "?"), field(p, "id", "-"),
		       field_bool(p, "test_run_only") ? "  test-run only" : "");
	}
	a = field_array(o, "maps");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *m = json_object_array_get_idx(a, i);

		printf("  map     %-24s %-20s %s\n", field(m, "name", "?"), field(m, "type", "?"),
		       field(m, "access", "none"));
	}
	a = field_array(o, "links");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *l = json_object_array_get_idx(a, i);

		printf("  link    %-6s %-17s %-20s %s%s\n", field(l, "id", "?"),
		       field(l, "program", "?"), field(l, "type", "?"), field(l, "target", "?"),
		       field_bool(l, "pinned") ? " (pinned)" : "");
	}
	a = field_array(o, "shares");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *sh = json_object_array_get_idx(a, i);
		bool user = field(sh, "user", NULL) != NULL;

		printf("  share   %-24s %s %s %s\n", field(sh, "map", "?"), user ? "user" : "group",
		       user ? field(sh, "user", "?") : field(sh, "group", "?"),
		       field(sh, "access", "?"));
	}
}

static json_object *parse_reply_json(const char *text)
{
	json_object *o = json_tokener_parse(text);

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		fprintf(stderr, "bpfctl: the broker's reply is not a JSON object\n");
		return NULL;
	}
	return o;
}

int cmd_list(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *text = NULL;
	json_object *o, *objects;
	size_t n;
	int k;

	if (c->list.all && c->list.user) {
		fprintf(stderr, "bpfctl: list takes --all or --user, not both\n");
		return EXIT_ERROR;
	}
	c->list.sz = sizeof(c->list);
	k = bpfbroker_list(b, &c->list, &text, &e);
	if (k < 0)
		return report_error(c, k, e, "list");
	o = parse_reply_json(text);
	if (!o)
		return EXIT_ERROR;
	/* The library's text is compact; -j prints it as show's, indented. */
	if (c->json) {
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
									 JSON_C_TO_STRING_SPACED));
		json_object_put(o);
		return EXIT_SUCCESS;
	}
	objects = field_array(o, "objects");
	n = objects ? json_object_array_length(objects) : 0;
	if (n == 0)
		printf("no named objects\n");
	for (size_t i = 0; i < n; i++)
		print_object(json_object_array_get_idx(objects, i));
	json_object_put(o);
	return EXIT_SUCCESS;
}

int cmd_show(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *text = NULL;
	json_object *o, *object;
	int k;

	k = bpfbroker_show(b, argv[0], &text, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (c->json) {
		printf("%s\n", text);
		return EXIT_SUCCESS;
	}
	o = parse_reply_json(text);
	if (!o)
		return EXIT_ERROR;
	if (json_object_object_get_ex(o, "object", &object))
		print_object(object);
	json_object_put(o);
	return EXIT_SUCCESS;
}

int cmd_unload(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	int k;

	k = bpfbroker_unload(b, argv[0], &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (c->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "unloaded", json_object_new_string(argv[0]));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		printf("unloaded %s\n", argv[0]);
	}
	return EXIT_SUCCESS;
}
