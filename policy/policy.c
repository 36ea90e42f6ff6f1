// SPDX-License-Identifier: MIT
/*
 * Policy: parsing of the drop-in JSON files, resolution of one identity's
 * effective grant, and decisions on inspected objects. The format is
 * described for administrators in policy/POLICY.md.
 *
 * Parsing is strict: unknown keys, duplicate keys, wrong types and values
 * over the hard ceilings are errors naming the file and the JSON path, so a
 * typo can neither silently weaken nor silently strengthen a policy.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "attach_type.h"
#include "common/macro.h"
#include "policy.h"
#include "trust.h"
#include "verdict.h"

/* Deepest legitimate nesting is 6 (top, rules, rule, allow, maps, pattern). */
#define POLICY_JSON_MAX_DEPTH 8
/* (uid_t)-1 and (gid_t)-1 mean "no id", they are never matched. */
#define POLICY_MAX_ID 4294967294u
/* Bit masks of program types, attach types and helper classes are 64 bits wide. */
#define PROG_TYPE_BITS 64
#define MAP_TYPE_BITS 64
#define MAPS_OF_MAPS_TYPES                                                                         \
	((1ull << BPF_MAP_TYPE_ARRAY_OF_MAPS) | (1ull << BPF_MAP_TYPE_HASH_OF_MAPS))
/* systemd's UNIT_NAME_MAX is 256 with the NUL. */
#define UNIT_NAME_MAX 255
/* Room for a JSON path; components are known keys and indices, so it never fills up. */
#define JPATH_MAX 192
/* No object of the format has more than 5 keys; more is a mistake (and bounds the scan). */
#define SCAN_MAX_KEYS 16
/* At most this much of a name from a file is repeated in a message. */
#define PRINTABLE_MAX 64
#define PRINTABLE_BUF (2 * PRINTABLE_MAX + 4)
/* getpwnam_r/getgrnam_r buffers grow up to this (groups with many members are large). */
#define NAME_LOOKUP_BUF_MAX (16u * 1024 * 1024)

struct uid_range {
	uid_t first, last; /* inclusive */
};

struct policy_rule {
	char *source; /* "FILE:rules[N]" */
	struct uid_range *uids; /* "uids" and resolved "users" */
	size_t n_uids;
	gid_t *gids; /* resolved "groups" */
	size_t n_gids;
	bool has_principal; /* "uids", "users" or "groups" listed (resolved or not) */
	/* systemd unit and slice patterns; each list given is one more condition */
	char **units, **user_units, **slices, **user_slices;
	size_t n_units, n_user_units, n_slices, n_user_slices;
	uint64_t program_types;
	uint64_t program_fd_types;
	uint64_t test_run_types;
	uint64_t map_types; /* named in "map_types", and maps of maps from "maps_of_maps" */
	helper_class_mask_t helper_classes;
	bool pinning;
	bool load_with_perfmon;
	struct policy_map_pattern *maps;
	size_t n_maps;
	struct policy_attach attach;
	struct policy_share_rule *shared;
	size_t n_shared;
	struct policy_limits limits; /* defaults filled in for omitted limits */
};

struct policy {
	struct policy_rule *rules;
	size_t n_rules;
};

static void json_object_putp(json_object **o)
{
	json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

static void json_tokener_freep(json_tokener **t)
{
	if (*t)
		json_tokener_free(*t);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* ---- Names ---- */

/* Indexed by the bits; only the first five are words a policy or request may use. */
static const char *const map_access_names[] = {
	[MAP_ACCESS_NONE] = "none",
	[MAP_ACCESS_RO] = "ro",
	[MAP_ACCESS_WO] = "wo",
	[MAP_ACCESS_RW] = "rw",
	[MAP_ACCESS_CONSUME] = "consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_RO] = "ro+consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_WO] = "wo+consume",
	[MAP_ACCESS_CONSUME | MAP_ACCESS_RW] = "rw+consume",
};

const char *map_access_to_string(enum map_access a)
{
	if ((unsigned int)a >= ARRAY_SIZE(map_access_names))
		return NULL;
	return map_access_names[a];
}

int map_access_from_string(const char *s, enum map_access *ret)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i <= MAP_ACCESS_CONSUME; i++) {
		if (streq(map_access_names[i], s)) {
			*ret = (enum map_access)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* libbpf's names of enum values, as plain functions of an int. */
static const char *prog_type_name(int t)
{
	return libbpf_bpf_prog_type_str((enum bpf_prog_type)t);
}

static const char *map_type_name(int t)
{
	return libbpf_bpf_map_type_str((enum bpf_map_type)t);
}

/* The value in [first, bits) that name() calls s, or -EINVAL. */
static int enum_from_string(const char *(*name)(int), int first, int bits, const char *s)
{
	if (!s)
		return -EINVAL;
	for (int t = first; t < bits; t++) {
		const char *n = name(t);

		if (n && streq(n, s))
			return t;
	}
	return -EINVAL;
}

int policy_prog_type_from_string(const char *s)
{
	/* Type 0 (unspec) is not a program type anything can be loaded as. */
	return enum_from_string(prog_type_name, 1, PROG_TYPE_BITS, s);
}

const char *policy_prog_type_to_string(int prog_type)
{
	return prog_type < 0 || prog_type >= PROG_TYPE_BITS ? NULL : prog_type_name(prog_type);
}

int policy_map_type_from_string(const char *s)
{
	/* Type 0 (unspec) is not a map type anything can be created as. */
	return enum_from_string(map_type_name, 1, MAP_TYPE_BITS, s);
}

const char *policy_map_type_to_string(int map_type)
{
	return map_type < 0 || map_type >= MAP_TYPE_BITS ? NULL : map_type_name(map_type);
}

/* ---- Messages ---- */

_printf_(3, 4) static int set_error(char **error, int r, const char *fmt, ...)
{
	char *m;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (k < 0)
		return -ENOMEM;
	if (error)
		*error = m;
	else
		free(m);
	return r;
}

/* A name taken from a file, shortened, with quotes escaped and control characters replaced. */
static const char *printable(char buf[static PRINTABLE_BUF], const char *s)
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
static void join_names(char *buf, size_t size, const char *const *names, size_t n)
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

struct parse_ctx {
	const char *file;
	policy_warn_fn warn;
	void *userdata;
	char **error;
};

_printf_(3, 4) static int parse_fail(struct parse_ctx *c, const char *path, const char *fmt, ...)
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
		return set_error(c->error, -EINVAL, "%s: %s: %s", c->file, path, msg);
	return set_error(c->error, -EINVAL, "%s: %s", c->file, msg);
}

_printf_(3, 4) static int parse_warn(struct parse_ctx *c, const char *path, const char *fmt, ...)
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

static void path_key(char buf[static JPATH_MAX], const char *parent, const char *key)
{
	path_truncated(buf, snprintf(buf, JPATH_MAX, "%s%s%s", parent, *parent ? "." : "", key));
}

static void path_index(char buf[static JPATH_MAX], const char *parent, size_t i)
{
	path_truncated(buf, snprintf(buf, JPATH_MAX, "%s[%zu]", parent, i));
}

/* ---- JSON helpers ---- */

static const char *json_type_phrase(enum json_type t)
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

static int expect_type(struct parse_ctx *c, const char *path, json_object *o, enum json_type t)
{
	if (json_object_is_type(o, t))
		return 0;
	return parse_fail(c, path, "expected %s, got %s",
			  t == json_type_boolean ? "true or false" : json_type_phrase(t),
			  json_type_phrase(json_object_get_type(o)));
}

static int check_keys(struct parse_ctx *c, const char *path, json_object *obj,
		      const char *const *keys, size_t n_keys)
{
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

/* A member that must be an array if present; *ret is NULL when it is absent. */
static int get_array(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
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
static int get_section(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
		       const char *const *keys, size_t n_keys, char path[static JPATH_MAX],
		       json_object **ret)
{
	int r;

	path_key(path, parent, key);
	if (!json_object_object_get_ex(obj, key, ret))
		return 0;
	r = expect_type(c, path, *ret, json_type_object);
	if (r < 0)
		return r;
	r = check_keys(c, path, *ret, keys, n_keys);
	return r < 0 ? r : 1;
}

/* An optional boolean key of obj, left as it is when absent. */
static int get_bool(struct parse_ctx *c, const char *parent, json_object *obj, const char *key,
		    bool *ret)
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

static int parse_json_text(struct parse_ctx *c, const char *json, json_object **ret)
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

static int check_json_text(struct parse_ctx *c, const char *s)
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

/* ---- Rules ---- */

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void attach_done(struct policy_attach *a)
{
	strv_free(a->tracepoints, a->n_tracepoints);
	strv_free(a->raw_tracepoints, a->n_raw_tracepoints);
	strv_free(a->interfaces, a->n_interfaces);
	strv_free(a->host_interfaces, a->n_host_interfaces);
	*a = (struct policy_attach){};
}

static void shared_free(struct policy_share_rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].object);
		free(v[i].map);
	}
	free(v);
}

static void rule_done(struct policy_rule *r)
{
	free(r->source);
	free(r->uids);
	free(r->gids);
	strv_free(r->units, r->n_units);
	strv_free(r->user_units, r->n_user_units);
	strv_free(r->slices, r->n_slices);
	strv_free(r->user_slices, r->n_user_slices);
	for (size_t i = 0; i < r->n_maps; i++)
		free(r->maps[i].glob);
	free(r->maps);
	attach_done(&r->attach);
	shared_free(r->shared, r->n_shared);
	*r = (struct policy_rule){};
}

static const struct policy_limits default_limits = {
	.max_object_bytes = POLICY_DEFAULT_MAX_OBJECT_BYTES,
	.max_insns_per_program = POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM,
	.max_programs = POLICY_DEFAULT_MAX_PROGRAMS,
	.max_maps = POLICY_DEFAULT_MAX_MAPS,
	.max_map_entries = POLICY_DEFAULT_MAX_MAP_ENTRIES,
	.max_attachments = POLICY_DEFAULT_MAX_ATTACHMENTS,
	.max_named_objects = POLICY_DEFAULT_MAX_NAMED_OBJECTS,
	.max_loaded_programs = POLICY_DEFAULT_MAX_LOADED_PROGRAMS,
	.max_map_memory_bytes = POLICY_DEFAULT_MAX_MAP_MEMORY_BYTES,
	.max_kernel_threads = POLICY_DEFAULT_MAX_KERNEL_THREADS,
	.max_loads_per_minute = POLICY_DEFAULT_MAX_LOADS_PER_MINUTE,
};

/* Decimal digits only, 0..POLICY_MAX_ID. */
static int parse_id(const char *s, size_t len, uint32_t *ret)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > POLICY_MAX_ID)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

