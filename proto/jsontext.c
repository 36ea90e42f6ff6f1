/* SPDX-License-Identifier: MIT */
/*
 * JSON text written directly (PROTO_JSON_FLAGS' shape: compact, "/" as it is), strings made
 * valid UTF-8.
 */
#include "jsontext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

void json_text_done(struct json_text *t)
{
	free(t->buf);
	*t = (struct json_text){};
}

static char *json_text_room(struct json_text *t, size_t len)
{
	if (t->err)
		return NULL;
	if (t->size - t->len <= len) {
		size_t size = t->size ? t->size : 4096;
		char *grown;

		while (size - t->len <= len) {
			if (size > SIZE_MAX / 2) {
				t->err = -ENOMEM;
				return NULL;
			}
			size *= 2;
		}
		grown = realloc(t->buf, size);
		if (!grown) {
			t->err = -ENOMEM;
			return NULL;
		}
		t->buf = grown;
		t->size = size;
	}
	return t->buf + t->len;
}

void json_text_raw(struct json_text *t, const char *s, size_t len)
{
	char *p = json_text_room(t, len);

	if (!p)
		return;
	memcpy(p, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
}

void json_text_lit(struct json_text *t, const char *s)
{
	json_text_raw(t, s, strlen(s));
}

void json_text_string(struct json_text *t, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	/* At worst every byte becomes \u00XX (6) or U+FFFD (3); and the quotes. */
	char *p = len < SIZE_MAX / 8 ? json_text_room(t, len * 6 + 2) : NULL, *start = p;

	if (!p) {
		t->err = -ENOMEM;
		return;
	}
	*p++ = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = u[i];
		size_t n;

		if (c == 0) {
			/* As proto_json_sanitize_utf8(): a NUL would cut the string for C readers.
			 */
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
			i++;
		} else if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			i++;
		} else if (c < 0x20) {
			static const char short_esc[] = "btn\0fr"; /* \b \t \n, \f \r */

			if (c >= '\b' && c <= '\r' && c != 0x0b) {
				*p++ = '\\';
				*p++ = short_esc[c - '\b'];
			} else {
				p += sprintf(p, "\\u%04x", c);
			}
			i++;
		} else if (c < 0x80) {
			*p++ = (char)c;
			i++;
		} else if ((n = proto_utf8_sequence(u + i, len - i)) > 0) {
			memcpy(p, u + i, n);
			p += n;
			i += n;
		} else {
			memcpy(p, "\xef\xbf\xbd", 3); /* U+FFFD */
			p += 3;
			i++;
		}
	}
	*p++ = '"';
	t->len += (size_t)(p - start);
	t->buf[t->len] = '\0';
}

void json_text_int(struct json_text *t, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	json_text_raw(t, num, (size_t)n);
}

static void json_text_value_at(struct json_text *t, json_object *v, unsigned depth)
{
	bool first = true;

	/* json-c parses at most 32 levels deep (JSON_TOKENER_DEFAULT_DEPTH); so never more here. */
	if (depth > 64) {
		t->err = -ENOMEM;
		return;
	}
	switch (json_object_get_type(v)) {
	case json_type_string:
		json_text_string(t, json_object_get_string(v),
				 (size_t)json_object_get_string_len(v));
		return;
	case json_type_int: {
		/*
		 * json-c keeps a number above INT64_MAX as a uint64, which
		 * json_object_get_int64() would clamp: written exactly instead.
		 */
		int64_t i = json_object_get_int64(v);
		uint64_t u = json_object_get_uint64(v);
		char num[24];

		if (i == INT64_MAX && u > (uint64_t)INT64_MAX) {
			json_text_raw(t, num, (size_t)snprintf(num, sizeof(num), "%" PRIu64, u));
			return;
		}
		json_text_int(t, i);
		return;
	}
	case json_type_boolean:
		json_text_lit(t, json_object_get_boolean(v) ? "true" : "false");
		return;
	case json_type_object:
		json_text_lit(t, "{");
		json_object_object_foreach (v, key, e) {
			if (!first)
				json_text_lit(t, ",");
			first = false;
			json_text_string(t, key, strlen(key));
			json_text_lit(t, ":");
			json_text_value_at(t, e, depth + 1);
		}
		json_text_lit(t, "}");
		return;
	case json_type_array:
		json_text_lit(t, "[");
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			if (i > 0)
				json_text_lit(t, ",");
			json_text_value_at(t, json_object_array_get_idx(v, i), depth + 1);
		}
		json_text_lit(t, "]");
		return;
	case json_type_double: {
		/*
		 * The value, never the text json-c kept from what it parsed: a
		 * metadata file's "NaN" or "-.5" is no JSON a client reads.
		 */
		double d = json_object_get_double(v);
		char num[32];

		if (!isfinite(d)) {
			json_text_lit(t, "null");
			return;
		}
		snprintf(num, sizeof(num), "%.17g", d);
		json_text_lit(t, num);
		return;
	}
	default:
		json_text_lit(t, "null");
		return;
	}
}

void json_text_value(struct json_text *t, json_object *v)
{
	json_text_value_at(t, v, 0);
}
