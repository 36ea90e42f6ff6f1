// SPDX-License-Identifier: MIT
/*
 * One policy file's text into rules ("rules": [{"match", "allow", "limits"}]),
 * appended to a policy, and the rules' memory.
 *
 * Parsing is strict: unknown keys, duplicate keys, wrong types and values
 * over the hard ceilings are errors naming the file and the JSON path, so a
 * typo can neither silently weaken nor silently strengthen a policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "internal.h"
#include "policy.h"

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void attach_done(struct policy_attach *a)
{
	strv_free(a->tracepoints, a->n_tracepoints);
	strv_free(a->raw_tracepoints, a->n_raw_tracepoints);
	strv_free(a->interfaces, a->n_interfaces);
	strv_free(a->host_interfaces, a->n_host_interfaces);
	*a = (struct policy_attach){};
}

void shared_free(struct policy_share_rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].object);
		free(v[i].map);
	}
	free(v);
}

void rule_done(struct policy_rule *r)
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
	strv_free(r->objects, r->n_objects);
	vetted_list_free(r->digests, r->n_digests);
	*r = (struct policy_rule){};
}

static int parse_rule(struct parse_ctx *c, json_object *o, size_t index, struct policy_rule *ret)
{
	static const char *const keys[] = {"match", "allow", "limits"};
	_cleanup_(rule_done) struct policy_rule rule = {};
	char path[JPATH_MAX];
	int r;

	snprintf(path, sizeof(path), "rules[%zu]", index);
	r = expect_object(c, path, o, keys, ARRAY_SIZE(keys));
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
	r = parse_json_file(&c, json, POLICY_MAX_FILE_BYTES, &root);
	if (r < 0)
		return r;
	r = expect_object(&c, NULL, root, keys, ARRAY_SIZE(keys));
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