static int parse_uid_entry(struct parse_ctx *c, const char *path, json_object *o,
			   struct uid_range *ret)
{
	char pbuf[PRINTABLE_BUF];
	const char *s, *dash;
	uint32_t first, last;

	if (json_object_is_type(o, json_type_int)) {
		int64_t v = json_object_get_int64(o);

		if (v < 0 || v > (int64_t)POLICY_MAX_ID)
			return parse_fail(c, path, "uid %s out of range (0 to %u)",
					  json_object_to_json_string(o), POLICY_MAX_ID);
		ret->first = ret->last = (uid_t)v;
		return 0;
	}
	if (!json_object_is_type(o, json_type_string))
		return parse_fail(c, path, "expected a string or an integer, got %s",
				  json_type_phrase(json_object_get_type(o)));

	s = json_object_get_string(o);
	dash = strchr(s, '-');
	if (!dash) {
		if (parse_id(s, strlen(s), &first) < 0)
			goto bad;
		ret->first = ret->last = first;
		return 0;
	}
	if (parse_id(s, (size_t)(dash - s), &first) < 0 ||
	    parse_id(dash + 1, strlen(dash + 1), &last) < 0)
		goto bad;
	if (first > last)
		return parse_fail(c, path, "bad uid range \"%s\" (start %u is greater than end %u)",
				  printable(pbuf, s), first, last);
	ret->first = first;
	ret->last = last;
	return 0;
bad:
	return parse_fail(c, path, "bad uid \"%s\" (expected \"N\" or \"A-B\", decimal, 0 to %u)",
			  printable(pbuf, s), POLICY_MAX_ID);
}

/* 0 found, -ENOENT no such name, other negative errno on lookup failure. */
static int lookup_name(const char *name, bool group, uint32_t *ret)
{
	long hint = sysconf(group ? _SC_GETGR_R_SIZE_MAX : _SC_GETPW_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 1024;

	for (;;) {
		_cleanup_free_ char *buf = malloc(size);
		struct passwd pw, *pwr = NULL;
		struct group gr, *grr = NULL;
		int r;

		if (!buf)
			return -ENOMEM;
		if (group)
			r = getgrnam_r(name, &gr, buf, size, &grr);
		else
			r = getpwnam_r(name, &pw, buf, size, &pwr);
		if (r == 0) {
			if (group ? !grr : !pwr)
				return -ENOENT;
			*ret = group ? grr->gr_gid : pwr->pw_uid;
			return 0;
		}
		/* Some NSS modules report "not found" as an error. */
		if (r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
			return -ENOENT;
		if (r != ERANGE)
			return -r;
		if (size >= NAME_LOOKUP_BUF_MAX)
			return -ERANGE;
		size *= 2;
	}
}

/*
 * Resolve one user or group entry. 1 and *ret when found; 0 (after a warning)
 * when the entry never matches; negative errno on errors. Errors name the
 * entry's path, warnings the list's (the name identifies the entry).
 */
static int parse_name_entry(struct parse_ctx *c, const char *list_path, const char *path,
			    json_object *o, bool group, uint32_t *ret)
{
	const char *what = group ? "group" : "user";
	char pbuf[PRINTABLE_BUF];
	const char *name;
	int r;

	r = expect_type(c, path, o, json_type_string);
	if (r < 0)
		return r;
	name = json_object_get_string(o);
	if (!*name)
		return parse_fail(c, path, "empty %s name", what);

	r = lookup_name(name, group, ret);
	if (r == -ENOMEM)
		return r;
	if (r == -ENOENT) {
		r = parse_warn(c, list_path, "no %s \"%s\"; this entry never matches", what,
			       printable(pbuf, name));
		return r < 0 ? r : 0;
	}
	if (r < 0) {
		r = parse_warn(c, list_path,
			       "cannot look up %s \"%s\": %s; this entry never matches", what,
			       printable(pbuf, name), strerror(-r));
		return r < 0 ? r : 0;
	}
	if (*ret > POLICY_MAX_ID)
		return 0;
	return 1;
}

static bool ends_with_slice(const char *s)
{
	size_t n = strlen(s);

	return n >= 6 && streq(s + n - 6, ".slice");
}

/*
 * systemd unit names: letters, digits, ':', '-', '_', '.', '\' and '@' (for
 * instances), at most UNIT_NAME_MAX; patterns may also use '*', '?', '[', ']'
 * and '!' (matched with FNM_NOESCAPE, so '\' is literal, as in "\x2d").
 */
static bool unit_name_pattern_is_valid(const char *s, bool pattern)
{
	if (!s || !*s || strlen(s) > UNIT_NAME_MAX)
		return false;
	for (const char *p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr(":-_.\\@", *p))
			continue;
		if (pattern && strchr("*?[]!", *p))
			continue;
		return false;
	}
	return true;
}

static int parse_name_patterns(struct parse_ctx *c, const char *path, json_object *arr,
			       bool (*valid)(const char *, bool), const char *what, char ***ret,
			       size_t *ret_n);

/*
 * "units", "user_units" (unit patterns that are not slices) or "slices",
 * "user_slices" (patterns of slices): absent, or an array of patterns.
 */
static int parse_unit_patterns(struct parse_ctx *c, const char *parent, json_object *m,
			       const char *key, bool slices, char ***ret, size_t *ret_n)
{
	char path[JPATH_MAX], epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *arr;
	int r;

	r = get_array(c, parent, m, key, &arr, path);
	if (r < 0 || !arr)
		return r;
	r = parse_name_patterns(c, path, arr, unit_name_pattern_is_valid,
				slices ? "slice name" : "unit name", ret, ret_n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < *ret_n; i++) {
		path_index(epath, path, i);
		if (slices && !ends_with_slice((*ret)[i]))
			return parse_fail(c, epath,
					  "\"%s\" is not a slice (slice names end in \".slice\")",
					  printable(pbuf, (*ret)[i]));
		if (!slices && ends_with_slice((*ret)[i]))
			return parse_fail(c, epath, "\"%s\" is a slice; match slices with \"%s\"",
					  printable(pbuf, (*ret)[i]),
					  streq(key, "units") ? "slices" : "user_slices");
	}
	return 0;
}

static int parse_match(struct parse_ctx *c, const char *parent, json_object *rule,
		       struct policy_rule *out)
{
	static const char *const keys[] = {"uids",	 "users",  "groups",	 "units",
					   "user_units", "slices", "user_slices"};
	char path[JPATH_MAX], upath[JPATH_MAX], npath[JPATH_MAX], gpath[JPATH_MAX],
		epath[JPATH_MAX];
	json_object *m, *uids, *users, *groups;
	size_t n_uids, n_users, n_groups;
	int r;

	path_key(path, parent, "match");
	if (!json_object_object_get_ex(rule, "match", &m))
		return parse_warn(c, parent, "no \"match\"; this rule matches nobody");
	r = expect_type(c, path, m, json_type_object);
	if (r < 0)
		return r;
	r = check_keys(c, path, m, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	r = get_array(c, path, m, "uids", &uids, upath);
	if (r < 0)
		return r;
	r = get_array(c, path, m, "users", &users, npath);
	if (r < 0)
		return r;
	r = get_array(c, path, m, "groups", &groups, gpath);
	if (r < 0)
		return r;

	r = parse_unit_patterns(c, path, m, "units", false, &out->units, &out->n_units);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "user_units", false, &out->user_units,
					&out->n_user_units);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "slices", true, &out->slices, &out->n_slices);
	if (r >= 0)
		r = parse_unit_patterns(c, path, m, "user_slices", true, &out->user_slices,
					&out->n_user_slices);
	if (r < 0)
		return r;

	n_uids = uids ? json_object_array_length(uids) : 0;
	n_users = users ? json_object_array_length(users) : 0;
	n_groups = groups ? json_object_array_length(groups) : 0;
	out->has_principal = n_uids + n_users + n_groups > 0;
	/* A user names the units of their own manager as they like: alone, that proves nothing. */
	if (!out->has_principal && out->n_user_units + out->n_user_slices > 0) {
		path_key(epath, path, out->n_user_units ? "user_units" : "user_slices");
		return parse_fail(c, epath,
				  "needs \"uids\", \"users\" or \"groups\" in the same match: "
				  "users name their own units and slices, so these identify "
				  "nobody by themselves");
	}
	if (!out->has_principal && out->n_units + out->n_slices == 0)
		return parse_warn(c, path,
				  "no uids, users, groups, units or slices; this rule matches "
				  "nobody");

	if (n_uids + n_users > 0) {
		out->uids = calloc(n_uids + n_users, sizeof(*out->uids));
		if (!out->uids)
			return -ENOMEM;
	}
	if (n_groups > 0) {
		out->gids = calloc(n_groups, sizeof(*out->gids));
		if (!out->gids)
			return -ENOMEM;
	}

	for (size_t i = 0; i < n_uids; i++) {
		path_index(epath, upath, i);
		r = parse_uid_entry(c, epath, json_object_array_get_idx(uids, i),
				    &out->uids[out->n_uids]);
		if (r < 0)
			return r;
		out->n_uids++;
	}
	for (size_t i = 0; i < n_users; i++) {
		uint32_t id;

		path_index(epath, npath, i);
		r = parse_name_entry(c, npath, epath, json_object_array_get_idx(users, i), false,
				     &id);
		if (r < 0)
			return r;
		if (r > 0) {
			out->uids[out->n_uids].first = out->uids[out->n_uids].last = (uid_t)id;
			out->n_uids++;
		}
	}
	for (size_t i = 0; i < n_groups; i++) {
		uint32_t id;

		path_index(epath, gpath, i);
		r = parse_name_entry(c, gpath, epath, json_object_array_get_idx(groups, i), true,
				     &id);
		if (r < 0)
			return r;
		if (r > 0)
			out->gids[out->n_gids++] = (gid_t)id;
	}
	return 0;
}

/* A list of program or map types by libbpf name, as a mask of 1 << type. */
struct type_list_kind {
	int (*from_string)(const char *s);
	const char *what; /* "program type" */
	const char *examples; /* for the message about an unknown name */
};

static const struct type_list_kind prog_types_kind = {
	policy_prog_type_from_string, "program type",
	"socket_filter, kprobe, tracepoint, raw_tracepoint, cgroup_skb, sched_cls or xdp"};
static const struct type_list_kind map_types_kind = {
	policy_map_type_from_string, "map type",
	"prog_array, perf_event_array, stack_trace or array_of_maps"};

/* Every type must be in allowed (a rule's program_types, for its program_fds). */
static int parse_type_list(struct parse_ctx *c, const char *path, json_object *arr,
			   const struct type_list_kind *kind, uint64_t allowed, uint64_t *ret)
{
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	uint64_t types = 0;
	int r;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *s;
		int t;

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_string);
		if (r < 0)
			return r;
		s = json_object_get_string(e);
		t = kind->from_string(s);
		if (t < 0)
			return parse_fail(c, epath,
					  "unknown %s \"%s\" (expected a libbpf name such as %s)",
					  kind->what, printable(pbuf, s), kind->examples);
		if (!(allowed & (1ull << t)))
			return parse_fail(c, epath, "%s \"%s\" is not in this rule's program_types",
					  kind->what, s);
		types |= 1ull << t;
	}
	*ret = types;
	return 0;
}

