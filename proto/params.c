/* SPDX-License-Identifier: MIT */
/* One decoder, encoder and done for params described by tables of fields (params.h). */
#include "params.h"
#include "common/hex.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "proto.h"

#define FIELD(p, f) ((char *)(p) + (f)->offset)
#define COUNT(p, f) ((size_t *)((char *)(p) + (f)->count_offset))

static int fields_decode_into(const struct proto_fields *t, json_object *o, size_t n_fds, void *p,
			      char **error);
static void fields_done(const struct proto_fields *t, void *p);

/* Integers are stored in the member's own width: a count, a size, an enum. */
static void int_store(const struct proto_field *f, void *p, int64_t x)
{
	if (f->width == sizeof(uint32_t)) {
		uint32_t v = (uint32_t)x;

		memcpy(FIELD(p, f), &v, sizeof(v));
	} else {
		memcpy(FIELD(p, f), &x, sizeof(x));
	}
}

static int64_t int_load(const struct proto_field *f, const void *p)
{
	if (f->width == sizeof(uint32_t)) {
		uint32_t v;

		memcpy(&v, FIELD(p, f), sizeof(v));
		return v;
	}
	int64_t x;

	memcpy(&x, FIELD(p, f), sizeof(x));
	return x;
}

/* v: the key's value, NULL when absent or null. */
static json_object *get_value(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

static int decode_string(const struct proto_field *f, json_object *o, void *p, char **error)
{
	const char *s;
	int r = proto_get_string(o, f->key, f->required, &s, error);

	if (r < 0 || !s)
		return r;
	if (f->max > 0 && (!s[0] || strlen(s) > (size_t)f->max)) {
		if (f->rule)
			return error_setf(error, -EINVAL, "\"%s\" must %s", f->key, f->rule);
		return error_setf(error, -EINVAL, "\"%s\" must be 1 to %" PRId64 " characters",
				  f->key, f->max);
	}
	if (f->valid && !f->valid(s))
		return error_setf(error, -EINVAL, "\"%s\" must %s", f->key, f->valid_rule);
	*(char **)FIELD(p, f) = strdup(s);
	return *(char **)FIELD(p, f) ? 0 : -ENOMEM;
}

static int decode_hex(const struct proto_field *f, json_object *o, void *p, char **error)
{
	uint8_t **data = (uint8_t **)FIELD(p, f);
	const char *s;
	size_t len;
	int r = proto_get_string(o, f->key, f->required, &s, error);

	if (r < 0 || !s)
		return r;
	len = strlen(s);
	/* Checked before decoding: a too long string costs no allocation. */
	if (len > 2 * (size_t)f->max)
		return error_setf(error, -E2BIG, "\"%s\" is over %" PRId64 " bytes", f->key,
				  f->max);
	if (len == 0 && f->min == 0) {
		*data = malloc(1);
		*COUNT(p, f) = 0;
		return *data ? 0 : -ENOMEM;
	}
	r = len / 2 < (size_t)f->min ? -EINVAL : hex_decode(s, len, data, COUNT(p, f));
	if (r == -ENOMEM)
		return r;
	if (r < 0 && f->rule)
		return error_setf(error, -EINVAL, "\"%s\" must %s", f->key, f->rule);
	if (r < 0)
		return error_setf(error, -EINVAL,
				  "\"%s\" must be hex bytes: an even number of hex digits, %" PRId64
				  " to %" PRId64 " bytes",
				  f->key, f->min, f->max);
	return 0;
}

static int decode_int(const struct proto_field *f, json_object *o, size_t n_fds, void *p,
		      char **error)
{
	int64_t x = f->def;
	int r;

	if (f->has_present)
		*(bool *)((char *)p + f->present_offset) = get_value(o, f->key) != NULL;
	r = proto_get_int(o, f->key, f->required, f->min, f->max, &x, error);
	if (r < 0)
		return r;
	/* Checked here, before any later field: the fds are the request's first fault. */
	if (f->fd_index && get_value(o, f->key) && (uint64_t)x >= n_fds) {
		error_setf(error, 0, "\"%s\" refers to fd %" PRId64 " but the message carries %zu",
			   f->key, x, n_fds);
		return -EBADF;
	}
	int_store(f, p, x);
	return 0;
}

static int decode_enum(const struct proto_field *f, json_object *o, void *p, char **error)
{
	char list[256] = "";
	size_t n = 0, len = 0;
	const char *s;
	int r = proto_get_string(o, f->key, f->required, &s, error);

	if (r < 0 || !s)
		return r;
	for (; f->names[n]; n++)
		if (strcmp(s, f->names[n]) == 0) {
			int_store(f, p, (int64_t)n);
			return 0;
		}
	/* "a, b or c", from the names themselves. */
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i == 0	    ? ""
					: i + 1 < n ? ", "
						    : " or ",
					f->names[i]);
	return error_setf(error, -EINVAL, "\"%s\" must be %s, not \"%.32s\"", f->key, list, s);
}

