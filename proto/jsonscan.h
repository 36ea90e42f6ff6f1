/* SPDX-License-Identifier: MIT */
/*
 * A validating JSON scanner: where the values of a text are, without building them, for the
 * few places where json-c's trees cost more than the work (a list of 1,000 objects).
 */
#pragma once

#include <stdbool.h>
#include <json-c/json.h>
#include <stddef.h>

/* Part of a text: a whole JSON value (strings with their quotes), or a key. */
struct json_span {
	const char *s;
	size_t len;
};

/*
 * The members of an object or the elements of an array, in order. Every
 * value handed out has been checked as proto_parse() checks a message
 * (RFC 8259 grammar but for json-c's "1." and raw control bytes in
 * strings, UTF-8 strings, no NUL, at most PROTO_MAX_JSON_DEPTH
 * containers deep), but not converted: numbers and strings are as written.
 */
struct json_iter {
	const char *p, *end;
	unsigned depth; /* of the container iterated, 1 for the text's top level */
	char close; /* '}' or ']' */
	bool started, done;
};

/* Start on the object or array v ('{' or '[' first), at depth (1: the top level). */
int json_iter_init(struct json_iter *it, struct json_span v, unsigned depth);

/*
 * The next member (key, without its quotes, still escaped, and value) or
 * element (key NULL): 1, or 0 after the last, or -EBADMSG for anything that
 * is not JSON. For an object, key must not be NULL.
 */
int json_iter_next(struct json_iter *it, struct json_span *key, struct json_span *value);

/*
 * Check that the whole of text is one JSON object, as proto_parse() would
 * accept it (but for numbers out of a double's range): its span, or -EBADMSG.
 */
int json_scan_object_text(const char *text, size_t len, struct json_span *ret);

/* Whether key (as json_iter_next() gave it) is name, spelled without escapes. */
bool json_key_is(struct json_span key, const char *name);

/* What kind of value v is (a span json_iter_next() gave). */
static inline bool json_span_is_string(struct json_span v)
{
	return v.len >= 2 && v.s[0] == '"';
}
static inline bool json_span_is_array(struct json_span v)
{
	return v.len >= 2 && v.s[0] == '[';
}
static inline bool json_span_is_object(struct json_span v)
{
	return v.len >= 2 && v.s[0] == '{';
}

/*
 * The tokens, for a parser built on the scanner: just past whitespace at p,
 * or just past the string (p at its quote) or number at p, or NULL if it is
 * none.
 */
const char *json_scan_ws(const char *p, const char *end);
const char *json_scan_string(const char *p, const char *end);
const char *json_scan_number(const char *p, const char *end);

/*
 * The json-c tree of text (one JSON object), built from the scan: as
 * json_tokener_parse() would build it, for the texts json-c itself writes,
 * in about a fifth of its time. -EOPNOTSUPP for what it leaves to json-c
 * (numbers with a fraction or exponent or beyond int64, escaped surrogates,
 * escaped NULs in keys), -EBADMSG if not JSON, -ENOMEM.
 */
int json_scan_build(const char *text, size_t len, json_object **ret);