static int parse_helper_classes(struct parse_ctx *c, const char *path, json_object *arr,
				helper_class_mask_t *ret)
{
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	helper_class_mask_t mask = 0;
	int r;

	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		enum helper_class cls;
		const char *s;

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_string);
		if (r < 0)
			return r;
		s = json_object_get_string(e);
		cls = helper_class_from_string(s);
		if ((int)cls < 0 || cls >= _HELPER_CLASS_MAX || (int)cls >= 64) {
			const char *names[_HELPER_CLASS_MAX];
			char expected[512];
			size_t n = 0;

			for (int k = 0; k < _HELPER_CLASS_MAX; k++) {
				const char *name = helper_class_to_string((enum helper_class)k);

				if (name)
					names[n++] = name;
			}
			join_names(expected, sizeof(expected), names, n);
			return parse_fail(c, epath, "unknown helper class \"%s\" (expected %s)",
					  printable(pbuf, s), expected);
		}
		mask |= HELPER_CLASS_BIT(cls);
	}
	*ret = mask;
	return 0;
}

static int parse_map_pattern(struct parse_ctx *c, const char *path, json_object *o,
			     struct policy_map_pattern *ret)
{
	static const char *const keys[] = {"name", "access"};
	char npath[JPATH_MAX], apath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *name, *access;
	enum map_access a;
	char *glob;
	int r;

	r = expect_type(c, path, o, json_type_object);
	if (r < 0)
		return r;
	r = check_keys(c, path, o, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	path_key(npath, path, "name");
	path_key(apath, path, "access");
	if (!json_object_object_get_ex(o, "name", &name))
		return parse_fail(c, path, "missing key \"name\"");
	if (!json_object_object_get_ex(o, "access", &access))
		return parse_fail(c, path, "missing key \"access\"");
	r = expect_type(c, npath, name, json_type_string);
	if (r < 0)
		return r;
	if (!*json_object_get_string(name))
		return parse_fail(c, npath, "empty map name pattern");
	r = expect_type(c, apath, access, json_type_string);
	if (r < 0)
		return r;
	if (map_access_from_string(json_object_get_string(access), &a) < 0)
		return parse_fail(c, apath,
				  "unknown access \"%s\" (expected rw, ro, wo, consume or none)",
				  printable(pbuf, json_object_get_string(access)));

	glob = strdup(json_object_get_string(name));
	if (!glob)
		return -ENOMEM;
	ret->glob = glob;
	ret->access = a;
	return 0;
}

static bool name_chars_ok(const char *s, bool pattern, size_t max_colons)
{
	size_t colons = 0;

	if (!s || !*s || strlen(s) > 128)
		return false;
	for (const char *p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_')
			continue;
		if (pattern && (*p == '*' || *p == '?'))
			continue;
		if (*p == ':' && ++colons <= max_colons && p != s && p[1])
			continue;
		return false;
	}
	return colons == max_colons;
}

bool policy_tracepoint_name_is_valid(const char *s, bool pattern)
{
	return name_chars_ok(s, pattern, 1);
}

bool policy_raw_tracepoint_name_is_valid(const char *s, bool pattern)
{
	return name_chars_ok(s, pattern, 0);
}

bool policy_interface_name_is_valid(const char *s, bool pattern)
{
	size_t len = s ? strlen(s) : 0;

	/* IFNAMSIZ is 16 with the NUL; "." and ".." are not names. */
	if (len == 0 || len > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '/' || *p == ':' || *p <= ' ' || *p == 0x7f)
			return false;
		if (!pattern && (*p == '*' || *p == '?' || *p == '['))
			return false;
	}
	return true;
}

/* An array of name patterns, each checked with valid(). */
static int parse_name_patterns(struct parse_ctx *c, const char *path, json_object *arr,
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
		json_object *e = json_object_array_get_idx(arr, i);

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_string);
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

/* "cgroups": true (the default set) or a list of cgroup attach types by libbpf name. */
static int parse_cgroup_attach(struct parse_ctx *c, const char *parent, json_object *attach,
			       uint64_t *ret)
{
	char path[JPATH_MAX], epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	json_object *v;
	uint64_t mask = 0;
	int r;

	path_key(path, parent, "cgroups");
	if (!json_object_object_get_ex(attach, "cgroups", &v))
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		*ret = json_object_get_boolean(v) ? POLICY_CGROUP_ATTACH_DEFAULT : 0;
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return parse_fail(c, path, "expected true, false or a list of attach types, got %s",
				  json_type_phrase(json_object_get_type(v)));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *e = json_object_array_get_idx(v, i);
		int t;

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_string);
		if (r < 0)
			return r;
		t = attach_type_from_string(json_object_get_string(e));
		if (t < 0 || !attach_type_is_cgroup(t))
			return parse_fail(
				c, epath,
				"\"%s\" is not a cgroup attach type (such as "
				"cgroup_inet_egress, cgroup_device or cgroup_inet4_connect)",
				printable(pbuf, json_object_get_string(e)));
		mask |= 1ull << t;
	}
	*ret = mask;
	return 0;
}

static int parse_attach(struct parse_ctx *c, const char *parent, json_object *allow,
			struct policy_attach *out)
{
	static const char *const keys[] = {"cgroups",	 "tracepoints",	    "raw_tracepoints",
					   "interfaces", "host_interfaces", "uprobes"};
	char path[JPATH_MAX], kpath[JPATH_MAX];
	json_object *a, *v;
	int r;

	r = get_section(c, parent, allow, "attach", keys, ARRAY_SIZE(keys), path, &a);
	if (r <= 0)
		return r;
	r = parse_cgroup_attach(c, path, a, &out->cgroup_attach_types);
	if (r < 0)
		return r;
	r = get_array(c, path, a, "tracepoints", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_tracepoint_name_is_valid,
					"tracepoint (CATEGORY:NAME)", &out->tracepoints,
					&out->n_tracepoints);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "raw_tracepoints", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_raw_tracepoint_name_is_valid,
					"raw tracepoint", &out->raw_tracepoints,
					&out->n_raw_tracepoints);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "interfaces", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_interface_name_is_valid,
					"network interface", &out->interfaces, &out->n_interfaces);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "host_interfaces", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_name_patterns(c, kpath, v, policy_interface_name_is_valid,
					"network interface", &out->host_interfaces,
					&out->n_host_interfaces);
		if (r < 0)
			return r;
	}
	return get_bool(c, path, a, "uprobes", &out->uprobes);
}

static int get_pattern(struct parse_ctx *c, const char *path, json_object *o, const char *key,
		       char **ret)
{
	char kpath[JPATH_MAX];
	json_object *v;
	int r;

	path_key(kpath, path, key);
	if (!json_object_object_get_ex(o, key, &v))
		return parse_fail(c, path, "missing key \"%s\"", key);
	r = expect_type(c, kpath, v, json_type_string);
	if (r < 0)
		return r;
	if (!*json_object_get_string(v))
		return parse_fail(c, kpath, "empty pattern");
	*ret = strdup(json_object_get_string(v));
	return *ret ? 0 : -ENOMEM;
}

/*
 * "shared": [{"owner": USER-or-UID, "object": GLOB, "map": GLOB, "access": MODE}].
 * An owner that doesn't exist never matches (warning), as in "match".
 */
static int parse_shared(struct parse_ctx *c, const char *path, json_object *arr,
			struct policy_rule *out)
{
	static const char *const keys[] = {"owner", "object", "map", "access"};
	size_t n = json_object_array_length(arr);
	char epath[JPATH_MAX], kpath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	int r;

	if (n == 0)
		return 0;
	out->shared = calloc(n, sizeof(*out->shared));
	if (!out->shared)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		struct policy_share_rule *sr = &out->shared[out->n_shared];
		const char *owner;
		uint32_t uid;

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_object);
		if (r < 0)
			return r;
		r = check_keys(c, epath, e, keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
		path_key(kpath, epath, "owner");
		if (!json_object_object_get_ex(e, "owner", &v))
			return parse_fail(c, epath, "missing key \"owner\"");
		r = expect_type(c, kpath, v, json_type_string);
		if (r < 0)
			return r;
		owner = json_object_get_string(v);
		if (parse_id(owner, strlen(owner), &uid) < 0) {
			r = parse_name_entry(c, kpath, kpath, v, false, &uid);
			if (r < 0)
				return r;
			if (r == 0)
				continue; /* never matches */
		}
		path_key(kpath, epath, "access");
		if (!json_object_object_get_ex(e, "access", &v))
			return parse_fail(c, epath, "missing key \"access\"");
		r = expect_type(c, kpath, v, json_type_string);
		if (r < 0)
			return r;
		if (map_access_from_string(json_object_get_string(v), &sr->access) < 0)
			return parse_fail(c, kpath,
					  "unknown access \"%s\" (expected rw, ro, wo or none)",
					  printable(pbuf, json_object_get_string(v)));
		/* Consuming takes the records from every other consumer, the owner's too. */
		if (sr->access & MAP_ACCESS_CONSUME)
			return parse_fail(c, kpath,
					  "\"consume\" cannot be shared: consuming a ring buffer "
					  "takes its records from every other consumer, so ring "
					  "buffers go to their owner only");
		sr->owner = uid;
		r = get_pattern(c, epath, e, "object", &sr->object);
		if (r >= 0)
			r = get_pattern(c, epath, e, "map", &sr->map);
		if (r < 0) {
			free(sr->object);
			free(sr->map);
			*sr = (struct policy_share_rule){};
			return r;
		}
		out->n_shared++;
	}
	return 0;
}

static int parse_allow(struct parse_ctx *c, const char *parent, json_object *rule,
		       struct policy_rule *out)
{
	static const char *const keys[] = {"program_types", "program_fds",    "test_run_types",
					   "map_types",	    "helper_classes", "maps",
					   "pinning",	    "maps_of_maps",   "load_with_perfmon",
					   "attach",	    "shared"};
	char path[JPATH_MAX], kpath[JPATH_MAX], epath[JPATH_MAX];
	bool maps_of_maps = false;
	json_object *a, *v;
	int r;

	r = get_section(c, parent, rule, "allow", keys, ARRAY_SIZE(keys), path, &a);
	if (r <= 0)
		return r;

