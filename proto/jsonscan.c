/* SPDX-License-Identifier: MIT */
/*
 * A validating JSON scanner (RFC 8259, and two of json-c's strict mode's leniencies: "1." and raw
 * control bytes in strings): finds values in a text and checks them without allocating.
 */
#include "jsonscan.h"

#include <errno.h>
#include <string.h>

#include "proto.h"

const char *json_scan_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

const char *json_scan_string(const char *p, const char *end)
{
	for (p++; p < end;) {
		unsigned char c = (unsigned char)*p;
		size_t n;

		/* Most of a string is printable ASCII. */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c == '"')
			return p + 1;
		/* NUL never (proto_parse() refuses it); other control bytes as json-c takes them.
		 */
		if (c == 0)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			if (*p == 'u') {
				if (end - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) ||
				    !is_hex(p[3]) || !is_hex(p[4]))
					return NULL;
				p += 5;
			} else if (*p && strchr("\"\\/bfnrt", *p)) {
				p++;
			} else {
				return NULL;
			}
			continue;
		}
		n = proto_utf8_sequence((const unsigned char *)p, (size_t)(end - p));
		if (n == 0)
			return NULL;
		p += n;
	}
	return NULL;
}

static const char *scan_digits(const char *p, const char *end)
{
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

/* -?(0|[1-9][0-9]*)(.[0-9]*)?([eE][+-]?[0-9]+)? */
const char *json_scan_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = scan_digits(p, end)))
		return NULL;
	/* "1." too: json-c's strict mode takes it, and a reply it takes must scan. */
	if (p < end && *p == '.') {
		const char *f = scan_digits(p + 1, end);

		p = f ? f : p + 1;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = scan_digits(p, end)))
			return NULL;
	}
	return p;
}

static const char *scan_literal(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *scan_value(const char *p, const char *end, unsigned depth);

/* A container at p, at depth: just past its end, or NULL. */
static const char *scan_container(const char *p, const char *end, unsigned depth)
{
	struct json_iter it;
	struct json_span key, v;
	int k;

	if (json_iter_init(&it, (struct json_span){p, (size_t)(end - p)}, depth) < 0)
		return NULL;
	while ((k = json_iter_next(&it, &key, &v)) > 0)
		;
	return k < 0 ? NULL : it.p;
}

/* One value at p (no leading whitespace), at depth: just past it, or NULL. */
static const char *scan_value(const char *p, const char *end, unsigned depth)
{
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return json_scan_string(p, end);
	case '{':
	case '[':
		return scan_container(p, end, depth);
	case 't':
		return scan_literal(p, end, "true");
	case 'f':
		return scan_literal(p, end, "false");
	case 'n':
		return scan_literal(p, end, "null");
	default:
		return json_scan_number(p, end);
	}
}

int json_iter_init(struct json_iter *it, struct json_span v, unsigned depth)
{
	/* As proto_parse(): PROTO_MAX_JSON_DEPTH nested containers at most. */
	if (v.len < 2 || (v.s[0] != '{' && v.s[0] != '[') || depth == 0 ||
	    depth > PROTO_MAX_JSON_DEPTH)
		return -EBADMSG;
	*it = (struct json_iter){.p = v.s + 1,
				 .end = v.s + v.len,
				 .depth = depth,
				 .close = v.s[0] == '{' ? '}' : ']'};
	return 0;
}

int json_iter_next(struct json_iter *it, struct json_span *key, struct json_span *value)
{
	const char *p, *v;

	if (it->done)
		return -EBADMSG;
	p = json_scan_ws(it->p, it->end);
	if (p < it->end && *p == it->close) {
		it->p = p + 1;
		it->done = true;
		return 0;
	}
	if (it->started) {
		if (p >= it->end || *p != ',')
			return -EBADMSG;
		p = json_scan_ws(p + 1, it->end);
	}
	if (it->close == '}') {
		const char *k = p;

		if (!key || p >= it->end || *p != '"' || !(p = json_scan_string(p, it->end)))
			return -EBADMSG;
		*key = (struct json_span){k + 1, (size_t)(p - k) - 2};
		p = json_scan_ws(p, it->end);
		if (p >= it->end || *p != ':')
			return -EBADMSG;
		p = json_scan_ws(p + 1, it->end);
	} else if (key) {
		*key = (struct json_span){};
	}
	v = scan_value(p, it->end, it->depth + 1);
	if (!v)
		return -EBADMSG;
	*value = (struct json_span){p, (size_t)(v - p)};
	it->p = v;
	it->started = true;
	return 1;
}

int json_scan_object_text(const char *text, size_t len, struct json_span *ret)
{
	const char *end = text + len, *p = json_scan_ws(text, end), *v;

	if (p >= end || *p != '{')
		return -EBADMSG;
	v = scan_container(p, end, 1);
	if (!v || json_scan_ws(v, end) != end)
		return -EBADMSG;
	*ret = (struct json_span){p, (size_t)(v - p)};
	return 0;
}

bool json_key_is(struct json_span key, const char *name)
{
	/* Keys compared as written: one spelled with escapes is not recognized (safe: unknown). */
	return key.len == strlen(name) && memcmp(key.s, name, key.len) == 0;
}
