/* SPDX-License-Identifier: MIT */
/*
 * Params described as tables of fields, with one decoder, encoder and done
 * for all of them: every method's params (method.h) and the items of their
 * arrays are {key, kind, required, bounds, offset} data. Strict like every
 * decoder here: unknown keys are errors, a null value counts as absent, and
 * *error names the key.
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
	PROTO_FIELD_STRING, /* char *: no NUL; 1..max characters when max > 0, and valid() */
	PROTO_FIELD_BOOL, /* bool: absent is false */
	PROTO_FIELD_INT, /* an integer of width bytes (4: uint32_t, 8: int64_t, size_t) in min..max
			  */
	PROTO_FIELD_HEX, /* uint8_t * and its size_t size: even hex digits, min..max bytes */
	PROTO_FIELD_ENUM, /* an integer as INT, sent as its name: names[value] */
	PROTO_FIELD_ARRAY, /* items and their size_t count: objects decoded by items, 0..max */
	PROTO_FIELD_CUSTOM, /* decoded by custom (an object whose keys depend on its type) */
};

/* A field decoded by its own functions, for what a table cannot say. */
struct proto_custom {
	/* v is NULL when absent (or null). 0 or negative errno with *error set. */
	int (*decode)(json_object *v, void *ret, char **error);
	json_object *(*encode)(const void *p); /* NULL: leave the key out */
	void (*done)(void *p);
};

struct proto_fields;

struct proto_field {
	const char *key;
	enum proto_field_kind kind;
	bool required;
	/* INT, ENUM: the range; STRING: max characters (0: any); HEX: bytes; ARRAY: items */
	int64_t min, max;
	int64_t def; /* INT: the value when absent (and not sent); not written if the field does not
			apply */
	size_t offset; /* of the value in the params struct (HEX: the data, ARRAY: the items) */
	size_t width; /* INT, ENUM: bytes of the integer, 4 or 8 */
	size_t count_offset; /* HEX: of the size_t byte count; ARRAY: of the size_t item count */
	/*
	 * STRING, HEX: what the value must be, in the error for a wrong length
	 * (after "must "); NULL: "be 1 to MAX characters", "be hex bytes: ...".
	 */
	const char *rule;
	/* STRING: a further check, after the length, with its own rule. */
	bool (*valid)(const char *s);
	const char *valid_rule;
	bool fd_index; /* INT: an index below the request's fd count, else -EBADF */
	bool has_present; /* INT: present_offset holds a bool, true when the key was given */
	size_t present_offset;
	const char *const *names; /* ENUM: NULL-terminated, the value is the index */
	const struct proto_fields *items; /* ARRAY: each item's table */
	/*
	 * With a selector (proto_fields), the selector's values (as bits) this
	 * field applies to (0: all) and needs it for: any other value refuses
	 * its key ("op info takes no \"key\"").
	 */
	uint32_t only_for, needed_for;
	const struct proto_custom *custom; /* CUSTOM only */
};

#define PROTO_MAX_FIELDS 16

struct proto_fields {
	const char *what; /* names the object in "unknown key" errors: a method, "target" */
	const struct proto_field *fields; /* in the order they are checked and sent */
	size_t n_fields;
	size_t size; /* of the params struct; 0: the object takes no keys at all */
	/* The key of an ENUM field, decoded first, whose value says which fields apply. */
	const char *selector;
	/* What the fields say together, once each is decoded: 0 or -EINVAL with *error set. */
	int (*check)(const void *p, char **error);
	bool needs_params; /* no object at all is "<what> needs \"params\"" */
};

/*
 * Decode object o (NULL: empty) of a request carrying n_fds fds into ret
 * (size bytes, written only on success): unknown keys first, then each field
 * in table order, so the first error is always the same one. -EINVAL
 * (missing, wrong type, bad hex), -ERANGE (an integer out of range), -E2BIG
 * (hex over max bytes, an array over max items), -EBADF (an fd index of
 * n_fds or more), -ENOMEM; *error (if error is not NULL) says which key and
 * why, prefixed by "key[i]: " in an array's item.
 */
int proto_fields_decode(const struct proto_fields *t, json_object *o, size_t n_fds, void *ret,
			char **error);
/* The params as they would be sent: absent fields, false and defaults left out. NULL on -ENOMEM. */
json_object *proto_fields_encode(const struct proto_fields *t, const void *p);
/* Free what decode allocated and zero p. */
void proto_fields_done(const struct proto_fields *t, void *p);

/* ---- the tables' building blocks, for the files that describe params ---- */

#define PROTO_STR_(x) #x
#define PROTO_STR(x) PROTO_STR_(x) /* a constant's digits, for a rule */
#define PROTO_WIDTH(s, k) sizeof(((s *)0)->k)

/* Each takes further designated initializers (.rule, .valid, .only_for, ...) after its own. */
#define PROTO_STRING(s, k, req, n, ...)                                                            \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_STRING, .required = req, .max = n,                  \
		.offset = offsetof(s, k), __VA_ARGS__                                              \
	}
#define PROTO_BOOL(s, k)                                                                           \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_BOOL, .offset = offsetof(s, k)                      \
	}
#define PROTO_INT(s, k, req, lo, hi, d, ...)                                                       \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_INT, .required = req, .min = lo, .max = hi,         \
		.def = d, .offset = offsetof(s, k), .width = PROTO_WIDTH(s, k), __VA_ARGS__        \
	}
/* Hex under key k into data member d and size member n. */
#define PROTO_HEX(s, k, d, n, req, lo, hi, ...)                                                    \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_HEX, .required = req, .min = lo, .max = hi,         \
		.offset = offsetof(s, d), .count_offset = offsetof(s, n), __VA_ARGS__              \
	}
#define PROTO_ENUM(s, k, req, list, ...)                                                           \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_ENUM, .required = req, .names = list,               \
		.offset = offsetof(s, k), .width = PROTO_WIDTH(s, k), __VA_ARGS__                  \
	}
/* Up to hi items of table t under key k into member k, counted in member n. */
#define PROTO_ARRAY(s, k, n, t, hi)                                                                \
	{                                                                                          \
		.key = #k, .kind = PROTO_FIELD_ARRAY, .max = hi, .offset = offsetof(s, k),         \
		.count_offset = offsetof(s, n), .items = &t                                        \
	}
#define PROTO_TABLE(name, w, s, f, ...)                                                            \
	const struct proto_fields name = {.what = w,                                               \
					  .fields = f,                                             \
					  .n_fields = sizeof(f) / sizeof((f)[0]),                  \
					  .size = sizeof(s),                                       \
					  __VA_ARGS__}