	/* program_types before program_fds, whatever the order in the file. */
	r = get_array(c, path, a, "program_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, UINT64_MAX, &out->program_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "program_fds", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, out->program_types,
				    &out->program_fd_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "test_run_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &prog_types_kind, UINT64_MAX,
				    &out->test_run_types);
		if (r < 0)
			return r;
	}
	r = parse_attach(c, path, a, &out->attach);
	if (r < 0)
		return r;
	r = get_array(c, path, a, "shared", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_shared(c, kpath, v, out);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "map_types", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_type_list(c, kpath, v, &map_types_kind, UINT64_MAX, &out->map_types);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "helper_classes", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_helper_classes(c, kpath, v, &out->helper_classes);
		if (r < 0)
			return r;
	}
	r = get_array(c, path, a, "maps", &v, kpath);
	if (r < 0)
		return r;
	if (v && json_object_array_length(v) > 0) {
		size_t n = json_object_array_length(v);

		out->maps = calloc(n, sizeof(*out->maps));
		if (!out->maps)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			path_index(epath, kpath, i);
			r = parse_map_pattern(c, epath, json_object_array_get_idx(v, i),
					      &out->maps[out->n_maps]);
			if (r < 0)
				return r;
			out->n_maps++;
		}
	}
	r = get_bool(c, path, a, "maps_of_maps", &maps_of_maps);
	if (r < 0)
		return r;
	/* The older spelling of naming both types of maps of maps. */
	if (maps_of_maps)
		out->map_types |= MAPS_OF_MAPS_TYPES;
	r = get_bool(c, path, a, "load_with_perfmon", &out->load_with_perfmon);
	if (r < 0)
		return r;
	return get_bool(c, path, a, "pinning", &out->pinning);
}

static const struct limit_field {
	const char *key;
	size_t offset;
	uint64_t ceiling;
} limit_fields[] = {
	{"max_object_bytes", offsetof(struct policy_limits, max_object_bytes),
	 POLICY_HARD_MAX_OBJECT_BYTES},
	{"max_insns_per_program", offsetof(struct policy_limits, max_insns_per_program),
	 POLICY_HARD_MAX_INSNS_PER_PROGRAM},
	{"max_programs", offsetof(struct policy_limits, max_programs), POLICY_HARD_MAX_PROGRAMS},
	{"max_maps", offsetof(struct policy_limits, max_maps), POLICY_HARD_MAX_MAPS},
	{"max_map_entries", offsetof(struct policy_limits, max_map_entries),
	 POLICY_HARD_MAX_MAP_ENTRIES},
	{"max_attachments", offsetof(struct policy_limits, max_attachments),
	 POLICY_HARD_MAX_ATTACHMENTS},
	{"max_named_objects", offsetof(struct policy_limits, max_named_objects),
	 POLICY_HARD_MAX_NAMED_OBJECTS},
	{"max_loaded_programs", offsetof(struct policy_limits, max_loaded_programs),
	 POLICY_HARD_MAX_LOADED_PROGRAMS},
	{"max_map_memory_bytes", offsetof(struct policy_limits, max_map_memory_bytes),
	 POLICY_HARD_MAX_MAP_MEMORY_BYTES},
	{"max_kernel_threads", offsetof(struct policy_limits, max_kernel_threads),
	 POLICY_HARD_MAX_KERNEL_THREADS},
	{"max_loads_per_minute", offsetof(struct policy_limits, max_loads_per_minute),
	 POLICY_HARD_MAX_LOADS_PER_MINUTE},
};

const char *policy_limit_key(const char *key, uint64_t wanted, char *note, size_t note_size)
{
	if (note_size)
		note[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
		if (strcmp(limit_fields[i].key, key) != 0 || wanted <= limit_fields[i].ceiling)
			continue;
		snprintf(note, note_size,
			 " (and over the broker's hard ceiling of %" PRIu64
			 " for %s, which no policy can raise)",
			 limit_fields[i].ceiling, key);
		return "";
	}
	return key;
}

static uint64_t *limit_ptr(struct policy_limits *l, const struct limit_field *f)
{
	return (uint64_t *)((char *)l + f->offset);
}

static uint64_t limit_get(const struct policy_limits *l, const struct limit_field *f)
{
	return *(const uint64_t *)((const char *)l + f->offset);
}

static int parse_limits(struct parse_ctx *c, const char *parent, json_object *rule,
			struct policy_rule *out)
{
	const char *keys[ARRAY_SIZE(limit_fields)];
	char path[JPATH_MAX], kpath[JPATH_MAX];
	json_object *l;
	int r;

	out->limits = default_limits;
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++)
		keys[i] = limit_fields[i].key;
	r = get_section(c, parent, rule, "limits", keys, ARRAY_SIZE(keys), path, &l);
	if (r <= 0)
		return r;

	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
		const struct limit_field *f = &limit_fields[i];
		json_object *v;
		uint64_t value;

		if (!json_object_object_get_ex(l, f->key, &v))
			continue;
		path_key(kpath, path, f->key);
		if (!json_object_is_type(v, json_type_int))
			return parse_fail(c, kpath, "expected a positive integer, got %s",
					  json_type_phrase(json_object_get_type(v)));
		if (json_object_get_int64(v) <= 0)
			return parse_fail(c, kpath, "expected a positive integer, got %s",
					  json_object_to_json_string(v));
		value = json_object_get_uint64(v);
		if (value > f->ceiling)
			return parse_fail(c, kpath,
					  "%" PRIu64 " is over the hard ceiling of %" PRIu64, value,
					  f->ceiling);
		*limit_ptr(&out->limits, f) = value;
	}
	return 0;
}

static int parse_rule(struct parse_ctx *c, json_object *o, size_t index, struct policy_rule *ret)
{
	static const char *const keys[] = {"match", "allow", "limits"};
	_cleanup_(rule_done) struct policy_rule rule = {};
	char path[JPATH_MAX];
	int r;

	snprintf(path, sizeof(path), "rules[%zu]", index);
	r = expect_type(c, path, o, json_type_object);
	if (r < 0)
		return r;
	r = check_keys(c, path, o, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	if (asprintf(&rule.source, "%s:%s", c->file, path) < 0) {
		rule.source = NULL;
		return -ENOMEM;
	}
	r = parse_match(c, path, o, &rule);
	if (r < 0)
		return r;
	r = parse_allow(c, path, o, &rule);
	if (r < 0)
		return r;
	r = parse_limits(c, path, o, &rule);
	if (r < 0)
		return r;

	*ret = rule;
	rule = (struct policy_rule){};
	return 0;
}

/* ---- Policy ---- */

struct policy *policy_new(void)
{
	return calloc(1, sizeof(struct policy));
}

struct policy *policy_free(struct policy *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_rules; i++)
		rule_done(&p->rules[i]);
	free(p->rules);
	free(p);
	return NULL;
}

static void policy_freep(struct policy **p)
{
	policy_free(*p);
}

size_t policy_n_rules(const struct policy *p)
{
	return p ? p->n_rules : 0;
}

int policy_load_string(struct policy *p, const char *file_name, const char *json,
		       policy_warn_fn warn, void *userdata, char **error)
{
	static const char *const keys[] = {"rules"};
	struct parse_ctx c = {
		.file = file_name,
		.warn = warn,
		.userdata = userdata,
		.error = error,
	};
	_cleanup_json_ json_object *root = NULL;
	struct policy_rule *rules = NULL, *grown;
	json_object *jrules;
	size_t n, n_parsed = 0;
	int r;

	if (!p || !file_name || !json)
		return -EINVAL;
	if (strlen(json) > POLICY_MAX_FILE_BYTES)
		return parse_fail(&c, NULL, "file is larger than %d bytes", POLICY_MAX_FILE_BYTES);

	r = parse_json_text(&c, json, &root);
	if (r < 0)
		return r;
	r = check_json_text(&c, json);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object))
		return parse_fail(&c, NULL, "expected an object at the top level, got %s",
				  json_type_phrase(json_object_get_type(root)));
	r = check_keys(&c, NULL, root, keys, ARRAY_SIZE(keys));
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(root, "rules", &jrules))
		return parse_fail(&c, NULL, "missing key \"rules\"");
	r = expect_type(&c, "rules", jrules, json_type_array);
	if (r < 0)
		return r;

	n = json_object_array_length(jrules);
	if (n == 0)
		return 0;
	rules = calloc(n, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (; n_parsed < n; n_parsed++) {
		r = parse_rule(&c, json_object_array_get_idx(jrules, n_parsed), n_parsed,
			       &rules[n_parsed]);
		if (r < 0)
			goto fail;
	}

	grown = reallocarray(p->rules, p->n_rules + n, sizeof(*p->rules));
	if (!grown) {
		r = -ENOMEM;
		goto fail;
	}
	memcpy(grown + p->n_rules, rules, n * sizeof(*rules));
	p->rules = grown;
	p->n_rules += n;
	free(rules);
	return 0;

fail:
	for (size_t i = 0; i < n_parsed; i++)
		rule_done(&rules[i]);
	free(rules);
	return r;
}

static int read_policy_file(const char *dir, const char *name, char **ret, char **error)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct stat st;

	/* Only root's file, through root's directories and links (trust.h). */
	fd = trust_open_file(dir, name, error);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return set_error(error, negative_errno(), "%s: cannot stat: %s", name,
				 strerror(errno));
	if (st.st_size > POLICY_MAX_FILE_BYTES)
		return set_error(error, -EFBIG, "%s: file is larger than %d bytes", name,
				 POLICY_MAX_FILE_BYTES);

	/* The size may change under us: read at most one byte more than allowed. */
	buf = malloc(POLICY_MAX_FILE_BYTES + 2);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + len, POLICY_MAX_FILE_BYTES + 1 - len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return set_error(error, negative_errno(), "%s: cannot read: %s", name,
					 strerror(errno));
		}
		if (k == 0)
			break;
		len += (size_t)k;
		if (len > POLICY_MAX_FILE_BYTES)
			return set_error(error, -EFBIG, "%s: file is larger than %d bytes", name,
					 POLICY_MAX_FILE_BYTES);
	}
	if (memchr(buf, '\0', len))
		return set_error(error, -EINVAL, "%s: not valid JSON: file contains a NUL byte",
				 name);
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Sorted names of the "*.json" entries of dfd (hidden files excluded, like the shell glob). */
static int list_json_files(int dfd, const char *dir, char ***ret, size_t *ret_n, char **error)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, allocated = 0;
	struct dirent *de;
	int fd;

	fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return set_error(error, negative_errno(), "%s: cannot read: %s", dir,
				 strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		int r = set_error(error, negative_errno(), "%s: cannot read: %s", dir,
				  strerror(errno));

		safe_close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno != 0) {
				int r = set_error(error, negative_errno(), "%s: cannot read: %s",
						  dir, strerror(errno));
				free_names(names, n);
				return r;
			}
			break;
		}
		if (fnmatch("*.json", de->d_name, FNM_PERIOD) != 0)
			continue;
		if (n == allocated) {
			size_t want = allocated ? allocated * 2 : 16;
			char **grown = reallocarray(names, want, sizeof(*names));

			if (!grown)
				goto oom;
			names = grown;
			allocated = want;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), strcmp_ptr);
	*ret = names;
	*ret_n = n;
	return 0;
