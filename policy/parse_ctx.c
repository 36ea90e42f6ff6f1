// SPDX-License-Identifier: MIT
/*
 * Parsing a policy file's JSON: errors and warnings that name the file and the
 * JSON path, names from a file made safe to repeat, and typed getters of
 * members that report a wrong type or an unknown key as such.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "internal.h"

/* A name taken from a file, shortened, with quotes escaped and control characters replaced. */
const char *printable(char buf[static PRINTABLE_BUF], const char *s)
{
	size_t i, o = 0;

	for (i = 0; s[i] && i < PRINTABLE_MAX; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			buf[o++] = '\\';
		buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (s[i]) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* "a, b, c or d" */
void join_names(char *buf, size_t size, const char *const *names, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
		int k = snprintf(buf + len, size - len, "%s%s", sep, names[i]);

		if (k < 0 || (size_t)k >= size - len)
			return;
		len += (size_t)k;
	}
}

_printf_(3, 4) int parse_fail(struct parse_ctx *c, const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (k < 0)
		return -ENOMEM;
	if (path && *path)
		return error_setf(c->error, -EINVAL, "%s: %s: %s", c->file, path, msg);
	return error_setf(c->error, -EINVAL, "%s: %s", c->file, msg);
}

_printf_(3, 4) int parse_warn(struct parse_ctx *c, const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL, *full = NULL;
	va_list ap;
	int k;

	if (!c->warn)
		return 0;
	va_start(ap, fmt);
	k = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (k < 0)
		return -ENOMEM;
	if (asprintf(&full, "%s: %s: %s", c->file, path, msg) < 0)
		return -ENOMEM;
	c->warn(c->userdata, full);
	return 0;
}

/* Paths only ever hold known keys and indices, so truncation is theoretical; it shows as "...". */
static void path_truncated(char buf[static JPATH_MAX], int k)
{
	if (k < 0)
		buf[0] = '\0';
	else if (k >= JPATH_MAX)
		memcpy(buf + JPATH_MAX - 4, "...", 4);
}

void path_key(char buf[static JPATH_MAX], const char *parent, const char *key)
{
	path_truncated(buf, snprintf(buf, JPATH_MAX, "%s%s%s", parent, *parent ? "." : "", key));
}

void path_index(char buf[static JPATH_MAX], const char *parent, size_t i)
{
	path_truncated(buf, snprintf(buf, JPATH_MAX, "%s[%zu]", parent, i));
}

const char *json_type_phrase(enum json_type t)
{
	switch (t) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a number with a fraction or exponent";
	case json_type_int:
		return "an integer";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "an unknown JSON type";
}

int expect_type(struct parse_ctx *c, const char *path, json_object *o, enum json_type t)
{
	if (json_object_is_type(o, t))
		return 0;
	return parse_fail(c, path, "expected %s, got %s",
			  t == json_type_boolean ? "true or false" : json_type_phrase(t),
			  json_type_phrase(json_object_get_type(o)));
}

int expect_object(struct parse_ctx *c, const char *path, json_object *obj, const char *const *keys,
		  size_t n_keys)
{
	int r = expect_type(c, path, obj, json_type_object);

	if (r < 0)
		return r;
	json_object_object_foreach (obj, key, val) {
		bool known = false;
		char expected[256], pbuf[PRINTABLE_BUF];

		(void)val;
		for (size_t i = 0; i < n_keys && !known; i++)
			known = streq(key, keys[i]);
		if (known)
			continue;
		join_names(expected, sizeof(expected), keys, n_keys);
		return parse_fail(c, path, "unknown key \"%s\" (expected %s)", printable(pbuf, key),
				  expected);
	}
	return 0;
}

int get_element(struct parse_ctx *c, const char *path, json_object *arr, size_t i, enum json_type t,
		char epath[static JPATH_MAX], json_object **ret)
{
	json_object *e = json_object_array_get_idx(arr, i);
	int r;

	path_index(epath, path, i);
	r = expect_type(c, epath, e, t);
	if (r < 0)
		return r;
	*ret = e;
	return 0;
}

/* A member that must be an array if present; *ret is NULL when it is absent. */
int get_array(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
	      json_object **ret, char path[static JPATH_MAX])
{
	json_object *v;
	int r;

	path_key(path, parent, key);
	*ret = NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	r = expect_type(c, path, v, json_type_array);
	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

/*
 * An optional object-valued key of obj: 0 when absent, 1 with *ret when
 * present, negative after a parse error (wrong type, unknown keys).
 */
int get_section(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
		const char *const *keys, size_t n_keys, char path[static JPATH_MAX],
		json_object **ret)
{
	int r;

	path_key(path, parent, key);
	if (!json_object_object_get_ex(obj, key, ret))
		return 0;
	r = expect_object(c, path, *ret, keys, n_keys);
	return r < 0 ? r : 1;
}

/* An optional boolean key of obj, left as it is when absent. */
int get_bool(struct parse_ctx *c, const char *parent, json_object *obj, const char *key, bool *ret)
{
	char path[JPATH_MAX];
	json_object *v;
	int r;

	path_key(path, parent, key);
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	r = expect_type(c, path, v, json_type_boolean);
	if (r < 0)
		return r;
	*ret = json_object_get_boolean(v);
	return 0;
}

/* An array of name patterns, each checked with valid(). */
int parse_name_patterns(struct parse_ctx *c, const char *path, json_object *arr,
			bool (*valid)(const char *, bool), const char *what, char ***ret,
			size_t *ret_n)
{
	size_t n = json_object_array_length(arr);
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	char **v;
	int r;

	if (n == 0)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*ret = v;
	for (size_t i = 0; i < n; i++) {
		json_object *e;

		r = get_element(c, path, arr, i, json_type_string, epath, &e);
		if (r < 0)
			return r;
		if (!valid(json_object_get_string(e), true))
			return parse_fail(c, epath, "\"%s\" is not a valid %s pattern",
					  printable(pbuf, json_object_get_string(e)), what);
		v[i] = strdup(json_object_get_string(e));
		if (!v[i])
			return -ENOMEM;
		(*ret_n)++;
	}
	return 0;
}
