/* SPDX-License-Identifier: MIT */
/* One decoder, encoder and done for params described by a table of fields (params.h). */
#include "params.h"
#include "common/hex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "proto.h"

#define FIELD(p, f) ((char *)(p) + (f)->offset)

static int decode_string(const struct proto_field *f, json_object *o, void *p, char **error)
{
	const char *s;
	int r = proto_get_string(o, f->key, f->required, &s, error);

	if (r < 0 || !s)
		return r;
	if (f->max > 0 && (!s[0] || strlen(s) > (size_t)f->max))
		return error_setf(error, -EINVAL, "\"%s\" must be 1 to %lld characters", f->key,
				  (long long)f->max);
	*(char **)FIELD(p, f) = strdup(s);
	return *(char **)FIELD(p, f) ? 0 : -ENOMEM;
}

static int decode_hex(const struct proto_field *f, json_object *o, void *p, char **error)
{
	struct proto_bytes *b = (struct proto_bytes *)FIELD(p, f);
	const char *s;
	size_t len;
	int r = proto_get_string(o, f->key, f->required, &s, error);

	if (r < 0 || !s)
		return r;
	len = strlen(s);
	/* Checked before decoding: a too long string costs no allocation. */
	if (len > 2 * (size_t)f->max)
		return error_setf(error, -E2BIG, "\"%s\" is over %lld bytes", f->key,
				  (long long)f->max);
	if (len == 0 && f->min == 0) {
		b->data = malloc(1);
		b->size = 0;
		return b->data ? 0 : -ENOMEM;
	}
	r = len / 2 < (size_t)f->min ? -EINVAL : hex_decode(s, len, &b->data, &b->size);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return error_setf(error, -EINVAL,
				  "\"%s\" must be hex bytes: an even number of hex digits, %lld to "
				  "%lld bytes",
				  f->key, (long long)f->min, (long long)f->max);
	return 0;
}

static int decode_field(const struct proto_field *f, json_object *o, void *p, char **error)
{
	json_object *v = NULL;

	switch (f->kind) {
	case PROTO_FIELD_STRING:
		return decode_string(f, o, p, error);
	case PROTO_FIELD_BOOL:
		return proto_get_bool(o, f->key, f->required, (bool *)FIELD(p, f), error);
	case PROTO_FIELD_INT:
		*(int64_t *)FIELD(p, f) = f->def;
		return proto_get_int(o, f->key, f->required, f->min, f->max, (int64_t *)FIELD(p, f),
				     error);
	case PROTO_FIELD_HEX:
		return decode_hex(f, o, p, error);
	case PROTO_FIELD_CUSTOM:
		if (o && json_object_object_get_ex(o, f->key, &v) &&
		    json_object_is_type(v, json_type_null))
			v = NULL;
		return f->custom->decode(v, FIELD(p, f), error);
	}
	return -EINVAL;
}

int proto_fields_decode(const struct proto_fields *t, json_object *o, void *ret, char **error)
{
	const char *keys[PROTO_MAX_FIELDS + 1];
	_cleanup_free_ void *p = NULL;
	int r = 0;

	if (t->n_fields > PROTO_MAX_FIELDS || (o && !json_object_is_type(o, json_type_object)))
		return error_setf(error, -EINVAL, "%s: params must be an object", t->what);
	for (size_t i = 0; i < t->n_fields; i++)
		keys[i] = t->fields[i].key;
	keys[t->n_fields] = NULL;
	if (o)
		r = proto_check_keys(o, t->what, keys, error);
	if (r < 0 || t->size == 0)
		return r;
	p = calloc(1, t->size);
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_fields && r >= 0; i++)
		r = decode_field(&t->fields[i], o, p, error);
	if (r < 0) {
		proto_fields_done(t, p);
		return r;
	}
	memcpy(ret, p, t->size);
	return 0;
}

json_object *proto_fields_encode(const struct proto_fields *t, const void *p)
{
	json_object *o = json_object_new_object();
	int r = 0;

	for (size_t i = 0; o && i < t->n_fields && r >= 0; i++) {
		const struct proto_field *f = &t->fields[i];
		const void *v = (const char *)p + f->offset;
		json_object *j = NULL;

		switch (f->kind) {
		case PROTO_FIELD_STRING:
			if (*(char *const *)v)
				j = json_object_new_string(*(char *const *)v);
			break;
		case PROTO_FIELD_BOOL:
			if (*(const bool *)v)
				j = json_object_new_boolean(true);
			break;
		case PROTO_FIELD_INT:
			if (*(const int64_t *)v != f->def)
				j = json_object_new_int64(*(const int64_t *)v);
			break;
		case PROTO_FIELD_HEX: {
			const struct proto_bytes *b = v;

			if (b->data)
				r = proto_json_add_hex(o, f->key, b->data, b->size);
			continue;
		}
		case PROTO_FIELD_CUSTOM:
			j = f->custom->encode(v);
			break;
		}
		if (j)
			r = json_object_object_add(o, f->key, j);
	}
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void proto_fields_done(const struct proto_fields *t, void *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < t->n_fields; i++) {
		const struct proto_field *f = &t->fields[i];

		if (f->kind == PROTO_FIELD_STRING)
			free(*(char **)FIELD(p, f));
		else if (f->kind == PROTO_FIELD_HEX)
			free(((struct proto_bytes *)FIELD(p, f))->data);
		else if (f->kind == PROTO_FIELD_CUSTOM)
			f->custom->done(FIELD(p, f));
	}
	memset(p, 0, t->size);
}