oom:
	free_names(names, n);
	return -ENOMEM;
}

int policy_load_dir(const char *dir, policy_warn_fn warn, void *userdata, struct policy **ret,
		    char **error)
{
	_cleanup_free_ char *snap = NULL;
	size_t size = 0;
	int r;

	if (!dir || !ret)
		return -EINVAL;
	/* One way of reading the files: the daemon's spawner parses a snapshot too. */
	r = policy_snapshot_dir(dir, warn, userdata, &snap, &size, error);
	if (r < 0)
		return r;
	return policy_load_snapshot(snap, size, warn, userdata, ret, error);
}

/* ---- Snapshots ---- */

/*
 * A snapshot is "NAME\0TEXT\0" for each file, in load order: files have no
 * NUL bytes (read_policy_file() refuses them) and names none either.
 */
static int snapshot_append(char **buf, size_t *size, const char *name, const char *text)
{
	size_t nl = strlen(name) + 1, tl = strlen(text) + 1;
	char *grown = realloc(*buf, *size + nl + tl);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + *size, name, nl);
	memcpy(grown + *size + nl, text, tl);
	*buf = grown;
	*size += nl + tl;
	return 0;
}

int policy_snapshot_dir(const char *dir, policy_warn_fn warn, void *userdata, char **ret,
			size_t *ret_size, char **error)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *buf = NULL;
	char **names = NULL;
	size_t n_names = 0, size = 0;
	int r = 0;

	if (!dir || !ret || !ret_size)
		return -EINVAL;
	dfd = trust_open_dir(dir, error);
	if (dfd == -ENOENT) {
		if (error) {
			free(*error);
			*error = NULL;
		}
		if (warn) {
			_cleanup_free_ char *m = NULL;

			if (asprintf(&m,
				     "%s: policy directory does not exist; the broker allows "
				     "nothing",
				     dir) < 0)
				return -ENOMEM;
			warn(userdata, m);
		}
		*ret = NULL;
		*ret_size = 0;
		return 0;
	}
	if (dfd < 0)
		return dfd;
	r = list_json_files(dfd, dir, &names, &n_names, error);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n_names && r >= 0; i++) {
		_cleanup_free_ char *text = NULL;

		r = read_policy_file(dir, names[i], &text, error);
		if (r >= 0)
			r = snapshot_append(&buf, &size, names[i], text);
	}
	free_names(names, n_names);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

int policy_load_snapshot(const char *buf, size_t size, policy_warn_fn warn, void *userdata,
			 struct policy **ret, char **error)
{
	_cleanup_(policy_freep) struct policy *p = policy_new();
	size_t off = 0;
	int r;

	if (!p)
		return -ENOMEM;
	while (off < size) {
		const char *name = buf + off, *text, *end;

		end = memchr(name, '\0', size - off);
		if (!end || (size_t)(end + 1 - buf) >= size)
			return set_error(error, -EINVAL, "policy snapshot: truncated");
		text = end + 1;
		end = memchr(text, '\0', size - (size_t)(text - buf));
		if (!end)
			return set_error(error, -EINVAL, "policy snapshot: truncated");
		r = policy_load_string(p, name, text, warn, userdata, error);
		if (r < 0)
			return r;
		off = (size_t)(end + 1 - buf);
	}
	*ret = TAKE_PTR(p);
	return 0;
}

/* ---- Grants ---- */

static bool rule_matches_principal(const struct policy_rule *r, const struct policy_identity *id)
{
	for (size_t i = 0; i < r->n_uids; i++)
		if (id->uid >= r->uids[i].first && id->uid <= r->uids[i].last)
			return true;
	for (size_t i = 0; i < r->n_gids; i++) {
		if (r->gids[i] == id->gid)
			return true;
		for (size_t k = 0; k < id->n_groups; k++)
			if (r->gids[i] == id->groups[k])
				return true;
	}
	return false;
}

/* Unit names hold '\' as a character ("\x2d"), never as fnmatch's escape. */
static bool any_unit_match(char *const *patterns, size_t n, const char *const *names,
			   size_t n_names)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n_names; k++)
			if (names[k] && fnmatch(patterns[i], names[k], FNM_NOESCAPE) == 0)
				return true;
	return false;
}

static bool rule_has_unit_condition(const struct policy_rule *r)
{
	return r->n_units + r->n_user_units + r->n_slices + r->n_user_slices > 0;
}

/*
 * Every condition the rule lists must hold: the principal (any of its uids,
 * users, groups), and each of units, user_units, slices, user_slices (any of
 * its patterns). A rule without any condition matches nobody.
 */
static bool rule_matches(const struct policy_rule *r, const struct policy_identity *id)
{
	if (!r->has_principal && !rule_has_unit_condition(r))
		return false;
	if (r->has_principal && !rule_matches_principal(r, id))
		return false;
	if (r->n_units && !any_unit_match(r->units, r->n_units, &id->unit, 1))
		return false;
	if (r->n_user_units && !any_unit_match(r->user_units, r->n_user_units, &id->user_unit, 1))
		return false;
	if (r->n_slices && !any_unit_match(r->slices, r->n_slices, id->slices, id->n_slices))
		return false;
	if (r->n_user_slices &&
	    !any_unit_match(r->user_slices, r->n_user_slices, id->user_slices, id->n_user_slices))
		return false;
	return true;
}

bool policy_uses_units(const struct policy *p)
{
	for (size_t i = 0; p && i < p->n_rules; i++)
		if (rule_has_unit_condition(&p->rules[i]))
			return true;
	return false;
}

struct policy_grant *policy_grant_free(struct policy_grant *g)
{
	if (!g)
		return NULL;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		for (size_t k = 0; k < g->map_rules[i].n_patterns; k++)
			free(g->map_rules[i].patterns[k].glob);
		free(g->map_rules[i].patterns);
	}
	free(g->map_rules);
	for (size_t i = 0; i < g->n_sources; i++)
		free(g->sources[i]);
	free(g->sources);
	attach_done(&g->attach);
	shared_free(g->shared, g->n_shared);
	free(g);
	return NULL;
}

static void policy_grant_freep(struct policy_grant **g)
{
	policy_grant_free(*g);
}

static int strv_append(char ***v, size_t *n, char *const *add, size_t n_add)
{
	char **nv;

	if (n_add == 0)
		return 0;
	nv = reallocarray(*v, *n + n_add, sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	for (size_t i = 0; i < n_add; i++) {
		nv[*n] = strdup(add[i]);
		if (!nv[*n])
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

static int shared_append(struct policy_grant *g, const struct policy_rule *r)
{
	struct policy_share_rule *nv;

	if (r->n_shared == 0)
		return 0;
	nv = reallocarray(g->shared, g->n_shared + r->n_shared, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	g->shared = nv;
	for (size_t i = 0; i < r->n_shared; i++) {
		struct policy_share_rule *d = &nv[g->n_shared];

		*d = r->shared[i];
		d->object = strdup(r->shared[i].object);
		d->map = strdup(r->shared[i].map);
		if (!d->object || !d->map) {
			free(d->object);
			free(d->map);
			return -ENOMEM;
		}
		g->n_shared++;
	}
	return 0;
}

static int grant_add_rule(struct policy_grant *g, const struct policy_rule *r)
{
	struct policy_grant_maps *m = &g->map_rules[g->n_map_rules];
	int k;

	if (!g->matched) {
		g->matched = true;
		g->limits = r->limits;
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++) {
			const struct limit_field *f = &limit_fields[i];
			uint64_t *v = limit_ptr(&g->limits, f);

			if (limit_get(&r->limits, f) > *v)
				*v = limit_get(&r->limits, f);
		}
	}
	g->program_types |= r->program_types;
	g->program_fd_types |= r->program_fd_types;
	g->test_run_types |= r->test_run_types;
	g->map_types |= r->map_types;
	g->helper_classes |= r->helper_classes;
	g->pinning = g->pinning || r->pinning;
	g->load_with_perfmon = g->load_with_perfmon || r->load_with_perfmon;
	g->attach.cgroup_attach_types |= r->attach.cgroup_attach_types;
	g->attach.uprobes = g->attach.uprobes || r->attach.uprobes;
	k = strv_append(&g->attach.tracepoints, &g->attach.n_tracepoints, r->attach.tracepoints,
			r->attach.n_tracepoints);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.raw_tracepoints, &g->attach.n_raw_tracepoints,
			r->attach.raw_tracepoints, r->attach.n_raw_tracepoints);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.interfaces, &g->attach.n_interfaces, r->attach.interfaces,
			r->attach.n_interfaces);
	if (k < 0)
		return k;
	k = strv_append(&g->attach.host_interfaces, &g->attach.n_host_interfaces,
			r->attach.host_interfaces, r->attach.n_host_interfaces);
	if (k < 0)
		return k;
	k = shared_append(g, r);
	if (k < 0)
		return k;

	g->sources[g->n_sources] = strdup(r->source);
	if (!g->sources[g->n_sources])
		return -ENOMEM;
	g->n_sources++;

	*m = (struct policy_grant_maps){};
	g->n_map_rules++;
	if (r->n_maps == 0)
		return 0;
	m->patterns = calloc(r->n_maps, sizeof(*m->patterns));
	if (!m->patterns)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_maps; i++) {
		m->patterns[i].glob = strdup(r->maps[i].glob);
		if (!m->patterns[i].glob)
			return -ENOMEM;
		m->patterns[i].access = r->maps[i].access;
		m->n_patterns++;
	}
	return 0;
}

int policy_resolve(const struct policy *p, const struct policy_identity *id,
		   struct policy_grant **ret)
{
	_cleanup_(policy_grant_freep) struct policy_grant *g = NULL;
	size_t n = 0;
	int r;

	if (!id || !ret)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->uid = id->uid;

	for (size_t i = 0; p && i < p->n_rules; i++)
		if (rule_matches(&p->rules[i], id))
			n++;
	if (n > 0) {
		g->map_rules = calloc(n, sizeof(*g->map_rules));
		g->sources = calloc(n, sizeof(*g->sources));
		if (!g->map_rules || !g->sources)
			return -ENOMEM;
	}
	for (size_t i = 0; p && i < p->n_rules; i++) {
		if (!rule_matches(&p->rules[i], id))
			continue;
		r = grant_add_rule(g, &p->rules[i]);
		if (r < 0)
			return r;
	}
	if (g->matched) {
		g->program_fd_types |= POLICY_ALWAYS_FD_TYPES & g->program_types;
		g->map_types |= POLICY_DEFAULT_MAP_TYPES;
	}

	*ret = TAKE_PTR(g);
	return 0;
}

