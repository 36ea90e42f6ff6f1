// SPDX-License-Identifier: MIT
/*
 * Vetted objects (vetted.h): manifests and a rule's "objects" and "digests" parsed, and the
 * grant one vetted object's load gets.
 */
#include "vetted.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * What a vetted object may declare: its own code's needs. Not "shared" (other users' maps),
 * "test_run_types", "pinning" (maps that outlive the object) or "load_with_perfmon", and of
 * "attach" only cgroup attach types; of "limits" only the per-object ones, since a vetted
 * object counts against its user's own quotas.
 */
static const char *const allow_keys[] = {"program_types",  "program_fds", "map_types",
					 "helper_classes", "maps",	  "maps_of_maps",
					 "attach"};
static const char *const attach_keys[] = {"cgroups"};
static const char *const limit_keys[] = {"max_object_bytes", "max_insns_per_program",
					 "max_programs", "max_maps", "max_map_entries"};

bool policy_digest_is_valid(const char *s)
{
	const size_t prefix = strlen(POLICY_DIGEST_PREFIX);

	return s && strlen(s) == POLICY_DIGEST_SIZE - 1 &&
	       strncmp(s, POLICY_DIGEST_PREFIX, prefix) == 0 &&
	       strspn(s + prefix, "0123456789abcdef") == SHA256_HEX_SIZE - 1;
}

static void vetted_done(struct policy_vetted *v)
{
	free(v->manifest);
	if (v->rule) {
		rule_done(v->rule);
		free(v->rule);
	}
	*v = (struct policy_vetted){};
}

struct policy_vetted *policy_vetted_free(struct policy_vetted *v)
{
	if (v) {
		vetted_done(v);
		free(v);
	}
	return NULL;
}

uint64_t policy_vetted_max_object_bytes(const struct policy_vetted *v)
{
	return v && v->rule ? v->rule->limits.max_object_bytes : 0;
}

void vetted_list_free(struct policy_vetted *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vetted_done(&v[i]);
	free(v);
}

/* A section of o, if present, may have only these keys (checked before the section's parser). */
static int check_section_keys(struct parse_ctx *c, const char *parent, json_object *o,
			      const char *key, const char *const *keys, size_t n_keys)
{
	char path[JPATH_MAX];
	json_object *s;

	path_key(path, parent, key);
	if (!json_object_object_get_ex(o, key, &s) || !json_object_is_type(s, json_type_object))
		return 0;
	return expect_object(c, path, s, keys, n_keys);
}

/*
 * A vetted object's grants, the members of o (a manifest, or an inline "digests" entry): the
 * keys of a rule's "allow" it may have, and "limits"; extra (a manifest's own keys) besides.
 */
static int parse_vetted_grants(struct parse_ctx *c, const char *path, json_object *o,
			       const char *const *extra, size_t n_extra, struct policy_vetted *v)
{
	const char *keys[ARRAY_SIZE(allow_keys) + 1 + 2];
	size_t n = 0;
	int r;

	assert(n_extra <= 2);
	for (size_t i = 0; i < ARRAY_SIZE(allow_keys); i++)
		keys[n++] = allow_keys[i];
	keys[n++] = "limits";
	for (size_t i = 0; i < n_extra; i++)
		keys[n++] = extra[i];
	/* A manifest's members are at the top: no path for messages, "" to build paths on. */
	r = expect_object(c, path, o, keys, n);
	path = path ?: "";
	if (r >= 0)
		r = check_section_keys(c, path, o, "attach", attach_keys, ARRAY_SIZE(attach_keys));
	if (r >= 0)
		r = check_section_keys(c, path, o, "limits", limit_keys, ARRAY_SIZE(limit_keys));
	if (r < 0)
		return r;
	v->rule = calloc(1, sizeof(*v->rule));
	if (!v->rule)
		return -ENOMEM;
	r = parse_allow_keys(c, path, o, v->rule);
	if (r >= 0 && v->rule->program_fd_types)
		r = parse_fail(
			c, path,
			"\"program_fds\": a vetted object's program fds are never handed out "
			"(with one its holder could test-run the programs): leave it out");
	if (r >= 0)
		r = parse_limits(c, path, o, v->rule);
	return r;
}

