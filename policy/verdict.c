/* SPDX-License-Identifier: MIT */
#include "verdict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

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
	size_t n =
		it->n_reasons < VERDICT_MAX_ITEM_REASONS ? it->n_reasons : VERDICT_MAX_ITEM_REASONS;
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if (it->allowed || it->n_reasons == 0)
		return strdup(it->allowed ? "allowed" : "denied");
	f = open_memstream(&s, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i > 0 ? "; " : "", it->reasons[i].text);
	if (it->n_reasons > n)
		fprintf(f, "; and %zu more reasons", it->n_reasons - n);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	/*
	 * Cut, not on a UTF-8 continuation byte, so that every item's verdict
	 * stays small: an object may have many programs and maps, each reason
	 * up to 16 names of 128 bytes. Each whole reason is in "reasons".
	 */
	if (len > VERDICT_MAX_ITEM_TEXT) {
		size_t cut = VERDICT_MAX_ITEM_TEXT - strlen(VERDICT_ELLIPSIS);

		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
		memcpy(s + cut, VERDICT_ELLIPSIS, strlen(VERDICT_ELLIPSIS) + 1);
	}
	return s;
}

json_object *verdict_denial_json(const char *kind, const char *name, const char *key)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (json_add(o, "kind", json_object_new_string(kind)) < 0 ||
	    (name && json_add(o, "name", json_object_new_string(name)) < 0) ||
	    json_add(o, "key", json_object_new_string(key ?: "")) < 0)
		return NULL;
	return TAKE_PTR(o);
}

/* Append text to reasons and its entry to denials, both or neither. 0 or -ENOMEM. */
static int reason_append(json_object *reasons, json_object *denials, const char *kind,
			 const char *name, const char *text, const char *key)
{
	json_object *entry = verdict_denial_json(kind, name, key);

	if (!entry)
		return -ENOMEM;
	if (json_append(reasons, json_object_new_string(text)) < 0) {
		json_object_put(entry);
		return -ENOMEM;
	}
	if (json_append(denials, entry) < 0) {
		/* Keep them parallel: take the sentence back out. */
		json_object_array_del_idx(reasons, json_object_array_length(reasons) - 1, 1);
		return -ENOMEM;
	}
	return 0;
}

int verdict_error_add(json_object *error, const char *kind, const char *name, const char *text,
		      const char *key)
{
	_cleanup_json_ json_object *reasons = json_object_new_array();
	_cleanup_json_ json_object *denials = json_object_new_array();

	if (!error || !reasons || !denials ||
	    reason_append(reasons, denials, kind, name, text, key) < 0 ||
	    json_add(error, "reasons", TAKE_PTR(reasons)) < 0)
		return -ENOMEM;
	if (json_add(error, "denials", TAKE_PTR(denials)) < 0) {
		/* Both or neither: reasons without their keys would mislead. */
		json_object_object_del(error, "reasons");
		return -ENOMEM;
	}
	return 0;
}

/* Every reason of it, as long as fewer than VERDICT_MAX_REASONS went out; *n counts them all. */
static int item_to_json(const struct verdict_item *it, const char *kind, const char *name,
			json_object *reasons, json_object *denials, size_t *n)
{
	for (size_t i = 0; i < it->n_reasons; i++, (*n)++) {
		const struct verdict_reason *r = &it->reasons[i];

		if (*n < VERDICT_MAX_REASONS &&
		    reason_append(reasons, denials, kind, name, r->text, r->key) < 0)
			return -ENOMEM;
	}
	return 0;
}

int verdict_to_json(const struct policy_verdict *v, const struct object_desc *d,
		    json_object *reasons, json_object *denials)
{
	size_t n = 0;
	int k = item_to_json(&v->object, "object", NULL, reasons, denials, &n);

	for (size_t i = 0; k >= 0 && i < v->n_programs && i < d->n_programs; i++)
		k = item_to_json(&v->programs[i], "program", d->programs[i].name ?: "", reasons,
				 denials, &n);
	for (size_t i = 0; k >= 0 && i < v->n_maps && i < d->n_maps; i++)
		k = item_to_json(&v->maps[i], "map", d->maps[i].name ?: "", reasons, denials, &n);
	if (k >= 0 && n > VERDICT_MAX_REASONS) {
		_cleanup_free_ char *more = NULL;

		if (asprintf(&more, "and %zu more reasons", n - VERDICT_MAX_REASONS) < 0)
			return -ENOMEM;
		k = reason_append(reasons, denials, "object", NULL, more, "");
	}
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
