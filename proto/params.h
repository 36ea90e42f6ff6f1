/* SPDX-License-Identifier: MIT */
/*
 * Params decoded by a table of fields: one decoder, encoder and done for
 * every method whose params are described as {key, kind, required, bounds,
 * offset} (method.h). Strict like every decoder here: unknown keys are
 * errors, a null value counts as absent, and *error names the key.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes sent as hex. data is NULL when absent, and never NULL when present (even empty). */
struct proto_bytes {
	uint8_t *data;
	size_t size;
};

enum proto_field_kind {
	PROTO_FIELD_STRING, /* char *: no NUL; 1..max characters when max > 0 */
	PROTO_FIELD_BOOL, /* bool: absent is false */
	PROTO_FIELD_INT, /* int64_t in min..max; absent is def */
	PROTO_FIELD_HEX, /* struct proto_bytes: an even number of hex digits, min..max bytes */
	PROTO_FIELD_CUSTOM, /* decoded by custom (a nested object, say) */
};

/* A field decoded by its own functions, for what a table cannot say. */
struct proto_custom {
	/* v is NULL when absent (or null). 0 or negative errno with *error set. */
	int (*decode)(json_object *v, void *ret, char **error);
	json_object *(*encode)(const void *p); /* NULL: leave the key out */
	void (*done)(void *p);
};

struct proto_field {
	const char *key;
	enum proto_field_kind kind;
	bool required;
	int64_t min, max; /* INT: the range; STRING: max characters (0: any); HEX: bytes */
	int64_t def; /* INT: the value when absent */
	size_t offset; /* of the value in the params struct */
	const struct proto_custom *custom; /* CUSTOM only */
};

#define PROTO_MAX_FIELDS 16

struct proto_fields {
	const char *what; /* names the object in "unknown key" errors: a method, "target" */
	const struct proto_field *fields; /* in the order they are checked */
	size_t n_fields;
	size_t size; /* of the params struct; 0: the object takes no keys at all */
};

/*
 * Decode object o (NULL: empty) into ret (size bytes, written only on
 * success): unknown keys first, then each field in table order, so the
 * first error is always the same one. -EINVAL (missing, wrong type, bad
 * hex), -ERANGE (an integer out of range), -E2BIG (hex over max bytes),
 * -ENOMEM; *error (if error is not NULL) says which key and why.
 */
int proto_fields_decode(const struct proto_fields *t, json_object *o, void *ret, char **error);
/* The params as they would be sent: absent fields, false and defaults left out. NULL on -ENOMEM. */
json_object *proto_fields_encode(const struct proto_fields *t, const void *p);
/* Free what decode allocated and zero p. */
void proto_fields_done(const struct proto_fields *t, void *p);
