/* SPDX-License-Identifier: MIT */
/* Hostile JSON text parsed strictly, and a JSON tree's strings made valid UTF-8. */
#include "proto.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/error.h"

/*
 * json-c accepts NaN and Infinity even with JSON_TOKENER_STRICT; RFC 8259 has
 * neither: -EDOM. And at most PROTO_MAX_JSON_DEPTH containers, the top level
 * included, as the scanner (jsonscan.c) counts them: -ELOOP for more.
 * containers is the number around o; the tokenizer already bounded it, so
 * recursion is bounded.
 */
static int json_check(json_object *o, unsigned containers)
{
	enum json_type type = json_object_get_type(o);
	int k;

	if ((type == json_type_object || type == json_type_array) &&
	    containers >= PROTO_MAX_JSON_DEPTH)
		return -ELOOP;
	switch (type) {
	case json_type_double:
		return isfinite(json_object_get_double(o)) ? 0 : -EDOM;
	case json_type_object: {
		/* Braces: the macro declares variables, which a case label can't precede in C. */
		json_object_object_foreach (o, key, v) {
			(void)key;
			if ((k = json_check(v, containers + 1)) < 0)
				return k;
		}
		return 0;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if ((k = json_check(json_object_array_get_idx(o, i), containers + 1)) < 0)
				return k;
		return 0;
	default:
		return 0;
	}
}

int proto_parse(const char *buf, size_t len, json_object **ret, char **error)
{
	struct json_tokener *tok;
	json_object *o;
	enum json_tokener_error jerr;
	int k;

	if (len == 0)
		return error_setf(error, -EBADMSG, "empty message");
	if (len > PROTO_MAX_REPLY_BYTES || len > INT32_MAX)
		return error_setf(error, -EMSGSIZE, "message of %zu bytes is too large", len);
	/* json-c would stop at a NUL and ignore the rest: refuse instead of guessing. */
	if (memchr(buf, '\0', len))
		return error_setf(error, -EBADMSG, "message contains a NUL byte");
	/*
	 * json-c counts the innermost scalar as a level too and refuses a value
	 * at the depth it was given, so PROTO_MAX_JSON_DEPTH nested containers
	 * holding a scalar need one more; json_check() then refuses the empty
	 * container that one more lets through.
	 */
	tok = json_tokener_new_ex(PROTO_MAX_JSON_DEPTH + 1);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
		if (jerr == json_tokener_success)
			error_setf(error, 0, "message is not one complete JSON value");
		else
			error_setf(error, 0, "message is not valid JSON: %s",
				   json_tokener_error_desc(jerr));
		json_object_put(o);
		json_tokener_free(tok);
		return -EBADMSG;
	}
	json_tokener_free(tok);
	k = json_check(o, 0);
	if (k < 0) {
		json_object_put(o);
		return error_setf(error, -EBADMSG, "message is not valid JSON: %s",
				  k == -ELOOP ? "nesting too deep"
					      : "NaN and Infinity are not numbers");
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return error_setf(error, -EBADMSG, "message is not a JSON object");
	}
	*ret = o;
	return 0;
}

size_t proto_utf8_sequence(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int sanitize_string(json_object *o)
{
	const unsigned char *s = (const unsigned char *)json_object_get_string(o);
	size_t len = (size_t)json_object_get_string_len(o), out = 0;
	bool valid = true;
	char *buf;

	for (size_t i = 0; i < len;) {
		size_t n = s[i] ? proto_utf8_sequence(s + i, len - i) : 0;

		if (n == 0) {
			valid = false;
			break;
		}
		i += n;
	}
	if (valid)
		return 0;
	buf = malloc(len * 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len;) {
		size_t n = s[i] ? proto_utf8_sequence(s + i, len - i) : 0;

		if (n == 0) {
			memcpy(buf + out, "\xef\xbf\xbd", 3); /* U+FFFD */
			out += 3;
			i++;
		} else {
			memcpy(buf + out, s + i, n);
			out += n;
			i += n;
		}
	}
	buf[out] = '\0';
	json_object_set_string_len(o, buf, (int)out);
	free(buf);
	return 0;
}

static int sanitize(json_object *o, unsigned depth)
{
	int k = 0;

	if (depth > PROTO_MAX_JSON_DEPTH + 1)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_string:
		return sanitize_string(o);
	case json_type_object: {
		json_object_object_foreach (o, key, v) {
			(void)key;
			if ((k = sanitize(v, depth + 1)) < 0)
				return k;
		}
		return 0;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if ((k = sanitize(json_object_array_get_idx(o, i), depth + 1)) < 0)
				return k;
		return 0;
	default:
		return 0;
	}
}

int proto_json_sanitize_utf8(json_object *o)
{
	return o ? sanitize(o, 0) : 0;
}
