/* SPDX-License-Identifier: MIT */
/*
 * A json-c tree built from a text the scanner checked, for files the broker wrote itself: json-c's
 * tokenizer is most of the cost of its parse (measured: 4/5 of reading a metadata file).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "jsonscan.h"
#include "proto.h"
#include "common/hex.h"

static int hex4(const char *p)
{
	int v = 0;

	/* The scanner checked the four digits. */
	for (int i = 0; i < 4; i++)
		v = v << 4 | hex_digit_value(p[i]);
	return v;
}

/* The content of a string span (checked by the scanner), unescaped, in a new buffer. */
static int string_decode(struct json_span v, char **ret, size_t *ret_len)
{
	const char *s = v.s + 1, *end = v.s + v.len - 1;
	char *buf = malloc(v.len), *o = buf;

	if (!buf)
		return -ENOMEM;
	while (s < end) {
		int cp;

		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s++) {
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			cp = hex4(s);
			s += 4;
			/* Pairs and lone halves: json-c's own rules, left to it. */
			if (cp >= 0xd800 && cp <= 0xdfff) {
				free(buf);
				return -EOPNOTSUPP;
			}
			if (cp < 0x80) {
				*o++ = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xc0 | cp >> 6);
				*o++ = (char)(0x80 | (cp & 0x3f));
			} else {
				*o++ = (char)(0xe0 | cp >> 12);
				*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
				*o++ = (char)(0x80 | (cp & 0x3f));
			}
			break;
		default: /* " \ / */
			*o++ = s[-1];
			break;
		}
	}
	*o = '\0';
	*ret = buf;
	*ret_len = (size_t)(o - buf);
	return 0;
}

/* Parsing as it goes: every byte is looked at once. */
struct builder {
	const char *p, *end;
};

/* A string at b->p: its content unescaped, in *ret_buf (malloc'ed) unless it has no escapes. */
static int build_string(struct builder *b, char **ret_buf, const char **ret_s, size_t *ret_len)
{
	const char *q = json_scan_string(b->p, b->end);
	struct json_span v;

	if (!q)
		return -EBADMSG;
	v = (struct json_span){b->p, (size_t)(q - b->p)};
	b->p = q;
	*ret_buf = NULL;
	if (!memchr(v.s + 1, '\\', v.len - 2)) {
		*ret_s = v.s + 1;
		*ret_len = v.len - 2;
		return 0;
	}
	int k = string_decode(v, ret_buf, ret_len);

	if (k >= 0)
		*ret_s = *ret_buf;
	return k;
}

/* -?[0-9]+ within int64, as json-c makes an int of it; anything else is json-c's. */
static int build_int(const char *s, const char *end, json_object **ret)
{
	bool neg = s < end && *s == '-';
	uint64_t v = 0, max = neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX;

	for (const char *p = s + neg; p < end; p++) {
		if (*p < '0' || *p > '9' || v > (max - (uint64_t)(*p - '0')) / 10)
			return -EOPNOTSUPP;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*ret = json_object_new_int64(neg ? (int64_t)(0 - v) : (int64_t)v);
	return *ret ? 0 : -ENOMEM;
}

static int build_value(struct builder *b, unsigned depth, json_object **ret);

static int build_container(struct builder *b, unsigned depth, json_object **ret)
{
	bool object = *b->p == '{';
	char close = object ? '}' : ']';
	json_object *c;
	int k = 0;

	/* As proto_parse(): PROTO_MAX_JSON_DEPTH nested containers at most. */
	if (depth > PROTO_MAX_JSON_DEPTH)
		return -EBADMSG;
	c = object ? json_object_new_object() : json_object_new_array();
	if (!c)
		return -ENOMEM;
	b->p = json_scan_ws(b->p + 1, b->end);
	if (b->p < b->end && *b->p == close)
		goto done;
	for (;;) {
		json_object *child = NULL;
		_cleanup_free_ char *buf = NULL, *long_key = NULL;
		char short_key[128], *key = short_key;
		const char *name = NULL;
		size_t name_len = 0;

		if (object) {
			if (b->p >= b->end || *b->p != '"')
				k = -EBADMSG;
			if (k >= 0)
				k = build_string(b, &buf, &name, &name_len);
			/* json-c would cut a key at its NUL */
			if (k >= 0 && memchr(name, '\0', name_len))
				k = -EOPNOTSUPP;
			/* Keys are short: no allocation just to terminate one. */
			if (k >= 0 && name_len >= sizeof(short_key) &&
			    !(key = long_key = malloc(name_len + 1)))
				k = -ENOMEM;
			if (k >= 0) {
				memcpy(key, name, name_len);
				key[name_len] = '\0';
			}
			if (k >= 0)
				b->p = json_scan_ws(b->p, b->end);
			if (k >= 0 && (b->p >= b->end || *b->p != ':'))
				k = -EBADMSG;
			if (k >= 0)
				b->p = json_scan_ws(b->p + 1, b->end);
		}
		if (k >= 0)
			k = build_value(b, depth + 1, &child);
		if (k >= 0 && (object ? json_object_object_add(c, key, child)
				      : json_object_array_add(c, child)) < 0)
			k = -ENOMEM;
		if (k < 0) {
			json_object_put(child);
			break;
		}
		b->p = json_scan_ws(b->p, b->end);
		if (b->p < b->end && *b->p == ',') {
			b->p = json_scan_ws(b->p + 1, b->end);
			continue;
		}
		if (b->p >= b->end || *b->p != close)
			k = -EBADMSG;
		break;
	}
	if (k < 0) {
		json_object_put(c);
		return k;
	}
done:
	b->p++;
	*ret = c;
	return 0;
}

static int build_value(struct builder *b, unsigned depth, json_object **ret)
{
	const char *s = b->p, *buf_s;
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int k;

	if (s >= b->end)
		return -EBADMSG;
	switch (*s) {
	case '{':
	case '[':
		return build_container(b, depth, ret);
	case '"':
		k = build_string(b, &buf, &buf_s, &len);
		if (k < 0)
			return k;
		*ret = json_object_new_string_len(buf_s, (int)len);
		return *ret ? 0 : -ENOMEM;
	case 't':
	case 'f':
	case 'n': {
		const char *word = *s == 't' ? "true" : *s == 'f' ? "false" : "null";
		size_t n = strlen(word);

		if ((size_t)(b->end - s) < n || memcmp(s, word, n) != 0)
			return -EBADMSG;
		b->p = s + n;
		*ret = *s == 'n' ? NULL : json_object_new_boolean(*s == 't'); /* null: NULL */
		return *s == 'n' || *ret ? 0 : -ENOMEM;
	}
	default:
		b->p = json_scan_number(s, b->end);
		if (!b->p)
			return -EBADMSG;
		/* Integers only: json-c's doubles keep their text, which is its business. */
		return build_int(s, b->p, ret);
	}
}

int json_scan_build(const char *text, size_t len, json_object **ret)
{
	struct builder b = {text, text + len};
	json_object *o = NULL;
	int k;

	b.p = json_scan_ws(b.p, b.end);
	if (b.p >= b.end || *b.p != '{')
		return -EBADMSG;
	k = build_container(&b, 1, &o);
	if (k >= 0 && json_scan_ws(b.p, b.end) != b.end)
		k = -EBADMSG;
	if (k < 0) {
		json_object_put(o);
		return k;
	}
	*ret = o;
	return 0;
}