/* Prefix an item's error with where it is. */
static int item_error(char **error, const char *key, size_t i, int r)
{
	if (error && *error) {
		char *inner = *error;

		*error = NULL;
		error_setf(error, 0, "%s[%zu]: %s", key, i, inner);
		free(inner);
	}
	return r;
}

static int decode_array(const struct proto_field *f, json_object *o, size_t n_fds, void *p,
			char **error)
{
	const struct proto_fields *items = f->items;
	json_object *a = get_value(o, f->key);
	_cleanup_free_ char *buf = NULL;
	size_t n;
	int r;

	if (!a)
		return f->required ? error_setf(error, -EINVAL, "missing \"%s\"", f->key) : 0;
	if (!json_object_is_type(a, json_type_array))
		return error_setf(error, -EINVAL, "\"%s\" must be an array", f->key);
	n = json_object_array_length(a);
	if (n > (size_t)f->max)
		return error_setf(error, -E2BIG,
				  "\"%s\" has %zu items, at most %" PRId64 " allowed", f->key, n,
				  f->max);
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_object))
			return error_setf(error, -EINVAL, "%s[%zu] must be an object", f->key, i);
	if (n == 0)
		return 0;
	buf = calloc(n, items->size);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = fields_decode_into(items, json_object_array_get_idx(a, i), n_fds,
				       buf + i * items->size, error);
		if (r < 0) {
			for (size_t j = 0; j < i; j++)
				fields_done(items, buf + j * items->size);
			return item_error(error, f->key, i, r);
		}
	}
	*(char **)FIELD(p, f) = TAKE_PTR(buf);
	*COUNT(p, f) = n;
	return 0;
}

static int decode_field(const struct proto_field *f, json_object *o, size_t n_fds, void *p,
			char **error)
{
	switch (f->kind) {
	case PROTO_FIELD_STRING:
		return decode_string(f, o, p, error);
	case PROTO_FIELD_BOOL:
		return proto_get_bool(o, f->key, f->required, (bool *)FIELD(p, f), error);
	case PROTO_FIELD_INT:
		return decode_int(f, o, n_fds, p, error);
	case PROTO_FIELD_HEX:
		return decode_hex(f, o, p, error);
	case PROTO_FIELD_ENUM:
		return decode_enum(f, o, p, error);
	case PROTO_FIELD_ARRAY:
		return decode_array(f, o, n_fds, p, error);
	case PROTO_FIELD_CUSTOM:
		return f->custom->decode(get_value(o, f->key), FIELD(p, f), error);
	}
	return -EINVAL;
}

static const struct proto_field *find_field(const struct proto_fields *t, const char *key)
{
	for (size_t i = 0; key && i < t->n_fields; i++)
		if (strcmp(t->fields[i].key, key) == 0)
			return &t->fields[i];
	return NULL;
}

/* The selector's value in a decoded p, as a bit of only_for; 0 for a table without one. */
static uint32_t selected(const struct proto_fields *t, const void *p)
{
	const struct proto_field *s = find_field(t, t->selector);
	int64_t v = s ? int_load(s, p) : -1;

	return v >= 0 && v < 32 ? UINT32_C(1) << v : 0;
}

static bool applies(const struct proto_field *f, uint32_t bit)
{
	return f->only_for == 0 || (f->only_for & bit);
}

/* The selector first, and keys the selected value does not take refused. */
static int decode_selector(const struct proto_fields *t, json_object *o, void *p, char **error)
{
	const struct proto_field *s = find_field(t, t->selector);
	uint32_t bit;
	int r = decode_enum(s, o, p, error);

	if (r < 0)
		return r;
	bit = selected(t, p);
	/* No params at all (a table without needs_params): no key to refuse. */
	if (!o)
		return 0;
	json_object_object_foreach (o, key, val) {
		(void)val;
		if (!applies(find_field(t, key), bit))
			return error_setf(error, -EINVAL, "%s %s takes no \"%s\"", s->key,
					  s->names[int_load(s, p)], key);
	}
	return 0;
}

/* Decode o into p, zeroed: on failure, p is done again. */
static int fields_decode_into(const struct proto_fields *t, json_object *o, size_t n_fds, void *p,
			      char **error)
{
	const struct proto_field *sel = find_field(t, t->selector);
	const char *keys[PROTO_MAX_FIELDS + 1];
	uint32_t bit = 0;
	int r = 0;

	if (!o && t->needs_params)
		return error_setf(error, -EINVAL, "%s needs \"params\"", t->what);
	if (t->n_fields > PROTO_MAX_FIELDS || (o && !json_object_is_type(o, json_type_object)))
		return error_setf(error, -EINVAL, "%s: params must be an object", t->what);
	for (size_t i = 0; i < t->n_fields; i++)
		keys[i] = t->fields[i].key;
	keys[t->n_fields] = NULL;
	if (o)
		r = proto_check_keys(o, t->what, keys, error);
	if (r < 0 || t->size == 0)
		return r;
	if (sel) {
		r = decode_selector(t, o, p, error);
		bit = selected(t, p);
	}
	for (size_t i = 0; i < t->n_fields && r >= 0; i++) {
		const struct proto_field *f = &t->fields[i];

		/*
		 * A field that does not apply writes nothing, not even its default: it may share
		 * its member with one that does (decode_int() stores the default of those).
		 */
		if (f == sel || !applies(f, bit))
			continue;
		if ((f->needed_for & bit) && !get_value(o, f->key))
			r = error_setf(error, -EINVAL, "%s %s needs \"%s\"", sel->key,
				       sel->names[int_load(sel, p)], f->key);
		else
			r = decode_field(f, o, n_fds, p, error);
	}
	if (r >= 0 && t->check)
		r = t->check(p, error);
	if (r < 0)
		fields_done(t, p);
	return r;
}