enum map_access policy_grant_map_access(const struct policy_grant *g, const char *map_name)
{
	unsigned int access = MAP_ACCESS_NONE;

	if (!g || !g->matched || !map_name)
		return MAP_ACCESS_NONE;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		const struct policy_grant_maps *m = &g->map_rules[i];

		for (size_t k = 0; k < m->n_patterns; k++) {
			if (fnmatch(m->patterns[k].glob, map_name, 0) == 0) {
				access |= m->patterns[k].access;
				break;
			}
		}
	}
	return (enum map_access)access;
}

bool policy_grant_prog_type(const struct policy_grant *g, int prog_type)
{
	if (!g || !g->matched || prog_type < 0 || prog_type >= PROG_TYPE_BITS)
		return false;
	return g->program_types & (1ull << prog_type);
}

bool policy_grant_map_type(const struct policy_grant *g, int map_type)
{
	if (!g || map_type < 0 || map_type >= MAP_TYPE_BITS)
		return false;
	return g->map_types & (1ull << map_type);
}

bool policy_prog_runs_in_callers_task(const struct policy_grant *g, int prog_type)
{
	/*
	 * A kprobe-type program is attached by the broker only as a uprobe on
	 * one of the caller's own processes (attach_uprobe()); with its fd the
	 * caller could attach it anywhere the kernel lets them. Nothing else
	 * qualifies: tracing programs run in any task, networking and cgroup
	 * hooks in whatever task the kernel is in (softirqs included), and
	 * test runs in the broker's worker, as root.
	 */
	return prog_type == BPF_PROG_TYPE_KPROBE && !policy_grant_prog_fd(g, prog_type);
}

bool policy_grant_helper(const struct policy_grant *g, int prog_type, int helper_id)
{
	enum helper_class cls = helper_classify(helper_id), any;

	if ((int)cls < 0 || (int)cls >= 64)
		return false;
	any = helper_class_any_task(cls);
	if ((int)any >= 0 && (g->helper_classes & HELPER_CLASS_BIT(any)))
		return true;
	if (!(g->helper_classes & HELPER_CLASS_BIT(cls)))
		return false;
	return (int)any < 0 || policy_prog_runs_in_callers_task(g, prog_type);
}

bool policy_grant_prog_fd(const struct policy_grant *g, int prog_type)
{
	if (!policy_grant_prog_type(g, prog_type))
		return false;
	return (g->program_fd_types | POLICY_ALWAYS_FD_TYPES) & (1ull << prog_type);
}

bool policy_grant_test_run(const struct policy_grant *g, int prog_type)
{
	if (policy_grant_prog_type(g, prog_type))
		return true;
	if (!g || !g->matched || prog_type < 0 || prog_type >= PROG_TYPE_BITS)
		return false;
	return g->test_run_types & (1ull << prog_type);
}

bool policy_grant_attach_cgroup(const struct policy_grant *g, int attach_type)
{
	if (!g || !g->matched || attach_type < 0 || attach_type >= 64)
		return false;
	return g->attach.cgroup_attach_types & (1ull << attach_type);
}

static bool any_fnmatch(char *const *patterns, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(patterns[i], s, 0) == 0)
			return true;
	return false;
}

bool policy_grant_attach_tracepoint(const struct policy_grant *g, const char *category_name)
{
	if (!g || !g->matched || !policy_tracepoint_name_is_valid(category_name, false))
		return false;
	return any_fnmatch(g->attach.tracepoints, g->attach.n_tracepoints, category_name);
}

bool policy_grant_attach_raw_tracepoint(const struct policy_grant *g, const char *name)
{
	if (!g || !g->matched || !policy_raw_tracepoint_name_is_valid(name, false))
		return false;
	return any_fnmatch(g->attach.raw_tracepoints, g->attach.n_raw_tracepoints, name);
}

bool policy_grant_attach_interface(const struct policy_grant *g, const char *ifname)
{
	if (!g || !g->matched || !policy_interface_name_is_valid(ifname, false))
		return false;
	return any_fnmatch(g->attach.interfaces, g->attach.n_interfaces, ifname);
}

bool policy_grant_attach_host_interface(const struct policy_grant *g, const char *ifname)
{
	if (!g || !g->matched || !policy_interface_name_is_valid(ifname, false))
		return false;
	return any_fnmatch(g->attach.host_interfaces, g->attach.n_host_interfaces, ifname);
}

bool policy_grant_attach_uprobes(const struct policy_grant *g)
{
	return g && g->matched && g->attach.uprobes;
}

enum map_access policy_grant_shared_access(const struct policy_grant *g, uid_t owner,
					   const char *object, const char *map)
{
	unsigned int access = MAP_ACCESS_NONE;

	if (!g || !g->matched || !object || !map)
		return MAP_ACCESS_NONE;
	for (size_t i = 0; i < g->n_shared; i++) {
		const struct policy_share_rule *sr = &g->shared[i];

		if (sr->owner == owner && fnmatch(sr->object, object, 0) == 0 &&
		    fnmatch(sr->map, map, 0) == 0)
			access |= sr->access;
	}
	return (enum map_access)access;
}

