// SPDX-License-Identifier: MIT
/*
 * Strict JSON for policy files: json-c in strict mode, then a scan of the text
 * for what json-c lets through (duplicate keys, single quotes, \u0000), each
 * an error at its line and column.
 */
#include <errno.h>
#include <string.h>

#include "common/macro.h"
#include "internal.h"

/*
 * Deepest legitimate nesting is 8 (top, rules, rule, allow, digests, a digest's grants, maps,
 * pattern); json-c counts one more.
 */
#define POLICY_JSON_MAX_DEPTH 10
/* No object of the format has more than 5 keys; more is a mistake (and bounds the scan). */
#define SCAN_MAX_KEYS 16

DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

static void offset_to_line(const char *s, size_t offset, size_t *line, size_t *column)
{
	size_t l = 1, col = 1;

	for (size_t i = 0; i < offset && s[i]; i++) {
		if (s[i] == '\n') {
			l++;
			col = 1;
		} else {
			col++;
		}
	}
	*line = l;
	*column = col;
}

static bool is_json_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static bool is_json_null(const char *s)
{
	while (is_json_space(*s))
		s++;
	if (strncmp(s, "null", 4) != 0)
		return false;
	for (s += 4; is_json_space(*s); s++)
		;
	return *s == '\0';
}

int parse_json_text(struct parse_ctx *c, const char *json, json_object **ret)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	enum json_tokener_error jerr;
	json_object *obj;
	size_t line, column;

	tok = json_tokener_new_ex(POLICY_JSON_MAX_DEPTH);
	if (!tok)
		return -ENOMEM;
	/* Strict: no comments, no trailing commas or characters, no single quotes. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, json, -1);
	if (obj) {
		*ret = obj;
		return 0;
	}

	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_success) {
		/*
		 * The literal null, which the caller's type check reports; otherwise json-c
		 * failed to allocate (0.16 reports that as success without an object).
		 */
		if (!is_json_null(json))
			return -ENOMEM;
		*ret = NULL;
		return 0;
	}
	offset_to_line(json, json_tokener_get_parse_end(tok), &line, &column);
	if (jerr == json_tokener_continue || jerr == json_tokener_error_parse_eof)
		return parse_fail(c, NULL, "not valid JSON: unexpected end of file");
	if (jerr == json_tokener_error_depth)
		return parse_fail(
			c, NULL,
			"not valid JSON at line %zu, column %zu: nested deeper than %d levels",
			line, column, POLICY_JSON_MAX_DEPTH);
	return parse_fail(c, NULL, "not valid JSON at line %zu, column %zu: %s", line, column,
			  json_tokener_error_desc(jerr));
}

/*
 * What json-c accepts even in strict mode but this format does not, found in
 * the (already parsed) text: duplicate keys (json-c keeps only the last one),
 * single-quoted strings, and \u0000 (json-c's C strings would end there, so
 * "root\u0000x" would read as "root"). Keys must be written without escapes,
 * so comparing them as written finds every duplicate.
 */
struct scan_frame {
	bool object;
	size_t index; /* arrays: the current element */
	const char *key; /* objects: the current key */
	size_t key_len;
	size_t n_keys;
	const char *keys[SCAN_MAX_KEYS];
	size_t key_lens[SCAN_MAX_KEYS];
};

/* Path of the innermost of n frames. */
static void scan_path(const struct scan_frame *f, size_t n, char buf[static JPATH_MAX])
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i + 1 < n; i++) {
		int k;

		if (f[i].object)
			k = snprintf(
				buf + len, JPATH_MAX - len, "%s%.*s", len ? "." : "",
				(int)(f[i].key_len < PRINTABLE_MAX ? f[i].key_len : PRINTABLE_MAX),
				f[i].key);
		else
			k = snprintf(buf + len, JPATH_MAX - len, "[%zu]", f[i].index);
		if (k < 0 || (size_t)k >= JPATH_MAX - len)
			return;
		len += (size_t)k;
	}
}

static int scan_fail_at(struct parse_ctx *c, const char *s, size_t offset, const char *what)
{
	size_t line, column;

	offset_to_line(s, offset, &line, &column);
	return parse_fail(c, NULL, "not valid JSON at line %zu, column %zu: %s", line, column,
			  what);
}

static int scan_key(struct parse_ctx *c, struct scan_frame *frames, size_t depth, const char *key,
		    size_t len, bool escaped)
{
	struct scan_frame *f = &frames[depth - 1];
	char path[JPATH_MAX];
	int shown = (int)(len < PRINTABLE_MAX ? len : PRINTABLE_MAX);

	scan_path(frames, depth, path);
	if (escaped)
		return parse_fail(c, path,
				  "key \"%.*s\" has an escape sequence (keys are plain names)",
				  shown, key);
	for (size_t k = 0; k < f->n_keys; k++)
		if (f->key_lens[k] == len && memcmp(f->keys[k], key, len) == 0)
			return parse_fail(c, path, "duplicate key \"%.*s\"", shown, key);
	if (f->n_keys >= SCAN_MAX_KEYS)
		return parse_fail(c, path, "too many keys (more than %d)", SCAN_MAX_KEYS);
	f->keys[f->n_keys] = key;
	f->key_lens[f->n_keys] = len;
	f->n_keys++;
	f->key = key;
	f->key_len = len;
	return 0;
}

int check_json_text(struct parse_ctx *c, const char *s)
{
	struct scan_frame frames[POLICY_JSON_MAX_DEPTH + 1];
	size_t depth = 0;

	for (size_t i = 0; s[i]; i++) {
		struct scan_frame *f = depth > 0 ? &frames[depth - 1] : NULL;
		bool escaped = false;
		size_t start, j;
		int r;

		switch (s[i]) {
		case '{':
		case '[':
			if (depth >= ARRAY_SIZE(frames))
				return scan_fail_at(c, s, i, "nested too deep");
			frames[depth].object = s[i] == '{';
			frames[depth].index = 0;
			frames[depth].key = NULL;
			frames[depth].key_len = 0;
			frames[depth].n_keys = 0;
			depth++;
			break;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (f && !f->object)
				f->index++;
			break;
		case '\'':
			return scan_fail_at(c, s, i, "single quotes are not JSON");
		case '"':
			start = i + 1;
			for (i = start; s[i] && s[i] != '"'; i++) {
				if (s[i] != '\\' || !s[i + 1])
					continue;
				if (strncmp(s + i + 1, "u0000", 5) == 0)
					return scan_fail_at(c, s, i,
							    "\\u0000 is not allowed in strings");
				escaped = true;
				i++;
			}
			if (!s[i])
				return 0; /* not reached: json-c parsed the text */
			for (j = i + 1; is_json_space(s[j]); j++)
				;
			if (s[j] != ':' || !f || !f->object)
				break;
			r = scan_key(c, frames, depth, s + start, i - start, escaped);
			if (r < 0)
				return r;
			break;
		default:
			break;
		}
	}
	return 0;
}

int parse_json_file(struct parse_ctx *c, const char *json, size_t max_bytes, json_object **ret)
{
	_cleanup_json_ json_object *root = NULL;
	int r;

	if (strlen(json) > max_bytes)
		return parse_fail(c, NULL, "file is larger than %zu bytes", max_bytes);
	r = parse_json_text(c, json, &root);
	if (r < 0)
		return r;
	r = check_json_text(c, json);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object))
		return parse_fail(c, NULL, "expected an object at the top level, got %s",
				  json_type_phrase(json_object_get_type(root)));
	*ret = TAKE_PTR(root);
	return 0;
}