int proto_fields_decode(const struct proto_fields *t, json_object *o, size_t n_fds, void *ret,
			char **error)
{
	_cleanup_free_ void *p = calloc(1, t->size ?: 1);
	int r;

	if (!p)
		return -ENOMEM;
	r = fields_decode_into(t, o, n_fds, p, error);
	if (r < 0)
		return r;
	/* A method without params has no struct (and ret may be NULL). */
	if (t->size > 0)
		memcpy(ret, p, t->size);
	return 0;
}

/* A value to send, or -ENOMEM in *r: a key is never left out for want of memory. */
static json_object *sent(json_object *o, int *r)
{
	if (!o)
		*r = -ENOMEM;
	return o;
}

static json_object *encode_field(const struct proto_field *f, const void *p, int *r)
{
	const void *v = FIELD(p, f);

	switch (f->kind) {
	case PROTO_FIELD_STRING:
		return *(char *const *)v ? sent(json_object_new_string(*(char *const *)v), r)
					 : NULL;
	case PROTO_FIELD_BOOL:
		return *(const bool *)v ? sent(json_object_new_boolean(true), r) : NULL;
	case PROTO_FIELD_INT: {
		int64_t x = int_load(f, p);
		bool send = f->has_present ? *(const bool *)((const char *)p + f->present_offset)
					   : f->required || x != f->def;

		return send ? sent(json_object_new_int64(x), r) : NULL;
	}
	case PROTO_FIELD_ENUM: {
		int64_t x = int_load(f, p);

		for (int64_t i = 0; f->names[i]; i++)
			if (i == x)
				return json_object_new_string(f->names[i]);
		*r = -EINVAL; /* no value to send: the request is not sent at all */
		return NULL;
	}
	case PROTO_FIELD_HEX: {
		const uint8_t *data = *(uint8_t *const *)v;
		size_t size = *COUNT(p, f);
		_cleanup_free_ char *hex = NULL;

		/* Empty bytes where at least one is needed count as absent. */
		if (!data || (size == 0 && f->min > 0))
			return NULL;
		hex = hex_encode(data, size);
		if (!hex)
			*r = -ENOMEM;
		return hex ? json_object_new_string(hex) : NULL;
	}
	case PROTO_FIELD_ARRAY: {
		const char *items = *(char *const *)v;
		size_t n = *COUNT(p, f);
		json_object *a;

		if (n == 0)
			return NULL;
		a = json_object_new_array_ext((int)n);
		for (size_t i = 0; a && i < n; i++) {
			json_object *e = proto_fields_encode(f->items, items + i * f->items->size);

			if (!e || json_object_array_add(a, e) < 0) {
				json_object_put(e);
				json_object_put(a);
				a = NULL;
			}
		}
		if (!a)
			*r = -ENOMEM;
		return a;
	}
	case PROTO_FIELD_CUSTOM:
		return f->custom->encode(v);
	}
	return NULL;
}

json_object *proto_fields_encode(const struct proto_fields *t, const void *p)
{
	json_object *o = json_object_new_object();
	uint32_t bit = selected(t, p);
	int r = 0;

	for (size_t i = 0; o && i < t->n_fields && r >= 0; i++) {
		const struct proto_field *f = &t->fields[i];
		json_object *j;

		if (!applies(f, bit))
			continue;
		j = encode_field(f, p, &r);
		if (j && json_object_object_add(o, f->key, j) < 0) {
			json_object_put(j);
			r = -ENOMEM;
		}
	}
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static void fields_done(const struct proto_fields *t, void *p)
{
	uint32_t bit = selected(t, p);

	for (size_t i = 0; i < t->n_fields; i++) {
		const struct proto_field *f = &t->fields[i];

		/* Fields that do not apply share members with those that do (key, cursor). */
		if (!applies(f, bit))
			continue;
		if (f->kind == PROTO_FIELD_STRING || f->kind == PROTO_FIELD_HEX) {
			free(*(void **)FIELD(p, f));
		} else if (f->kind == PROTO_FIELD_ARRAY) {
			char *items = *(char **)FIELD(p, f);

			for (size_t j = 0; items && j < *COUNT(p, f); j++)
				fields_done(f->items, items + j * f->items->size);
			free(items);
		} else if (f->kind == PROTO_FIELD_CUSTOM) {
			f->custom->done(FIELD(p, f));
		}
	}
	memset(p, 0, t->size);
}

void proto_fields_done(const struct proto_fields *t, void *p)
{
	if (p)
		fields_done(t, p);
}