static int parse_digest_string(struct parse_ctx *c, const char *path, const char *s, char *ret)
{
	char pbuf[PRINTABLE_BUF];

	if (!policy_digest_is_valid(s))
		return parse_fail(c, path,
				  "\"%s\" is not a digest (expected \"sha256:\" and 64 lowercase "
				  "hex digits)",
				  printable(pbuf, s));
	memcpy(ret, s, POLICY_DIGEST_SIZE);
	return 0;
}

int policy_manifest_parse(const char *file_name, const char *json, struct policy_vetted **ret,
			  char **error)
{
	static const char *const keys[] = {"digest", "description"};
	struct parse_ctx c = {.file = file_name, .error = error};
	_cleanup_json_ json_object *root = NULL;
	struct policy_vetted *v;
	json_object *d;
	int r;

	if (!file_name || !json || !ret)
		return -EINVAL;
	r = parse_json_file(&c, json, POLICY_MAX_MANIFEST_BYTES, &root);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(root, "digest", &d))
		return parse_fail(&c, NULL, "missing key \"digest\"");
	r = expect_type(&c, "digest", d, json_type_string);
	if (r < 0)
		return r;
	if (json_object_object_get_ex(root, "description", &d)) {
		r = expect_type(&c, "description", d, json_type_string);
		if (r < 0)
			return r;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	json_object_object_get_ex(root, "digest", &d);
	r = parse_digest_string(&c, "digest", json_object_get_string(d), v->digest);
	if (r >= 0)
		r = parse_vetted_grants(&c, NULL, root, keys, ARRAY_SIZE(keys), v);
	if (r < 0) {
		policy_vetted_free(v);
		return r;
	}
	*ret = v;
	return 0;
}

/* "objects": ["NAME", ...], system objects by name. */
static int parse_objects(struct parse_ctx *c, const char *path, json_object *arr,
			 struct policy_rule *out)
{
	size_t n = json_object_array_length(arr);
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	int r;

	if (n == 0)
		return 0;
	out->objects = calloc(n, sizeof(*out->objects));
	if (!out->objects)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *s;

		path_index(epath, path, i);
		r = expect_type(c, epath, e, json_type_string);
		if (r < 0)
			return r;
		s = json_object_get_string(e);
		if (!parse_object_name_is_valid(s))
			return parse_fail(c, epath,
					  "\"%s\" is not a system object name (1 to %d of A-Z a-z "
					  "0-9 _ -, not starting with -)",
					  printable(pbuf, s), POLICY_MAX_OBJECT_NAME);
		out->objects[out->n_objects] = strdup(s);
		if (!out->objects[out->n_objects])
			return -ENOMEM;
		out->n_objects++;
	}
	return 0;
}

/* "digests": {"sha256:HEX": "MANIFEST-NAME" | {grants, as a manifest has them}, ...}. */
static int parse_digests(struct parse_ctx *c, const char *path, json_object *obj,
			 struct policy_rule *out)
{
	size_t n = (size_t)json_object_object_length(obj);
	char epath[JPATH_MAX], pbuf[PRINTABLE_BUF];
	int r;

	if (n == 0)
		return 0;
	out->digests = calloc(n, sizeof(*out->digests));
	if (!out->digests)
		return -ENOMEM;
	json_object_object_foreach (obj, key, val) {
		struct policy_vetted *v = &out->digests[out->n_digests++];

		path_key(epath, path, key);
		r = parse_digest_string(c, path, key, v->digest);
		if (r < 0)
			return r;
		if (json_object_is_type(val, json_type_string)) {
			const char *s = json_object_get_string(val);

			if (!parse_object_name_is_valid(s))
				return parse_fail(c, epath,
						  "\"%s\" is not a system object name (1 to %d of "
						  "A-Z a-z 0-9 _ -, not starting with -)",
						  printable(pbuf, s), POLICY_MAX_OBJECT_NAME);
			v->manifest = strdup(s);
			if (!v->manifest)
				return -ENOMEM;
			continue;
		}
		if (!json_object_is_type(val, json_type_object))
			return parse_fail(c, epath,
					  "expected a system object's name or an object of "
					  "grants (as in a manifest), got %s",
					  json_type_phrase(json_object_get_type(val)));
		r = parse_vetted_grants(c, epath, val, NULL, 0, v);
		if (r < 0)
			return r;
	}
	return 0;
}

