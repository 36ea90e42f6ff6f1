/* SPDX-License-Identifier: MIT */
/*
 * Vetted objects' parsing and grants (policy/vetted.h): manifests, the policy's "objects" and
 * "digests", and the grant a vetted object's load gets (its own rights and per-object limits,
 * the user's quotas).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/libbpf.h>

#include "policy/policy.h"
#include "policy/vetted.h"

#define DIGEST "sha256:e3d328bcd62f1da21edfdf990551c7c398c9078e09e96bbefa3595767815bfeb"
#define DIGEST2 "sha256:0000000000000000000000000000000000000000000000000000000000000001"

#define MANIFEST(body) "{\"digest\": \"" DIGEST "\"" body "}"

static struct policy_vetted *manifest_ok(const char *json)
{
	struct policy_vetted *v = NULL;
	char *error = NULL;
	int r = policy_manifest_parse("m.json", json, &v, &error);

	if (r < 0)
		fail_msg("policy_manifest_parse: %d: %s", r, error ?: "(no message)");
	assert_non_null(v);
	return v;
}

static void manifest_error(const char *json, const char *expected)
{
	struct policy_vetted *v = NULL;
	char *error = NULL;
	int r = policy_manifest_parse("m.json", json, &v, &error);

	assert_true(r < 0);
	assert_null(v);
	assert_non_null(error);
	if (strcmp(error, expected) != 0)
		fail_msg("error for %s:\n  got:      %s\n  expected: %s", json, error, expected);
	free(error);
}

static void test_manifest_parse(void **state)
{
	struct policy_vetted *v = manifest_ok(
		MANIFEST(", \"description\": \"d\", \"program_types\": [\"cgroup_skb\"],"
			 " \"helper_classes\": [\"base\"], \"maps\": [{\"name\": \"c\", "
			 "\"access\": \"ro\"}],"
			 " \"attach\": {\"cgroups\": [\"cgroup_inet_egress\"]}, \"limits\": "
			 "{\"max_programs\": 2}"));

	assert_string_equal(v->digest, DIGEST);
	assert_null(v->manifest);
	/* No max_object_bytes of its own: the built-in default bounds its size. */
	assert_int_equal(policy_vetted_max_object_bytes(v), POLICY_DEFAULT_MAX_OBJECT_BYTES);
	policy_vetted_free(v);
	/* Grants nothing, but is a manifest. */
	policy_vetted_free(manifest_ok(MANIFEST("")));
}

static void test_manifest_errors(void **state)
{
	manifest_error("{}", "m.json: missing key \"digest\"");
	manifest_error("[]", "m.json: expected an object at the top level, got an array");
	manifest_error("{\"digest\": \"sha256:AB\"}",
		       "m.json: digest: \"sha256:AB\" is not a digest (expected \"sha256:\" and 64 "
		       "lowercase hex digits)");
	manifest_error("{\"digest\": 1}", "m.json: digest: expected a string, got an integer");
	/* What a vetted object cannot grant itself: other users' maps, pins, perfmon, tests. */
	manifest_error(MANIFEST(", \"shared\": []"),
		       "m.json: unknown key \"shared\" (expected program_types, program_fds, "
		       "map_types, helper_classes, maps, maps_of_maps, attach, limits, digest or "
		       "description)");
	manifest_error(MANIFEST(", \"pinning\": true"),
		       "m.json: unknown key \"pinning\" (expected program_types, program_fds, "
		       "map_types, helper_classes, maps, maps_of_maps, attach, limits, digest or "
		       "description)");
	manifest_error(MANIFEST(", \"objects\": [\"x\"]"),
		       "m.json: unknown key \"objects\" (expected program_types, program_fds, "
		       "map_types, helper_classes, maps, maps_of_maps, attach, limits, digest or "
		       "description)");
	/* Nor program fds: with one, its holder could test-run the programs. */
	manifest_error(MANIFEST(", \"program_types\": [\"cgroup_skb\"], \"program_fds\": "
				"[\"cgroup_skb\"]"),
		       "m.json: \"program_fds\": a vetted object's program fds are never handed "
		       "out (with one its holder could test-run the programs): leave it out");
	manifest_error(MANIFEST(", \"attach\": {\"uprobes\": true}"),
		       "m.json: attach: unknown key \"uprobes\" (expected cgroups)");
	/* Quotas are the user's, never a manifest's. */
	manifest_error(MANIFEST(", \"limits\": {\"max_named_objects\": 100}"),
		       "m.json: limits: unknown key \"max_named_objects\" (expected "
		       "max_object_bytes, max_insns_per_program, max_programs, max_maps or "
		       "max_map_entries)");
	/* The ordinary parsers, with the manifest's paths. */
	manifest_error(
		MANIFEST(", \"program_types\": [\"nope\"]"),
		"m.json: program_types[0]: unknown program type \"nope\" (expected a libbpf "
		"name such as socket_filter, kprobe, tracepoint, raw_tracepoint, cgroup_skb, "
		"sched_cls or xdp)");
	manifest_error(MANIFEST(", \"limits\": {\"max_programs\": 1000}"),
		       "m.json: limits.max_programs: 1000 is over the hard ceiling of 128");
	manifest_error(MANIFEST(", \"digest\": \"" DIGEST "\""),
		       "m.json: duplicate key \"digest\"");
}