static int json_add(json_object *obj, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static int json_append(json_object *arr, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* The names of the types in mask (bit 1 << type), by name(type) (NULL: left out). */
static json_object *types_to_json(uint64_t mask, const char *(*name)(int type))
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int t = 0; t < 64; t++) {
		const char *n = (mask & (1ull << t)) ? name(t) : NULL;

		if (n && json_append(arr, json_object_new_string(n)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *helper_classes_to_json(helper_class_mask_t mask)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int c = 0; c < _HELPER_CLASS_MAX && c < 64; c++) {
		const char *name;

		if (!(mask & HELPER_CLASS_BIT(c)))
			continue;
		name = helper_class_to_string((enum helper_class)c);
		if (!name)
			continue;
		if (json_append(arr, json_object_new_string(name)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *map_rules_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < g->n_map_rules; i++) {
		_cleanup_json_ json_object *patterns = json_object_new_array();

		if (!patterns)
			return NULL;
		for (size_t k = 0; k < g->map_rules[i].n_patterns; k++) {
			const struct policy_map_pattern *pat = &g->map_rules[i].patterns[k];
			_cleanup_json_ json_object *o = json_object_new_object();

			if (!o || json_add(o, "name", json_object_new_string(pat->glob)) < 0 ||
			    json_add(o, "access",
				     json_object_new_string(map_access_to_string(pat->access))) < 0)
				return NULL;
			if (json_append(patterns, TAKE_PTR(o)) < 0)
				return NULL;
		}
		if (json_append(arr, TAKE_PTR(patterns)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static json_object *strv_to_json(char *const *v, size_t n)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_append(arr, json_object_new_string(v[i])) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static json_object *cgroup_attach_to_json(uint64_t mask)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (int t = 0; t < 64; t++)
		if ((mask & (1ull << t)) &&
		    json_append(arr, json_object_new_string(attach_type_to_string(t) ?: "?")) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static json_object *attach_to_json(const struct policy_attach *a)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (!o || json_add(o, "cgroups", cgroup_attach_to_json(a->cgroup_attach_types)) < 0 ||
	    json_add(o, "tracepoints", strv_to_json(a->tracepoints, a->n_tracepoints)) < 0 ||
	    json_add(o, "raw_tracepoints", strv_to_json(a->raw_tracepoints, a->n_raw_tracepoints)) <
		    0 ||
	    json_add(o, "interfaces", strv_to_json(a->interfaces, a->n_interfaces)) < 0 ||
	    json_add(o, "host_interfaces", strv_to_json(a->host_interfaces, a->n_host_interfaces)) <
		    0 ||
	    json_add(o, "uprobes", json_object_new_boolean(a->uprobes)) < 0)
		return NULL;
	return TAKE_PTR(o);
}

static json_object *shared_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < g->n_shared; i++) {
		const struct policy_share_rule *sr = &g->shared[i];
		_cleanup_json_ json_object *o = json_object_new_object();

		if (!o || json_add(o, "owner", json_object_new_int64(sr->owner)) < 0 ||
		    json_add(o, "object", json_object_new_string(sr->object)) < 0 ||
		    json_add(o, "map", json_object_new_string(sr->map)) < 0 ||
		    json_add(o, "access",
			     json_object_new_string(map_access_to_string(sr->access))) < 0 ||
		    json_append(arr, TAKE_PTR(o)) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

json_object *policy_grant_to_json(const struct policy_grant *g)
{
	_cleanup_json_ json_object *o = NULL, *sources = NULL, *limits = NULL;

	if (!g)
		return NULL;
	o = json_object_new_object();
	sources = json_object_new_array();
	limits = json_object_new_object();
	if (!o || !sources || !limits)
		return NULL;
	for (size_t i = 0; i < g->n_sources; i++)
		if (json_append(sources, json_object_new_string(g->sources[i])) < 0)
			return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++)
		if (json_add(limits, limit_fields[i].key,
			     json_object_new_int64(
				     (int64_t)limit_get(&g->limits, &limit_fields[i]))) < 0)
			return NULL;

	if (json_add(o, "matched", json_object_new_boolean(g->matched)) < 0 ||
	    json_add(o, "rules", TAKE_PTR(sources)) < 0 ||
	    json_add(o, "program_types",
		     types_to_json(g->program_types, policy_prog_type_to_string)) < 0 ||
	    json_add(
		    o, "program_fds",
		    types_to_json(g->program_types & (g->program_fd_types | POLICY_ALWAYS_FD_TYPES),
				  policy_prog_type_to_string)) < 0 ||
	    json_add(o, "test_run_types",
		     types_to_json(g->test_run_types & ~g->program_types,
				   policy_prog_type_to_string)) < 0 ||
	    json_add(o, "map_types", types_to_json(g->map_types, policy_map_type_to_string)) < 0 ||
	    json_add(o, "helper_classes", helper_classes_to_json(g->helper_classes)) < 0 ||
	    json_add(o, "attach", attach_to_json(&g->attach)) < 0 ||
	    json_add(o, "shared", shared_to_json(g)) < 0 ||
	    json_add(o, "pinning", json_object_new_boolean(g->pinning)) < 0 ||
	    json_add(o, "maps_of_maps",
		     json_object_new_boolean((g->map_types & MAPS_OF_MAPS_TYPES) != 0)) < 0 ||
	    json_add(o, "load_with_perfmon", json_object_new_boolean(g->load_with_perfmon)) < 0 ||
	    json_add(o, "maps", map_rules_to_json(g)) < 0 ||
	    json_add(o, "limits", TAKE_PTR(limits)) < 0)
		return NULL;
	return TAKE_PTR(o);
}

/* ---- Decisions ---- */

void object_desc_done(struct object_desc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_programs; i++) {
		struct object_program *prog = &d->programs[i];

		free(prog->name);
		free(prog->helpers);
		for (size_t k = 0; k < prog->n_kfuncs; k++)
			free(prog->kfuncs[k]);
		free(prog->kfuncs);
		for (size_t k = 0; k < prog->n_ksyms; k++)
			free(prog->ksyms[k]);
		free(prog->ksyms);
	}
	free(d->programs);
	for (size_t i = 0; i < d->n_maps; i++)
		free(d->maps[i].name);
	free(d->maps);
	*d = (struct object_desc){};
}

static const char *name_or_unnamed(const char *name)
{
	return name ? name : "(unnamed)";
}

static int decide_object(const struct policy_grant *g, const struct object_desc *d,
			 struct verdict_item *it)
{
	size_t n_load = 0;
	char note[128];
	int k = 0;

	for (size_t i = 0; i < d->n_programs; i++)
		if (d->programs[i].load)
			n_load++;

	/* Past a hard ceiling no key can help: named as such, with no key (policy_limit_key()). */
	if (d->object_bytes > g->limits.max_object_bytes)
		k = verdict_item_deny(
			it,
			policy_limit_key("max_object_bytes", d->object_bytes, note, sizeof(note)),
			"object is %" PRIu64 " bytes, over your limit of %" PRIu64 "%s",
			d->object_bytes, g->limits.max_object_bytes, note);
	if (k >= 0 && n_load > g->limits.max_programs)
		k = verdict_item_deny(it,
				      policy_limit_key("max_programs", n_load, note, sizeof(note)),
				      "object loads %zu programs, over your limit of %" PRIu64 "%s",
				      n_load, g->limits.max_programs, note);
	if (k >= 0 && d->n_maps > g->limits.max_maps)
		k = verdict_item_deny(it,
				      policy_limit_key("max_maps", d->n_maps, note, sizeof(note)),
				      "object has %zu maps, over your limit of %" PRIu64 "%s",
				      d->n_maps, g->limits.max_maps, note);
	return k;
}

enum helper_class policy_helper_class_needed(const struct policy_grant *g, int prog_type,
					     int helper_id, bool *any_task)
{
	enum helper_class cls = helper_classify(helper_id), any = helper_class_any_task(cls);
	/* The plain class covers only programs that run in the caller's own task: told
	 * to grant it for any other program, a user would grant it and still be refused. */
	bool need_any = (int)any >= 0 && !policy_prog_runs_in_callers_task(g, prog_type);

	if (any_task)
		*any_task = need_any;
	return need_any ? any : cls;
}

/* At most this many names in one reason: an object can reference thousands of symbols. */
#define REASON_MAX_NAMES 16

/* One reason per helper class the program lacks, naming every helper of that class it calls. */
static int decide_helpers(const struct policy_grant *g, const struct object_program *prog,
			  const char *name, struct verdict_item *it)
{
	for (size_t i = 0; i < prog->n_helpers; i++) {
		_cleanup_free_ char *helpers = NULL;
		enum helper_class need, cls = helper_classify(prog->helpers[i]);
		const char *cls_name = helper_class_to_string(cls) ?: "unknown";
		const char *prog_type = policy_prog_type_to_string(prog->prog_type);
		char key[64], buf[32];
		bool any_task, seen = false;
		size_t len = 0, listed = 0;
		FILE *f;
		int k;

		if (policy_grant_helper(g, prog->prog_type, prog->helpers[i]))
			continue;
		need = policy_helper_class_needed(g, prog->prog_type, prog->helpers[i], &any_task);
		for (size_t j = 0; j < i && !seen; j++) {
			seen = !policy_grant_helper(g, prog->prog_type, prog->helpers[j]) &&
			       policy_helper_class_needed(g, prog->prog_type, prog->helpers[j],
							  NULL) == need;
		}
		if (seen)
			continue; /* named in the reason of the first helper of its class */
		f = open_memstream(&helpers, &len);
		if (!f)
			return -ENOMEM;
		for (size_t j = i; j < prog->n_helpers; j++) {
			if (j != i && (policy_grant_helper(g, prog->prog_type, prog->helpers[j]) ||
				       policy_helper_class_needed(g, prog->prog_type,
								  prog->helpers[j], NULL) != need))
				continue;
			if (listed++ < REASON_MAX_NAMES)
				fprintf(f, "%s%s", j == i ? "" : ", ",
					helper_display_name(prog->helpers[j], buf));
		}
		if (listed > REASON_MAX_NAMES)
			fprintf(f, " and %zu more", listed - REASON_MAX_NAMES);
		if (fclose(f) != 0 || !helpers)
			return -ENOMEM;
		snprintf(key, sizeof(key), "helper_classes: %s",
			 helper_class_to_string(need) ?: "unknown");
		if (any_task)
			k = verdict_item_deny(
				it, key,
				"program \"%s\" calls %s (class %s), which acts on the "
				"task the program runs in: class %s covers only programs "
				"that run in your own processes (uprobes the broker "
				"attaches), and a %s program runs in anyone's; that needs "
				"class %s",
				name, helpers, cls_name, cls_name,
				prog_type ?: "program of this type", helper_class_to_string(need));
		else
			k = verdict_item_deny(
				it, key,
				"program \"%s\" calls %s (class %s), which your policy "
				"does not allow",
				name, helpers, cls_name);
		if (k < 0)
			return k;
	}
	return 0;
}

/* "a, b, c" of names (NULL ones as "(unnamed)"), "... and N more" past the bound; NULL: -ENOMEM. */
static char *join_list(char *const *names, size_t n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n && i < REASON_MAX_NAMES; i++)
		fprintf(f, "%s%s", i ? ", " : "", name_or_unnamed(names[i]));
	if (n > REASON_MAX_NAMES)
		fprintf(f, " and %zu more", n - REASON_MAX_NAMES);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

static int decide_program(const struct policy_grant *g, const struct object_program *prog,
			  struct verdict_item *it)
{
	const char *name = name_or_unnamed(prog->name);
	char note[128];
	int k = 0;

	/* A test_run-only type loads like any other; the caller just never gets to attach it. */
	if (!policy_grant_test_run(g, prog->prog_type)) {
		const char *type = policy_prog_type_to_string(prog->prog_type);
		char key[64];

		snprintf(key, sizeof(key), "program_types: %s", type ?: "");
		if (type)
			k = verdict_item_deny(it, key,
					      "program \"%s\" has type %s, which your policy does "
					      "not allow",
					      name, type);
		else /* a type libbpf has no name for cannot be granted */
			k = verdict_item_deny(it, NULL,
					      "program \"%s\" has unknown type %d, which your "
					      "policy does not allow",
					      name, prog->prog_type);
	}
	if (k >= 0 && prog->insn_cnt > g->limits.max_insns_per_program)
		k = verdict_item_deny(it,
				      policy_limit_key("max_insns_per_program", prog->insn_cnt,
						       note, sizeof(note)),
				      "program \"%s\" has %" PRIu32
				      " instructions, over your limit of %" PRIu64 "%s",
				      name, prog->insn_cnt, g->limits.max_insns_per_program, note);
	if (k >= 0)
		k = decide_helpers(g, prog, name, it);
	if (k >= 0 && prog->n_kfuncs > 0 &&
	    !(g->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_KFUNC))) {
		_cleanup_free_ char *list = join_list(prog->kfuncs, prog->n_kfuncs);

		k = list ? verdict_item_deny(it, "helper_classes: kfunc",
					     "program \"%s\" calls kfunc%s %s (class kfunc), which "
					     "your policy does not allow",
					     name, prog->n_kfuncs > 1 ? "s" : "", list)
			 : -ENOMEM;
	}
	/* A kernel symbol's address, or a pointer into kernel memory the program may read. */
	if (k >= 0 && prog->n_ksyms > 0 &&
	    !(g->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY))) {
		_cleanup_free_ char *list = join_list(prog->ksyms, prog->n_ksyms);

		k = list ? verdict_item_deny(
				   it, "helper_classes: read_kernel_memory",
				   "program \"%s\" references kernel symbol%s %s (class "
				   "read_kernel_memory), which your policy does not allow",
				   name, prog->n_ksyms > 1 ? "s" : "", list)
			 : -ENOMEM;
	}
	return k;
}

bool policy_map_type_is_map_of_maps(int map_type)
{
	return map_type == BPF_MAP_TYPE_ARRAY_OF_MAPS || map_type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

enum map_access policy_map_access_for_type(enum map_access granted, int map_type)
{
	/*
	 * A ring buffer's fd does nothing but map it (lookups and updates are
	 * not supported), and consuming needs it O_RDWR. An O_RDONLY fd would
	 * show the records without consuming them: not handed out either, so
	 * a ring buffer not granted consume gives no fd.
	 */
	if (map_type == BPF_MAP_TYPE_RINGBUF)
		return (granted & MAP_ACCESS_CONSUME) ? MAP_ACCESS_CONSUME : MAP_ACCESS_NONE;
	/*
	 * Whoever can write a map of maps can put any map fd they hold in it,
	 * whatever its mode. So its fd is at most read-only; the broker does
	 * the inserts (map_insert) after checking the inserted fd allows
	 * writing.
	 */
	if (policy_map_type_is_map_of_maps(map_type))
		return granted & MAP_ACCESS_RO;
	return granted & MAP_ACCESS_RW;
}

/* "map_types: NAME" for a type that could be granted by name; "" for one libbpf cannot name. */
static void map_type_key(char key[static 64], int map_type)
{
	const char *type = policy_map_type_to_string(map_type);

	snprintf(key, 64, "%s%s", type ? "map_types: " : "", type ?: "");
}

static int decide_map_type(const struct policy_grant *g, const struct object_map *map,
			   const char *name, struct verdict_item *it)
{
	char key[64];
	int k = 0;

	/* Default deny: what a type carries beyond data must have been granted by name. */
	for (int inner = 0; inner < 2 && k >= 0; inner++) {
		int t = inner ? map->inner_map_type : map->map_type;
		const char *type = policy_map_type_to_string(t);
		const char *what = inner ? "'s inner map" : "";

		if ((inner && !t) || policy_grant_map_type(g, t))
			continue;
		map_type_key(key, t);
		/* The kernel doesn't check an fd's mode when it goes into a map of maps. */
		if (!inner && policy_map_type_is_map_of_maps(t))
			k = verdict_item_deny(it, key,
					      "map \"%s\" is a map of maps, which your policy does "
					      "not allow (it would let your programs write any map "
					      "you hold a read-only fd of)",
					      name);
		else if (type)
			k = verdict_item_deny(it, key,
					      "map \"%s\"%s has type %s, which your policy does "
					      "not allow (types beyond plain data are granted by "
					      "name, in map_types)",
					      name, what, type);
		else
			k = verdict_item_deny(it, key,
					      "map \"%s\"%s has unknown type %d, which your policy "
					      "does not allow",
					      name, what, t);
	}
	return k;
}

static bool map_type_sized_in_bytes(int map_type)
{
	return map_type == BPF_MAP_TYPE_RINGBUF || map_type == BPF_MAP_TYPE_USER_RINGBUF;
}

/*
 * max_entries over max_map_entries, of map name or (inner) of its inner map.
 * A ring buffer's max_entries is its data size in bytes, limited by the same
 * key: said so, whether it is the map or a map of maps' inner map.
 */
static int deny_size(const struct policy_grant *g, struct verdict_item *it, const char *name,
		     bool inner, int map_type, uint32_t max_entries)
{
	char *text = NULL;

	if (!map_type_sized_in_bytes(map_type))
		return verdict_item_deny(
			it, "max_map_entries",
			"map \"%s\"%s has %" PRIu32 " entries, over your limit of %" PRIu64, name,
			inner ? "'s inner map" : "", max_entries, g->limits.max_map_entries);
	if (asprintf(&text,
		     "%s%s%s is %" PRIu32 " bytes, over your limit of %" PRIu64
		     " (policy key max_map_entries, which limits a ring buffer's size in bytes)",
		     inner ? "map \"" : "ring buffer \"", name,
		     inner ? "\"'s inner ring buffer" : "\"", max_entries,
		     g->limits.max_map_entries) < 0)
		return -ENOMEM;
	return verdict_item_add(it, "max_map_entries", text);
}

static int decide_map(const struct policy_grant *g, const struct object_map *map,
		      struct verdict_item *it)
{
	const char *name = name_or_unnamed(map->name);
	int k = 0;

	if (map->max_entries > g->limits.max_map_entries)
		k = deny_size(g, it, name, false, map->map_type, map->max_entries);
	if (k >= 0 && map->pinned && !g->pinning)
		k = verdict_item_deny(
			it, "pinning",
			"map \"%s\" is pinned by name, which your policy does not allow", name);
	/* Its inner map is a map too, for as long as the load runs. */
	if (k >= 0 && map->inner_max_entries > g->limits.max_map_entries)
		k = deny_size(g, it, name, true, map->inner_map_type, map->inner_max_entries);
	/*
	 * Flags the broker knows to change only how the map holds its data;
	 * the rest (a token or BTF object passed by fd, which the kernel would
	 * look up in the worker's table, and anything newer) is refused, by
	 * every policy: no key.
	 */
	if (k >= 0 && (map->map_flags & ~POLICY_MAP_FLAGS_KNOWN))
		k = verdict_item_deny(
			it, NULL,
			"map \"%s\" has flags 0x%" PRIx32 " the broker does not allow "
			"(it allows 0x%x)",
			name, map->map_flags & ~POLICY_MAP_FLAGS_KNOWN, POLICY_MAP_FLAGS_KNOWN);
	if (k >= 0 && (map->inner_map_flags & ~POLICY_MAP_FLAGS_KNOWN))
		k = verdict_item_deny(it, NULL,
				      "map \"%s\"'s inner map has flags 0x%" PRIx32
				      " the broker does not allow (it allows 0x%x)",
				      name, map->inner_map_flags & ~POLICY_MAP_FLAGS_KNOWN,
				      POLICY_MAP_FLAGS_KNOWN);
	if (k >= 0)
		k = decide_map_type(g, map, name, it);
	return k;
}

int policy_decide(const struct policy_grant *g, const struct object_desc *d,
		  struct policy_verdict *ret)
{
	_cleanup_(policy_verdict_done) struct policy_verdict v = {};
	int r;

	if (!g || !d || !ret)
		return -EINVAL;
	v.n_programs = d->n_programs;
	v.n_maps = d->n_maps;
	if (v.n_programs > 0) {
		v.programs = calloc(v.n_programs, sizeof(*v.programs));
		v.prog_fd = calloc(v.n_programs, sizeof(*v.prog_fd));
		v.test_run_only = calloc(v.n_programs, sizeof(*v.test_run_only));
		if (!v.programs || !v.prog_fd || !v.test_run_only)
			return -ENOMEM;
	}
	if (v.n_maps > 0) {
		v.maps = calloc(v.n_maps, sizeof(*v.maps));
		v.map_access = calloc(v.n_maps, sizeof(*v.map_access));
		if (!v.maps || !v.map_access)
			return -ENOMEM;
	}
	v.object.allowed = true;
	for (size_t i = 0; i < v.n_programs; i++)
		v.programs[i].allowed = true;
	for (size_t i = 0; i < v.n_maps; i++)
		v.maps[i].allowed = true;

	if (!g->matched) {
		r = verdict_item_deny(&v.object, "match",
				      "no policy rule matches uid %u; the broker allows nothing",
				      (unsigned int)g->uid);
		if (r < 0)
			return r;
		for (size_t i = 0; i < d->n_programs; i++) {
			if (!d->programs[i].load)
				continue;
			r = verdict_item_deny(
				&v.programs[i], "match",
				"program \"%s\" is not allowed: no policy rule matches uid %u",
				name_or_unnamed(d->programs[i].name), (unsigned int)g->uid);
			if (r < 0)
				return r;
		}
		for (size_t i = 0; i < d->n_maps; i++) {
			r = verdict_item_deny(
				&v.maps[i], "match",
				"map \"%s\" is not allowed: no policy rule matches uid %u",
				name_or_unnamed(d->maps[i].name), (unsigned int)g->uid);
			if (r < 0)
				return r;
		}
	} else {
		r = decide_object(g, d, &v.object);
		if (r < 0)
			return r;
		for (size_t i = 0; i < d->n_programs; i++) {
			if (!d->programs[i].load)
				continue;
			r = decide_program(g, &d->programs[i], &v.programs[i]);
			if (r < 0)
				return r;
			v.prog_fd[i] = policy_grant_prog_fd(g, d->programs[i].prog_type);
			v.test_run_only[i] = !policy_grant_prog_type(g, d->programs[i].prog_type);
		}
		for (size_t i = 0; i < d->n_maps; i++) {
			r = decide_map(g, &d->maps[i], &v.maps[i]);
			if (r < 0)
				return r;
			v.map_access[i] = policy_map_access_for_type(
				policy_grant_map_access(g, d->maps[i].name), d->maps[i].map_type);
		}
	}

	v.allowed = v.object.allowed;
	for (size_t i = 0; i < v.n_programs; i++)
		v.allowed = v.allowed && v.programs[i].allowed;
	for (size_t i = 0; i < v.n_maps; i++)
		v.allowed = v.allowed && v.maps[i].allowed;

	*ret = v;
	v = (struct policy_verdict){};
	return 0;
}

static uint64_t pow2_ceil(uint64_t n)
{
	uint64_t r = 1;

	while (r < n && r < (1ull << 62))
		r <<= 1;
	return r < n ? UINT64_MAX : r;
}

static uint64_t kmalloc_size(uint64_t size)
{
	return size < 16 ? 16 : pow2_ceil(size);
}

/*
 * Elements a map that doesn't preallocate keeps cached per possible CPU
 * besides its entries: the kernel's bpf_mem_alloc() fills each CPU's cache
 * up to a high watermark of 96 elements of 256 bytes' worth, at least 3
 * (kernel/bpf/memalloc.c), as soon as the map exists.
 */
static uint64_t mem_alloc_cached(uint64_t unit)
{
	uint64_t n = unit ? 96 * 256 / unit : 96;

	return n < 3 ? 3 : n;
}

/* A hash table's buckets: a power of two of them, 16 bytes each. */
static uint64_t hash_buckets(uint64_t n)
{
	return u64_mul_sat(pow2_ceil(n ? n : 1), 16);
}

/*
 * What the kernel allocates for a map filled up, as measured on Linux 6.18
 * (fdinfo memlock, and the memory cgroup's kernel memory), on the generous
 * side: array-like maps a pointer or value per entry, per-CPU maps one value
 * per possible CPU and entry; hashed maps their buckets and an element of
 * key + value and about 64 bytes of header each (80 here); LPM tries two
 * nodes per entry (the intermediate nodes, which the kernel's own figure
 * leaves out); ring buffers their data plus header pages and the page
 * table. Maps that don't preallocate are counted as full, which they can
 * become, with kmalloc's sizes and the elements their allocator caches on
 * every CPU (per-CPU values in each of those too).
 */
uint64_t policy_map_memory_estimate(const struct object_map *m, unsigned n_cpus)
{
	uint64_t key = ((uint64_t)m->key_size + 7) & ~7ull;
	uint64_t value = ((uint64_t)m->value_size + 7) & ~7ull;
	uint64_t n = m->max_entries, cpus = n_cpus ? n_cpus : 1;

	switch (m->map_type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return u64_add_sat(8192, u64_mul_sat(n, value ? value : 8));
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return u64_add_sat(8192, u64_mul_sat(n, u64_add_sat(8, u64_mul_sat(value, cpus))));
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE: {
		uint64_t elem = kmalloc_size(key + 88), n_values = n;

		/* Without preallocation the elements and the per-CPU values are cached per CPU. */
		if (m->map_flags & BPF_F_NO_PREALLOC) {
			n = u64_add_sat(n, u64_mul_sat(cpus, mem_alloc_cached(elem)));
			n_values =
				u64_add_sat(n_values, u64_mul_sat(cpus, mem_alloc_cached(value)));
		}
		return u64_add_sat(u64_add_sat(8192, hash_buckets(m->max_entries)),
				   u64_add_sat(u64_mul_sat(n, elem),
					       u64_mul_sat(n_values, u64_mul_sat(value, cpus))));
	}
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return u64_add_sat(u64_add_sat(n, n / 256), 20480);
	case BPF_MAP_TYPE_LPM_TRIE: {
		uint64_t node = kmalloc_size(key + value + 48);

		/* LPM tries never preallocate: their nodes come from bpf_mem_alloc() too. */
		return u64_add_sat(
			8192, u64_mul_sat(u64_add_sat(u64_mul_sat(n, 2),
						      u64_mul_sat(cpus, mem_alloc_cached(node))),
					  node));
	}
	default: {
		uint64_t elem = kmalloc_size(key + value + 80);

		if (m->map_flags & BPF_F_NO_PREALLOC)
			n = u64_add_sat(n, u64_mul_sat(cpus, mem_alloc_cached(elem)));
		return u64_add_sat(u64_add_sat(8192, hash_buckets(m->max_entries)),
				   u64_mul_sat(n, elem));
	}
	}
}

/* A map of maps' inner map is estimated as a map of its own (inner_*). */
uint64_t policy_map_inner_memory_estimate(const struct object_map *m, unsigned n_cpus)
{
	const struct object_map inner = {
		.map_type = m->inner_map_type,
		.key_size = m->inner_key_size,
		.value_size = m->inner_value_size,
		.max_entries = m->inner_max_entries,
		.map_flags = m->inner_map_flags,
	};

	return m->inner_map_type ? policy_map_memory_estimate(&inner, n_cpus) : 0;
}