int parse_vetted_keys(struct parse_ctx *c, const char *path, json_object *allow,
		      struct policy_rule *out)
{
	char kpath[JPATH_MAX];
	json_object *v;
	int r;

	r = get_array(c, path, allow, "objects", &v, kpath);
	if (r < 0)
		return r;
	if (v) {
		r = parse_objects(c, kpath, v, out);
		if (r < 0)
			return r;
	}
	path_key(kpath, path, "digests");
	if (!json_object_object_get_ex(allow, "digests", &v))
		return 0;
	r = expect_type(c, kpath, v, json_type_object);
	if (r < 0)
		return r;
	return parse_digests(c, kpath, v, out);
}

bool policy_grant_object(const struct policy_grant *g, const char *name)
{
	for (size_t i = 0; g && i < g->n_objects; i++)
		if (strcmp(g->objects[i], name) == 0)
			return true;
	return false;
}

const struct policy_vetted *policy_grant_digest(const struct policy_grant *g, const char *digest)
{
	for (size_t i = 0; g && i < g->n_digests; i++)
		if (strcmp(g->digests[i]->digest, digest) == 0)
			return g->digests[i];
	return NULL;
}

/* The limits of a vetted object's own code; the rest are the user's quotas. */
static bool limit_is_per_object(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(limit_keys); i++)
		if (strcmp(limit_keys[i], key) == 0)
			return true;
	return false;
}

int policy_grant_vetted(const struct policy_grant *g, const struct policy_vetted *v,
			const char *source, struct policy_grant **ret)
{
	const struct policy_rule *rule = v ? v->rule : NULL;
	struct policy_grant *e;
	struct policy_grant_maps *m;

	if (!g || !rule || !source || !ret)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->matched = true;
	e->vetted = true;
	e->uid = g->uid;
	e->program_types = rule->program_types;
	/* None: a vetted object's programs are never handed out (policy_grant_prog_fd()). */
	e->program_fd_types = 0;
	e->map_types = rule->map_types | POLICY_DEFAULT_MAP_TYPES;
	e->helper_classes = rule->helper_classes;
	e->attach.cgroup_attach_types = rule->attach.cgroup_attach_types;
	e->limits = g->limits;
	for (size_t i = 0; i < ARRAY_SIZE(limit_fields); i++)
		if (limit_is_per_object(limit_fields[i].key))
			*limit_ptr(&e->limits, &limit_fields[i]) =
				limit_get(&rule->limits, &limit_fields[i]);
	e->sources = calloc(1, sizeof(*e->sources));
	e->map_rules = calloc(1, sizeof(*e->map_rules));
	if (!e->sources || !e->map_rules)
		goto fail;
	e->sources[0] = strdup(source);
	if (!e->sources[0])
		goto fail;
	e->n_sources = 1;
	m = &e->map_rules[0];
	e->n_map_rules = 1;
	if (rule->n_maps) {
		m->patterns = calloc(rule->n_maps, sizeof(*m->patterns));
		if (!m->patterns)
			goto fail;
		for (size_t i = 0; i < rule->n_maps; i++) {
			m->patterns[i].glob = strdup(rule->maps[i].glob);
			if (!m->patterns[i].glob)
				goto fail;
			m->patterns[i].access = rule->maps[i].access;
			m->n_patterns++;
		}
	}
	*ret = e;
	return 0;
fail:
	policy_grant_free(e);
	return -ENOMEM;
}