static struct policy *load(const char *json)
{
	struct policy *p = policy_new();
	char *error = NULL;
	int r;

	assert_non_null(p);
	r = policy_load_string(p, "t.json", json, NULL, NULL, &error);
	if (r < 0)
		fail_msg("policy_load_string: %d: %s", r, error ?: "(no message)");
	return p;
}

static void policy_error(const char *json, const char *expected)
{
	struct policy *p = policy_new();
	char *error = NULL;

	assert_true(policy_load_string(p, "e.json", json, NULL, NULL, &error) < 0);
	assert_non_null(error);
	if (strcmp(error, expected) != 0)
		fail_msg("error for %s:\n  got:      %s\n  expected: %s", json, error, expected);
	free(error);
	policy_free(p);
}

#define ALLOW(body) "{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{" body "}}]}"

static void test_policy_keys(void **state)
{
	policy_error(
		ALLOW("\"objects\": [\"../x\"]"),
		"e.json: rules[0].allow.objects[0]: \"../x\" is not a system object name (1 to "
		"64 of A-Z a-z 0-9 _ -, not starting with -)");
	policy_error(ALLOW("\"objects\": [\"\"]"),
		     "e.json: rules[0].allow.objects[0]: \"\" is not a system object name (1 to 64 "
		     "of A-Z a-z 0-9 _ -, not starting with -)");
	policy_error(ALLOW("\"objects\": \"x\""),
		     "e.json: rules[0].allow.objects: expected an array, got a string");
	policy_error(ALLOW("\"digests\": {\"sha256:00\": \"x\"}"),
		     "e.json: rules[0].allow.digests: \"sha256:00\" is not a digest (expected "
		     "\"sha256:\" and 64 lowercase hex digits)");
	policy_error(ALLOW("\"digests\": {\"" DIGEST "\": \"a/b\"}"),
		     "e.json: rules[0].allow.digests." DIGEST ": \"a/b\" is not a system object "
		     "name (1 to 64 of A-Z a-z 0-9 _ -, not starting with -)");
	policy_error(ALLOW("\"digests\": {\"" DIGEST "\": 1}"),
		     "e.json: rules[0].allow.digests." DIGEST ": expected a system object's name "
		     "or an object of grants (as in a manifest), got an integer");
	policy_error(ALLOW("\"digests\": {\"" DIGEST "\": {\"pinning\": true}}"),
		     "e.json: rules[0].allow.digests." DIGEST ": unknown key \"pinning\" (expected "
		     "program_types, program_fds, map_types, helper_classes, maps, maps_of_maps, "
		     "attach or limits)");
	policy_error(ALLOW("\"digests\": {\"" DIGEST "\": {\"digest\": \"" DIGEST "\"}}"),
		     "e.json: rules[0].allow.digests." DIGEST ": unknown key \"digest\" (expected "
		     "program_types, program_fds, map_types, helper_classes, maps, maps_of_maps, "
		     "attach or limits)");
}

