/* SPDX-License-Identifier: MIT */
/*
 * JSON text written directly, for replies too large to build as json-c trees first: strings
 * made valid UTF-8 as proto_json_sanitize_utf8() makes them.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* A growing text. An allocation failure sticks in err; the text is then incomplete. */
struct json_text {
	char *buf; /* NUL-terminated once anything is written */
	size_t len, size;
	int err; /* 0 or -ENOMEM */
};

void json_text_done(struct json_text *t);

/* Append len bytes as they are (JSON punctuation, keys the caller knows need no escapes). */
void json_text_raw(struct json_text *t, const char *s, size_t len);
void json_text_lit(struct json_text *t, const char *s); /* the same, NUL-terminated */

/* Append s as a JSON string: escaped, each byte that is not UTF-8 as U+FFFD. */
void json_text_string(struct json_text *t, const char *s, size_t len);
void json_text_int(struct json_text *t, int64_t v);

/* Append a json-c value (of the depth json-c parses at most), its strings as json_text_string. */
void json_text_value(struct json_text *t, json_object *v);
