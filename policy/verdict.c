/* SPDX-License-Identifier: MIT */
#include "verdict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *verdict_reason_vformat(const char *key, const char *fmt, va_list ap)
{
	_cleanup_free_ char *text = NULL;
	char *full;

	if (vasprintf(&text, fmt, ap) < 0)
		return NULL;
	if (!key || !*key)
		return TAKE_PTR(text);
	if (asprintf(&full, "%s (policy key %s)", text, key) < 0)
		return NULL;
	return full;
}

char *verdict_reason_format(const char *key, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = verdict_reason_vformat(key, fmt, ap);
	va_end(ap);
	return s;
}

int verdict_item_add(struct verdict_item *it, const char *key, char *text)
{
	_cleanup_free_ char *t = text, *key_copy = strdup(key ?: "");
	struct verdict_reason *grown;

	if (!t || !key_copy)
		return -ENOMEM;
	grown = reallocarray(it->reasons, it->n_reasons + 1, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	it->reasons = grown;
	it->reasons[it->n_reasons++] =
		(struct verdict_reason){.text = TAKE_PTR(t), .key = TAKE_PTR(key_copy)};
	it->reason = it->reasons[0].text;
	it->allowed = false;
	return 0;
}

int verdict_item_deny(struct verdict_item *it, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = verdict_reason_vformat(key, fmt, ap);
	va_end(ap);
	return verdict_item_add(it, key, text);
}

void verdict_item_done(struct verdict_item *it)
{
	for (size_t i = 0; i < it->n_reasons; i++) {
		free(it->reasons[i].text);
		free(it->reasons[i].key);
	}
	free(it->reasons);
	it->reasons = NULL;
	it->n_reasons = 0;
	it->reason = NULL;
}

char *verdict_item_text(const struct verdict_item *it)
{
	size_t len = 1;
	char *s;

	if (it->allowed || it->n_reasons == 0)
		return strdup(it->allowed ? "allowed" : "denied");
	for (size_t i = 0; i < it->n_reasons; i++)
		len += strlen(it->reasons[i].text) + 2;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < it->n_reasons; i++) {
		if (i > 0)
			strcat(s, "; ");
		strcat(s, it->reasons[i].text);
	}
	return s;
}

json_object *verdict_denial_json(const char *kind, const char *name, const char *text,
				 const char *key)
{
	json_object *o = json_object_new_object();

	if (!o || json_object_object_add(o, "kind", json_object_new_string(kind)) < 0 ||
	    (name && json_object_object_add(o, "name", json_object_new_string(name)) < 0) ||
	    json_object_object_add(o, "reason", json_object_new_string(text)) < 0 ||
	    json_object_object_add(o, "key", json_object_new_string(key ?: "")) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int item_to_json(const struct verdict_item *it, const char *kind, const char *name,
			json_object *reasons, json_object *denials)
{
	for (size_t i = 0; i < it->n_reasons; i++) {
		const struct verdict_reason *r = &it->reasons[i];
		json_object *text = json_object_new_string(r->text);
		json_object *entry = verdict_denial_json(kind, name, r->text, r->key);

		if (!text || !entry || json_object_array_add(reasons, text) < 0) {
			json_object_put(text);
			json_object_put(entry);
			return -ENOMEM;
		}
		if (json_object_array_add(denials, entry) < 0) {
			json_object_put(entry);
			return -ENOMEM;
		}
	}
	return 0;
}

int verdict_to_json(const struct policy_verdict *v, const struct object_desc *d,
		    json_object *reasons, json_object *denials)
{
	int k = item_to_json(&v->object, "object", NULL, reasons, denials);

	for (size_t i = 0; k >= 0 && i < v->n_programs && i < d->n_programs; i++)
		k = item_to_json(&v->programs[i], "program", d->programs[i].name ?: "", reasons,
				 denials);
	for (size_t i = 0; k >= 0 && i < v->n_maps && i < d->n_maps; i++)
		k = item_to_json(&v->maps[i], "map", d->maps[i].name ?: "", reasons, denials);
	return k;
}

void policy_verdict_done(struct policy_verdict *v)
{
	if (!v)
		return;
	verdict_item_done(&v->object);
	for (size_t i = 0; v->programs && i < v->n_programs; i++)
		verdict_item_done(&v->programs[i]);
	free(v->programs);
	for (size_t i = 0; v->maps && i < v->n_maps; i++)
		verdict_item_done(&v->maps[i]);
	free(v->maps);
	free(v->map_access);
	free(v->prog_fd);
	free(v->test_run_only);
	*v = (struct policy_verdict){};
}

const char *policy_verdict_first_reason(const struct policy_verdict *v)
{
	if (!v)
		return NULL;
	if (!v->object.allowed && v->object.reason)
		return v->object.reason;
	for (size_t i = 0; v->programs && i < v->n_programs; i++)
		if (!v->programs[i].allowed && v->programs[i].reason)
			return v->programs[i].reason;
	for (size_t i = 0; v->maps && i < v->n_maps; i++)
		if (!v->maps[i].allowed && v->maps[i].reason)
			return v->maps[i].reason;
	return NULL;
}