static void test_grants(void **state)
{
	struct policy *p = load(
		"{\"rules\":["
		" {\"match\":{\"uids\":[\"1\"]},\"allow\":{\"program_types\":[\"socket_filter\"],"
		"  \"maps\":[{\"name\":\"*\",\"access\":\"rw\"}],\"objects\":[\"a\",\"b\"],"
		"  \"digests\":{\"" DIGEST "\":\"a\",\"" DIGEST2
		"\":{\"program_types\":[\"cgroup_skb\"],"
		"   \"maps\":[{\"name\":\"c\",\"access\":\"ro\"}],"
		"   \"attach\":{\"cgroups\":[\"cgroup_inet_egress\"]},"
		"   \"limits\":{\"max_programs\":2,\"max_object_bytes\":4096}}}},"
		"  \"limits\":{\"max_named_objects\":3,\"max_programs\":5}},"
		" {\"match\":{\"uids\":[\"2\"]},\"allow\":{\"objects\":[\"c\"]}}]}");
	struct policy_identity id = {.uid = 1, .gid = 1};
	struct policy_grant *g = NULL, *e = NULL;
	const struct policy_vetted *v;

	assert_int_equal(policy_resolve(p, &id, &g), 0);
	assert_true(policy_grant_object(g, "a"));
	assert_true(policy_grant_object(g, "b"));
	assert_false(policy_grant_object(g, "c")); /* uid 2's */
	v = policy_grant_digest(g, DIGEST);
	assert_non_null(v);
	assert_string_equal(v->manifest, "a");
	/* A manifest's name: its size limit is the manifest's, not known here. */
	assert_int_equal(policy_vetted_max_object_bytes(v), 0);
	assert_null(policy_grant_digest(g, "sha256:00"));
	v = policy_grant_digest(g, DIGEST2);
	assert_non_null(v);
	assert_null(v->manifest);
	assert_int_equal(policy_vetted_max_object_bytes(v), 4096);

	assert_int_equal(policy_grant_vetted(g, v, "digest x", &e), 0);
	/* The vetted object's rights only: not the user's socket_filter, nor its "*": rw. */
	assert_true(policy_grant_prog_type(e, BPF_PROG_TYPE_CGROUP_SKB));
	assert_false(policy_grant_prog_type(e, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_int_equal(policy_grant_map_access(e, "c"), MAP_ACCESS_RO);
	assert_int_equal(policy_grant_map_access(e, "other"), MAP_ACCESS_NONE);
	assert_true(policy_grant_attach_cgroup(e, BPF_CGROUP_INET_EGRESS));
	assert_false(policy_grant_attach_cgroup(e, BPF_CGROUP_INET_INGRESS));
	/* Per-object limits its own; quotas the user's. */
	assert_int_equal(e->limits.max_programs, 2);
	assert_int_equal(e->limits.max_object_bytes, 4096);
	assert_int_equal(e->limits.max_named_objects, 3);
	assert_false(policy_grant_object(e, "a"));
	assert_int_equal(e->n_sources, 1);
	assert_string_equal(e->sources[0], "digest x");
	/* Marked, so that its programs are never test-run; the user's own grant is not. */
	assert_true(e->vetted);
	assert_false(g->vetted);
	policy_grant_free(e);
	policy_grant_free(g);
	policy_free(p);
}

static void test_names(void **state)
{
	char long_name[POLICY_MAX_OBJECT_NAME + 2];

	assert_true(parse_object_name_is_valid("ip-firewall_2"));
	assert_false(parse_object_name_is_valid(""));
	assert_false(parse_object_name_is_valid(NULL));
	assert_false(parse_object_name_is_valid("-x"));
	assert_false(parse_object_name_is_valid(".."));
	assert_false(parse_object_name_is_valid("a/b"));
	assert_false(parse_object_name_is_valid("a.b"));
	memset(long_name, 'a', sizeof(long_name));
	long_name[POLICY_MAX_OBJECT_NAME] = '\0';
	assert_true(parse_object_name_is_valid(long_name));
	long_name[POLICY_MAX_OBJECT_NAME] = 'a';
	long_name[POLICY_MAX_OBJECT_NAME + 1] = '\0';
	assert_false(parse_object_name_is_valid(long_name));
	assert_true(policy_digest_is_valid(DIGEST));
	assert_false(policy_digest_is_valid("sha256:E3D328BCD62F1DA21EDFDF990551C7C398C9078E09E96BB"
					    "EFA3595767815BFEB"));
	assert_false(policy_digest_is_valid(DIGEST "0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_parse), cmocka_unit_test(test_manifest_errors),
		cmocka_unit_test(test_policy_keys),    cmocka_unit_test(test_grants),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
