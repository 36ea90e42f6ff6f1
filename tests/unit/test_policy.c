// SPDX-License-Identifier: MIT
/*
 * Unit tests for policy/ (policy.h): parsing (including every kind of parse
 * error), matching, combination of rules, loading a drop-in directory and
 * decisions on object descriptions.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <bpf/btf.h>
#include <linux/bpf.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/macro.h"
#include "policy/attach_type.h"
#include "policy/policy.h"
#include "policy/verdict.h"

#define MAX_WARNINGS 16

struct warnings {
	char *msgs[MAX_WARNINGS];
	size_t n;
};

static void collect_warning(void *userdata, const char *message)
{
	struct warnings *w = userdata;

	if (w->n < MAX_WARNINGS)
		w->msgs[w->n++] = strdup(message);
}

static void warnings_done(struct warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->msgs[i]);
	w->n = 0;
}

static bool warnings_contain(const struct warnings *w, const char *text)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->msgs[i] && strstr(w->msgs[i], text))
			return true;
	return false;
}

/* Parse json as file "t.json" into a new policy; fails the test on errors. */
static struct policy *load(const char *json, struct warnings *w)
{
	struct policy *p = policy_new();
	char *error = NULL;
	int r;

	assert_non_null(p);
	r = policy_load_string(p, "t.json", json, w ? collect_warning : NULL, w, &error);
	if (r < 0)
		fail_msg("policy_load_string: %d: %s", r, error ? error : "(no message)");
	return p;
}

static struct policy_grant *resolve(const struct policy *p, uid_t uid, gid_t gid,
				    const gid_t *groups, size_t n_groups)
{
	struct policy_identity id = {
		.uid = uid,
		.gid = gid,
		.groups = groups,
		.n_groups = n_groups,
	};
	struct policy_grant *g = NULL;

	assert_int_equal(policy_resolve(p, &id, &g), 0);
	assert_non_null(g);
	return g;
}

static bool matches_uid(const struct policy *p, uid_t uid)
{
	struct policy_grant *g = resolve(p, uid, 12345, NULL, 0);
	bool m = g->matched;

	policy_grant_free(g);
	return m;
}

static const char *example_dir(char *buf, size_t size)
{
	static const char *const candidates[] = {"examples/policy.d", "../examples/policy.d",
						 "../../examples/policy.d"};
	const char *src = getenv("BPFBROKER_TEST_SRC_DIR");

	if (src) {
		snprintf(buf, size, "%s/examples/policy.d", src);
		return buf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		snprintf(buf, size, "%s/50-example.json", candidates[i]);
		if (access(buf, R_OK) == 0) {
			snprintf(buf, size, "%s", candidates[i]);
			return buf;
		}
	}
	fail_msg("examples/policy.d not found; set BPFBROKER_TEST_SRC_DIR");
	return NULL;
}

/* ---- The shipped example ---- */

static void test_example_file(void **state)
{
	struct warnings w = {};
	struct policy *p = NULL;
	struct policy_grant *g;
	char *error = NULL;
	char dir[PATH_MAX];

	assert_int_equal(
		policy_load_dir(example_dir(dir, sizeof(dir)), collect_warning, &w, &p, &error), 0);
	assert_null(error);
	/* 50-example.json, 60-rootless-containers.json and 70-user-network.json, one rule each. */
	assert_int_equal(policy_n_rules(p), 3);
	if (!getpwnam("netmon"))
		assert_true(warnings_contain(
			&w, "50-example.json: rules[0].match.users: no user \"netmon\"; this entry "
			    "never matches"));
	if (!getgrnam("bpf-users"))
		assert_true(warnings_contain(&w, "50-example.json: rules[0].match.groups: no group "
						 "\"bpf-users\"; this entry never matches"));

	assert_true(matches_uid(p, 65534));
	assert_true(matches_uid(p, 100000));
	assert_true(matches_uid(p, 123456));
	assert_true(matches_uid(p, 165535));
	assert_false(matches_uid(p, 165536));
	assert_false(matches_uid(p, 99999));
	assert_false(matches_uid(p, 65533));
	assert_false(matches_uid(p, 0));

	g = resolve(p, 100000, 100000, NULL, 0);
	assert_true(g->matched);
	assert_int_equal(g->n_sources, 1);
	assert_string_equal(g->sources[0], "50-example.json:rules[0]");
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_CGROUP_SKB));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	/* socket_filter fds are always handed out, cgroup_skb ones only if listed. */
	assert_true(policy_grant_prog_fd(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_false(policy_grant_prog_fd(g, BPF_PROG_TYPE_CGROUP_SKB));
	assert_false(policy_grant_prog_fd(g, BPF_PROG_TYPE_KPROBE));
	assert_true(g->helper_classes == HELPER_CLASS_BIT(HELPER_CLASS_BASE));
	assert_false(g->pinning);
	assert_int_equal(policy_grant_map_access(g, "config_x"), MAP_ACCESS_RO);
	assert_int_equal(policy_grant_map_access(g, "config"), MAP_ACCESS_RO);
	assert_int_equal(policy_grant_map_access(g, "secret"), MAP_ACCESS_NONE);
	assert_int_equal(policy_grant_map_access(g, "secrets"), MAP_ACCESS_RW);
	assert_int_equal(policy_grant_map_access(g, "counters"), MAP_ACCESS_RW);
	assert_int_equal(g->limits.max_object_bytes, 1048576);
	assert_int_equal(g->limits.max_insns_per_program, 4096);
	assert_int_equal(g->limits.max_programs, 8);
	assert_int_equal(g->limits.max_maps, POLICY_DEFAULT_MAX_MAPS);
	assert_int_equal(g->limits.max_map_entries, 65536);
	policy_grant_free(g);

	warnings_done(&w);
	policy_free(p);
}

/*
 * The rootless containers' example (bpfbroker-oci-hook): the host's users get
 * device programs and their attach, their subordinate uid ranges nothing of it.
 */
static void test_rootless_example(void **state)
{
	static const uid_t users[] = {1000, 1001, 60000},
			   others[] = {0, 999, 60001, 100000, 165535};
	struct policy *p = NULL;
	struct policy_grant *g;
	char *error = NULL;
	char dir[PATH_MAX];

	assert_int_equal(policy_load_dir(example_dir(dir, sizeof(dir)), NULL, NULL, &p, &error), 0);
	for (size_t i = 0; i < ARRAY_SIZE(users); i++) {
		g = resolve(p, users[i], users[i], NULL, 0);
		assert_true(g->matched);
		assert_string_equal(g->sources[0], "60-rootless-containers.json:rules[0]");
		assert_int_equal(g->program_types, 1ull << BPF_PROG_TYPE_CGROUP_DEVICE);
		assert_int_equal(g->helper_classes, 0);
		assert_int_equal(g->program_fd_types, 0);
		assert_true(policy_grant_attach_cgroup(g, BPF_CGROUP_DEVICE));
		assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_INET_EGRESS));
		assert_int_equal(g->limits.max_named_objects, 256);
		assert_int_equal(g->limits.max_attachments, 256);
		policy_grant_free(g);
	}
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		g = resolve(p, others[i], others[i], NULL, 0);
		assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_CGROUP_DEVICE));
		assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_DEVICE));
		policy_grant_free(g);
	}
	policy_free(p);
}

/*
 * The --user units' network example (bpfctl net, bpfbroker-user-net): the host's users get
 * the three network objects by name and quotas for a few units, and nothing else.
 */
static void test_user_network_example(void **state)
{
	struct policy *p = NULL;
	struct policy_grant *g;
	char *error = NULL;
	char dir[PATH_MAX];

	assert_int_equal(policy_load_dir(example_dir(dir, sizeof(dir)), NULL, NULL, &p, &error), 0);
	g = resolve(p, 1000, 1000, NULL, 0);
	assert_true(g->matched);
	assert_int_equal(g->n_objects, 3);
	assert_string_equal(g->objects[0], "ip-firewall");
	assert_string_equal(g->objects[1], "restrict-ifaces");
	assert_string_equal(g->objects[2], "socket-bind");
	assert_int_equal(g->limits.max_named_objects, 256); /* the rootless example's, larger */
	policy_grant_free(g);
	/* The same file alone: no program type, class, map or attach type of its own. */
	policy_free(p);
	p = NULL;
	{
		char path[PATH_MAX + 64], text[2048];
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/70-user-network.json", dir);
		f = fopen(path, "re");
		assert_non_null(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		p = load(text, NULL);
	}
	g = resolve(p, 60000, 60000, NULL, 0);
	assert_true(g->matched);
	assert_int_equal(g->n_objects, 3);
	assert_int_equal(g->program_types, 0);
	assert_int_equal(g->helper_classes, 0);
	assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_INET_EGRESS));
	assert_int_equal(policy_grant_map_access(g, "ipv4_allow"), MAP_ACCESS_NONE);
	assert_int_equal(g->limits.max_named_objects, 48);
	assert_int_equal(g->limits.max_attachments, 96);
	policy_grant_free(g);
	g = resolve(p, 60001, 60001, NULL, 0);
	assert_false(g->matched);
	assert_int_equal(g->n_objects, 0);
	policy_grant_free(g);
	policy_free(p);
}

static void test_limits_default(void **state)
{
	struct policy *p =
		load("{\"rules\":[{\"match\":{\"uids\":[7]},\"limits\":{\"max_maps\":3}}]}", NULL);
	struct policy_grant *g = resolve(p, 7, 7, NULL, 0);

	assert_true(g->matched);
	assert_int_equal(g->limits.max_object_bytes, POLICY_DEFAULT_MAX_OBJECT_BYTES);
	assert_int_equal(g->limits.max_insns_per_program, POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM);
	assert_int_equal(g->limits.max_programs, POLICY_DEFAULT_MAX_PROGRAMS);
	assert_int_equal(g->limits.max_maps, 3);
	assert_int_equal(g->limits.max_map_entries, POLICY_DEFAULT_MAX_MAP_ENTRIES);
	/* No allow section: matched, but nothing granted. */
	assert_int_equal(g->program_types, 0);
	assert_int_equal(g->helper_classes, 0);
	assert_int_equal(policy_grant_map_access(g, "x"), MAP_ACCESS_NONE);
	policy_grant_free(g);
	policy_free(p);
}

/* ---- Matching ---- */

static void test_unknown_names(void **state)
{
	struct warnings w = {};
	struct policy *p;

	p = load("{\"rules\":[{\"match\":{\"users\":[\"no-such-user-zz9\"],"
		 "\"groups\":[\"no-such-group-zz9\"]},"
		 "\"allow\":{\"program_types\":[\"socket_filter\"]}}]}",
		 &w);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.msgs[0],
			    "t.json: rules[0].match.users: no user \"no-such-user-zz9\"; "
			    "this entry never matches");
	assert_string_equal(w.msgs[1], "t.json: rules[0].match.groups: no group "
				       "\"no-such-group-zz9\"; this entry never matches");
	assert_false(matches_uid(p, 0));
	assert_false(matches_uid(p, 1000));
	assert_false(matches_uid(p, 65534));
	warnings_done(&w);
	policy_free(p);
}

static void test_empty_match(void **state)
{
	struct warnings w = {};
	struct policy *p;

	p = load("{\"rules\":[{\"allow\":{\"program_types\":[\"socket_filter\"]}},"
		 "{\"match\":{},\"allow\":{\"program_types\":[\"kprobe\"]}},"
		 "{\"match\":{\"uids\":[],\"users\":[]},\"allow\":{\"pinning\":true}}]}",
		 &w);
	assert_int_equal(policy_n_rules(p), 3);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.msgs[0], "t.json: rules[0]: no \"match\"; this rule matches nobody");
	assert_true(warnings_contain(
		&w, "t.json: rules[1].match: no uids, users, groups, units or slices"));
	assert_true(warnings_contain(
		&w, "t.json: rules[2].match: no uids, users, groups, units or slices"));
	assert_false(matches_uid(p, 0));
	assert_false(matches_uid(p, 1000));
	assert_false(matches_uid(p, 4294967294u));
	warnings_done(&w);
	policy_free(p);
}

static void test_user_and_group_match(void **state)
{
	struct group *root_group = getgrnam("root");
	struct passwd *root_user = getpwnam("root");
	struct policy_grant *g;
	struct policy *p;
	gid_t gid;

	if (!root_group || !root_user)
		skip();
	gid = root_group->gr_gid;

	p = load("{\"rules\":["
		 "{\"match\":{\"groups\":[\"root\"]},\"allow\":{\"program_types\":[\"kprobe\"]}},"
		 "{\"match\":{\"users\":[\"root\"]},\"allow\":{\"program_types\":[\"xdp\"]}}]}",
		 NULL);

	/* Supplementary group. */
	g = resolve(p, 1000, gid + 1, (gid_t[]){gid + 2, gid}, 2);
	assert_true(g->matched);
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	policy_grant_free(g);

	/* Primary group. */
	g = resolve(p, 1000, gid, NULL, 0);
	assert_true(g->matched);
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	policy_grant_free(g);

	/* Neither. */
	g = resolve(p, 1000, gid + 1, (gid_t[]){gid + 2, gid + 3}, 2);
	assert_false(g->matched);
	policy_grant_free(g);

	/* User by name. */
	g = resolve(p, root_user->pw_uid, gid + 1, NULL, 0);
	assert_true(g->matched);
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	policy_grant_free(g);

	policy_free(p);
}

static void test_uid_forms(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[42, \"0\", \"7-7\", "
				"\"4294967290-4294967294\"]}}]}",
				NULL);

	assert_true(matches_uid(p, 42));
	assert_true(matches_uid(p, 0));
	assert_true(matches_uid(p, 7));
	assert_false(matches_uid(p, 6));
	assert_false(matches_uid(p, 8));
	assert_true(matches_uid(p, 4294967294u));
	assert_false(matches_uid(p, 4294967289u));
	policy_free(p);
}

/* ---- Combination ---- */

static const char combination_json[] =
	"{\"rules\":["
	"{\"match\":{\"uids\":[\"1000\"]},"
	" \"allow\":{\"program_types\":[\"socket_filter\"],\"helper_classes\":[\"base\"],"
	"  \"maps\":[{\"name\":\"m*\",\"access\":\"ro\"},{\"name\":\"*\",\"access\":\"none\"}]},"
	" \"limits\":{\"max_programs\":4,\"max_insns_per_program\":100000}},"
	"{\"match\":{\"uids\":[\"1000-2000\"]},"
	" \"allow\":{\"program_types\":[\"kprobe\"],\"program_fds\":[\"kprobe\"],"
	"  \"helper_classes\":[\"read_kernel_memory\"],"
	"  \"maps\":[{\"name\":\"m1\",\"access\":\"wo\"},{\"name\":\"x*\",\"access\":\"rw\"}],"
	"  \"pinning\":true},"
	" \"limits\":{\"max_programs\":2,\"max_object_bytes\":2097152}},"
	"{\"match\":{\"uids\":[\"5\"]},"
	" \"allow\":{\"program_types\":[\"xdp\"],\"helper_classes\":[\"kfunc\"],"
	"  \"maps\":[{\"name\":\"*\",\"access\":\"rw\"}],\"pinning\":true},"
	" \"limits\":{\"max_programs\":100}}"
	"]}";

static void test_combination(void **state)
{
	struct policy *p = load(combination_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);

	assert_true(g->matched);
	assert_int_equal(g->n_sources, 2);
	assert_string_equal(g->sources[0], "t.json:rules[0]");
	assert_string_equal(g->sources[1], "t.json:rules[1]");
	/* Unions. */
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	assert_true(policy_grant_prog_fd(g, BPF_PROG_TYPE_KPROBE));
	assert_true(policy_grant_prog_fd(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_true(g->helper_classes == (HELPER_CLASS_BIT(HELPER_CLASS_BASE) |
					  HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY)));
	assert_true(g->pinning);
	/* ro from rule 0 + wo from rule 1 = rw. */
	assert_int_equal(policy_grant_map_access(g, "m1"), MAP_ACCESS_RW);
	assert_int_equal(policy_grant_map_access(g, "m2"), MAP_ACCESS_RO);
	/* Rule 0's trailing "*": none does not take away rule 1's rw. */
	assert_int_equal(policy_grant_map_access(g, "x1"), MAP_ACCESS_RW);
	assert_int_equal(policy_grant_map_access(g, "other"), MAP_ACCESS_NONE);
	/* Per limit the largest, an omitted limit counting as the default. */
	assert_int_equal(g->limits.max_programs, 4);
	assert_int_equal(g->limits.max_insns_per_program, 100000);
	assert_int_equal(g->limits.max_object_bytes, 2097152);
	assert_int_equal(g->limits.max_maps, POLICY_DEFAULT_MAX_MAPS);
	assert_int_equal(g->limits.max_map_entries, POLICY_DEFAULT_MAX_MAP_ENTRIES);
	policy_grant_free(g);

	/* Only the second rule. */
	g = resolve(p, 1500, 1500, NULL, 0);
	assert_true(g->matched);
	assert_int_equal(g->n_sources, 1);
	assert_string_equal(g->sources[0], "t.json:rules[1]");
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_int_equal(policy_grant_map_access(g, "m1"), MAP_ACCESS_WO);
	assert_int_equal(policy_grant_map_access(g, "m2"), MAP_ACCESS_NONE);
	assert_int_equal(g->limits.max_programs, 2);
	assert_int_equal(g->limits.max_insns_per_program, POLICY_DEFAULT_MAX_INSNS_PER_PROGRAM);
	policy_grant_free(g);

	policy_free(p);
}

static void test_non_matching_rule(void **state)
{
	struct policy *p = load(combination_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 5, (gid_t[]){5}, 1);

	/* Rule 2 (uid 5, with xdp, kfunc, pinning, max_programs 100) adds nothing. */
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	assert_false(g->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_KFUNC));
	assert_int_equal(g->limits.max_programs, 4);
	assert_int_equal(policy_grant_map_access(g, "other"), MAP_ACCESS_NONE);
	assert_int_equal(g->n_sources, 2);
	assert_int_equal(g->n_map_rules, 2);
	policy_grant_free(g);
	policy_free(p);
}

static void test_grant_to_json(void **state)
{
	struct policy *p = load(combination_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	json_object *o = policy_grant_to_json(g), *v, *e;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "matched", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "rules", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(v, 1)),
			    "t.json:rules[1]");
	assert_true(json_object_object_get_ex(o, "program_types", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "[\"socket_filter\",\"kprobe\"]");
	assert_true(json_object_object_get_ex(o, "program_fds", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "[\"socket_filter\",\"kprobe\"]");
	assert_true(json_object_object_get_ex(o, "helper_classes", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "[\"base\",\"read_kernel_memory\"]");
	assert_true(json_object_object_get_ex(o, "pinning", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "maps", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "[[{\"name\":\"m*\",\"access\":\"ro\"},{\"name\":\"*\",\"access\":"
			    "\"none\"}],[{\"name\":\"m1\",\"access\":\"wo\"},{\"name\":\"x*\","
			    "\"access\":\"rw\"}]]");
	assert_true(json_object_object_get_ex(o, "limits", &v));
	assert_true(json_object_object_get_ex(v, "max_programs", &e));
	assert_int_equal(json_object_get_int64(e), 4);
	assert_true(json_object_object_get_ex(v, "max_maps", &e));
	assert_int_equal(json_object_get_int64(e), POLICY_DEFAULT_MAX_MAPS);
	json_object_put(o);
	policy_grant_free(g);

	/* Not matched. */
	g = resolve(p, 3, 3, NULL, 0);
	o = policy_grant_to_json(g);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "matched", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "program_fds", &v));
	assert_int_equal(json_object_array_length(v), 0);
	json_object_put(o);
	policy_grant_free(g);
	policy_free(p);
}

/* ---- Parse errors ---- */

static void assert_parse_error_ex(const char *json, const char *expected, bool prefix)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]}}]}", NULL);
	char *error = NULL;
	int r;

	r = policy_load_string(p, "e.json", json, NULL, NULL, &error);
	if (r != -EINVAL)
		fail_msg("expected -EINVAL for %s, got %d", json, r);
	assert_non_null(error);
	if (prefix ? strncmp(error, expected, strlen(expected)) != 0 : strcmp(error, expected) != 0)
		fail_msg("error for %s:\n  got:      %s\n  expected: %s%s", json, error, expected,
			 prefix ? "..." : "");
	/* The policy is unchanged. */
	assert_int_equal(policy_n_rules(p), 1);
	free(error);
	policy_free(p);
}

static void assert_parse_error(const char *json, const char *expected)
{
	assert_parse_error_ex(json, expected, false);
}

#define RULE(body) "{\"rules\":[{\"match\":{\"uids\":[\"1\"]}," body "}]}"
#define ALLOW(body) RULE("\"allow\":{" body "}")

/*
 * "users", "groups" and "shared"'s owner take names (the owner a uid too),
 * through common/parse.h. What looks like a number is refused where a name
 * is expected (before: looked up as a name, a warning, and matched nobody);
 * what cannot be a name (signs, separators, control characters, spaces at
 * the ends, too long) is refused before it reaches the user database.
 */
static void test_name_entries(void **state)
{
	char json[1024], name[300];
	struct warnings w = {};
	struct policy *p;

	/* Digits are no user name: the administrator meant a uid, or matched nobody. */
	assert_parse_error("{\"rules\":[{\"match\":{\"users\":[\"1000\"]}}]}",
			   "e.json: rules[0].match.users[0]: \"1000\" is a uid, not a user name "
			   "(uids go in \"uids\")");
	assert_parse_error("{\"rules\":[{\"match\":{\"users\":[\"4294967295\"]}}]}",
			   "e.json: rules[0].match.users[0]: bad uid \"4294967295\" (decimal, 0 to "
			   "4294967294)");
	assert_parse_error("{\"rules\":[{\"match\":{\"groups\":[\"27\"]}}]}",
			   "e.json: rules[0].match.groups[0]: \"27\" is a number, not a group name "
			   "(groups are matched by name)");
	/* Not names at all. */
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"users\":[\"-1\"]}}]}",
			      "e.json: rules[0].match.users[0]: \"-1\" is not a valid user name (1 "
			      "to 255 characters",
			      true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"users\":[\" 5\"]}}]}",
			      "e.json: rules[0].match.users[0]: \" 5\" is not a valid user name",
			      true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"users\":[\"root \"]}}]}",
			      "e.json: rules[0].match.users[0]: \"root \" is not a valid user name",
			      true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"users\":[\"+\"]}}]}",
			      "e.json: rules[0].match.users[0]: \"+\" is not a valid user name",
			      true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"users\":[\"root:x:0\"]}}]}",
			      "e.json: rules[0].match.users[0]: \"root:x:0\" is not a valid user "
			      "name",
			      true);
	assert_parse_error_ex(
		"{\"rules\":[{\"match\":{\"groups\":[\"root\\n\"]}}]}",
		"e.json: rules[0].match.groups[0]: \"root?\" is not a valid group name", true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"groups\":[\"..\"]}}]}",
			      "e.json: rules[0].match.groups[0]: \"..\" is not a valid group name",
			      true);
	memset(name, 'a', 256);
	name[256] = '\0';
	snprintf(json, sizeof(json), "{\"rules\":[{\"match\":{\"users\":[\"%s\"]}}]}", name);
	assert_parse_error_ex(json, "e.json: rules[0].match.users[0]: \"aaaa", true);
	/* "shared"'s owner: a uid, or a name. */
	assert_parse_error(ALLOW("\"shared\":[{\"owner\":\"4294967295\",\"object\":\"o\","
				 "\"map\":\"m\",\"access\":\"ro\"}]"),
			   "e.json: rules[0].allow.shared[0].owner: bad uid \"4294967295\" "
			   "(decimal, 0 to 4294967294)");
	assert_parse_error_ex(ALLOW("\"shared\":[{\"owner\":\"-1\",\"object\":\"o\","
				    "\"map\":\"m\",\"access\":\"ro\"}]"),
			      "e.json: rules[0].allow.shared[0].owner: \"-1\" is not a valid user "
			      "name",
			      true);

	/* Names that look like numbers are names, not hex: looked up, and there is none. */
	p = load("{\"rules\":[{\"match\":{\"users\":[\"0x10\",\"1e3\"],\"groups\":[\"0x0\"]},"
		 "\"allow\":{\"program_types\":[\"socket_filter\"],\"shared\":[{\"owner\":\"0x0\","
		 "\"object\":\"o\",\"map\":\"m\",\"access\":\"ro\"}]}}]}",
		 &w);
	assert_int_equal(w.n, 4);
	assert_true(warnings_contain(&w, "no user \"0x10\"; this entry never matches"));
	assert_true(warnings_contain(&w, "no user \"1e3\"; this entry never matches"));
	assert_true(warnings_contain(&w, "no group \"0x0\"; this entry never matches"));
	assert_true(warnings_contain(&w, "no user \"0x0\"; this entry never matches"));
	assert_false(matches_uid(p, 16));
	assert_false(matches_uid(p, 1000));
	assert_false(matches_uid(p, 0));
	warnings_done(&w);
	policy_free(p);

	/* The longest name is looked up (and not found); numbers with leading zeros are uids. */
	name[255] = '\0';
	snprintf(json, sizeof(json), "{\"rules\":[{\"match\":{\"users\":[\"%s\"]}}]}", name);
	p = load(json, &w);
	assert_int_equal(w.n, 1);
	warnings_done(&w);
	policy_free(p);
	p = load("{\"rules\":[{\"match\":{\"uids\":[\"0001000\"]},"
		 "\"allow\":{\"program_types\":[\"socket_filter\"]}}]}",
		 NULL);
	assert_true(matches_uid(p, 1000));
	policy_free(p);
}

static void test_parse_errors(void **state)
{
	/* Unknown keys, at every level. */
	assert_parse_error("{\"rules\":[],\"rulez\":[]}",
			   "e.json: unknown key \"rulez\" (expected rules)");
	assert_parse_error(
		RULE("\"alow\":{}"),
		"e.json: rules[0]: unknown key \"alow\" (expected match, allow or limits)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uid\":[\"1\"]}}]}",
			   "e.json: rules[0].match: unknown key \"uid\" (expected uids, users, "
			   "groups, units, user_units, slices or user_slices)");
	assert_parse_error(ALLOW("\"program_type\":[]"),
			   "e.json: rules[0].allow: unknown key \"program_type\" (expected "
			   "program_types, program_fds, test_run_types, map_types, helper_classes, "
			   "maps, pinning, maps_of_maps, load_with_perfmon, attach, shared, "
			   "objects or digests)");
	assert_parse_error(
		ALLOW("\"maps\":[{\"name\":\"a\",\"acess\":\"rw\"}]"),
		"e.json: rules[0].allow.maps[0]: unknown key \"acess\" (expected name or "
		"access)");
	assert_parse_error(
		RULE("\"limits\":{\"max_program\":3}"),
		"e.json: rules[0].limits: unknown key \"max_program\" (expected "
		"max_object_bytes, max_insns_per_program, max_programs, max_maps, "
		"max_map_entries, max_attachments, max_named_objects, max_loaded_programs, "
		"max_map_memory_bytes, max_kernel_threads or max_loads_per_minute)");

	/* Bad values. */
	assert_parse_error(ALLOW("\"maps\":[{\"name\":\"a\",\"access\":\"rw\"},"
				 "{\"name\":\"b\",\"access\":\"rx\"}]"),
			   "e.json: rules[0].allow.maps[1].access: unknown access \"rx\" (expected "
			   "rw, ro, wo, consume or none)");
	assert_parse_error(ALLOW("\"maps\":[{\"name\":\"a\"}]"),
			   "e.json: rules[0].allow.maps[0]: missing key \"access\"");
	assert_parse_error(ALLOW("\"maps\":[{\"name\":\"\",\"access\":\"ro\"}]"),
			   "e.json: rules[0].allow.maps[0].name: empty map name pattern");
	assert_parse_error_ex(ALLOW("\"program_types\":[\"socket_filter\",\"kprob\"]"),
			      "e.json: rules[0].allow.program_types[1]: unknown program type "
			      "\"kprob\" (expected a libbpf name",
			      true);
	assert_parse_error_ex(ALLOW("\"program_types\":[\"unspec\"]"),
			      "e.json: rules[0].allow.program_types[0]: unknown program type "
			      "\"unspec\"",
			      true);
	assert_parse_error_ex(ALLOW("\"helper_classes\":[\"base\",\"bogus\"]"),
			      "e.json: rules[0].allow.helper_classes[1]: unknown helper class "
			      "\"bogus\" (expected base, read_kernel_memory, ",
			      true);
	assert_parse_error(
		ALLOW("\"program_types\":[\"socket_filter\"],"
		      "\"program_fds\":[\"socket_filter\",\"kprobe\"]"),
		"e.json: rules[0].allow.program_fds[1]: program type \"kprobe\" is not in "
		"this rule's program_types");
	/* program_fds before program_types in the file: still checked against them. */
	assert_parse_error(
		ALLOW("\"program_fds\":[\"kprobe\"],\"program_types\":[\"xdp\"]"),
		"e.json: rules[0].allow.program_fds[0]: program type \"kprobe\" is not in "
		"this rule's program_types");

	/* uids. */
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"5-3\"]}}]}",
			   "e.json: rules[0].match.uids[0]: bad uid range \"5-3\" (start 5 is "
			   "greater than end 3)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\",\"abc\"]}}]}",
			   "e.json: rules[0].match.uids[1]: bad uid \"abc\" (expected \"N\" or "
			   "\"A-B\", decimal, 0 to 4294967294)");
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"uids\":[\"-1\"]}}]}",
			      "e.json: rules[0].match.uids[0]: bad uid \"-1\"", true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"uids\":[\"1-\"]}}]}",
			      "e.json: rules[0].match.uids[0]: bad uid \"1-\"", true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"uids\":[\" 1\"]}}]}",
			      "e.json: rules[0].match.uids[0]: bad uid \" 1\"", true);
	assert_parse_error_ex("{\"rules\":[{\"match\":{\"uids\":[\"4294967295\"]}}]}",
			      "e.json: rules[0].match.uids[0]: bad uid \"4294967295\"", true);
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[-1]}}]}",
			   "e.json: rules[0].match.uids[0]: uid -1 out of range (0 to 4294967294)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[4294967295]}}]}",
			   "e.json: rules[0].match.uids[0]: uid 4294967295 out of range (0 to "
			   "4294967294)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[1.5]}}]}",
			   "e.json: rules[0].match.uids[0]: expected a string or an integer, got a "
			   "number with a fraction or exponent");
	assert_parse_error("{\"rules\":[{\"match\":{\"users\":[\"\"]}}]}",
			   "e.json: rules[0].match.users[0]: empty user name");
	assert_parse_error("{\"rules\":[{\"match\":{\"groups\":[0]}}]}",
			   "e.json: rules[0].match.groups[0]: expected a string, got an integer");

	/* Limits. */
	assert_parse_error(RULE("\"limits\":{\"max_programs\":129}"),
			   "e.json: rules[0].limits.max_programs: 129 is over the hard ceiling of "
			   "128");
	assert_parse_error(RULE("\"limits\":{\"max_maps\":121}"),
			   "e.json: rules[0].limits.max_maps: 121 is over the hard ceiling of 120");
	assert_parse_error(RULE("\"limits\":{\"max_object_bytes\":67108865}"),
			   "e.json: rules[0].limits.max_object_bytes: 67108865 is over the hard "
			   "ceiling of 67108864");
	assert_parse_error(RULE("\"limits\":{\"max_map_entries\":18446744073709551615}"),
			   "e.json: rules[0].limits.max_map_entries: 18446744073709551615 is over "
			   "the hard ceiling of 4294967295");
	assert_parse_error(RULE("\"limits\":{\"max_insns_per_program\":0}"),
			   "e.json: rules[0].limits.max_insns_per_program: expected a positive "
			   "integer, got 0");
	assert_parse_error(RULE("\"limits\":{\"max_maps\":-4}"),
			   "e.json: rules[0].limits.max_maps: expected a positive integer, got -4");
	assert_parse_error(RULE("\"limits\":{\"max_maps\":\"4\"}"),
			   "e.json: rules[0].limits.max_maps: expected a positive integer, got a "
			   "string");

	/* Wrong types. */
	assert_parse_error(ALLOW("\"pinning\":\"yes\""),
			   "e.json: rules[0].allow.pinning: expected true or false, got a string");
	assert_parse_error(ALLOW("\"program_types\":\"socket_filter\""),
			   "e.json: rules[0].allow.program_types: expected an array, got a string");
	assert_parse_error(ALLOW("\"maps\":[\"*\"]"),
			   "e.json: rules[0].allow.maps[0]: expected an object, got a string");
	assert_parse_error(RULE("\"allow\":null"),
			   "e.json: rules[0].allow: expected an object, got null");
	assert_parse_error("{\"rules\":[[]]}",
			   "e.json: rules[0]: expected an object, got an array");
	assert_parse_error("{\"rules\":{}}", "e.json: rules: expected an array, got an object");
	assert_parse_error("{}", "e.json: missing key \"rules\"");
	assert_parse_error("[]", "e.json: expected an object at the top level, got an array");
	assert_parse_error("null", "e.json: expected an object at the top level, got null");

	/* Duplicate keys would silently hide one of the values. */
	assert_parse_error(ALLOW("\"pinning\":false,\"pinning\":true"),
			   "e.json: rules[0].allow: duplicate key \"pinning\"");
	assert_parse_error("{\"rules\":[],\"rules\":[]}", "e.json: duplicate key \"rules\"");
	assert_parse_error(ALLOW("\"maps\":[{\"name\":\"a\",\"access\":\"rw\"},"
				 "{\"name\":\"a\",\"access\":\"ro\",\"access\":\"none\"}]"),
			   "e.json: rules[0].allow.maps[1]: duplicate key \"access\"");

	/* Not JSON. */
	assert_parse_error("", "e.json: not valid JSON: unexpected end of file");
	assert_parse_error("{\"rules\":[", "e.json: not valid JSON: unexpected end of file");
	assert_parse_error_ex("{\"rules\":[}", "e.json: not valid JSON at line 1, column ", true);
	assert_parse_error_ex("{\n\"rules\": [],\n}", "e.json: not valid JSON at line 3, column ",
			      true);
	assert_parse_error_ex("{\"rules\":[]} {}", "e.json: not valid JSON at line 1, column ",
			      true);
	assert_parse_error_ex("/* comment */ {\"rules\":[]}", "e.json: not valid JSON at line 1",
			      true);
	/* Accepted by json-c even in strict mode, but not JSON or not this format. */
	assert_parse_error(
		"{'rules':[]}",
		"e.json: not valid JSON at line 1, column 2: single quotes are not JSON");
	assert_parse_error("{\"rules\":[{\"match\":{\"users\":[\"root\\u0000x\"]}}]}",
			   "e.json: not valid JSON at line 1, column 35: \\u0000 is not allowed in "
			   "strings");
	assert_parse_error(ALLOW("\"pinning\":false,\"pinnin\\u0067\":true"),
			   "e.json: rules[0].allow: key \"pinnin\\u0067\" has an escape sequence "
			   "(keys are plain names)");
	assert_parse_error(RULE("\"limits\":{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,"
				"\"g\":1,\"h\":1,\"i\":1,\"j\":1,\"k\":1,\"l\":1,\"m\":1,\"n\":1,"
				"\"o\":1,\"p\":1,\"q\":1}"),
			   "e.json: rules[0].limits: too many keys (more than 16)");
	assert_parse_error("{\"rules\":[[[[[[[[[[[[]]]]]]]]]]]]}",
			   "e.json: not valid JSON at line 1, column 19: nested deeper than 10 "
			   "levels");
}

static void test_parse_oversized(void **state)
{
	size_t n = POLICY_MAX_FILE_BYTES + 16;
	struct policy *p = policy_new();
	char *json = malloc(n + 1), *error = NULL;

	assert_non_null(json);
	memset(json, ' ', n);
	memcpy(json, "{\"rules\":[]}", 12);
	json[n] = '\0';
	assert_int_equal(policy_load_string(p, "big.json", json, NULL, NULL, &error), -EINVAL);
	assert_string_equal(error, "big.json: file is larger than 1048576 bytes");
	free(error);
	free(json);
	policy_free(p);
}

static void test_parse_ok_edge_cases(void **state)
{
	struct policy *p;

	/* Whitespace around the value, empty rules, empty lists. */
	p = load("\n  {\"rules\": []}\n\n", NULL);
	assert_int_equal(policy_n_rules(p), 0);
	policy_free(p);

	p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"program_types\":[],"
		 "\"program_fds\":[],\"helper_classes\":[],\"maps\":[],\"pinning\":false},"
		 "\"limits\":{}}]}",
		 NULL);
	assert_int_equal(policy_n_rules(p), 1);
	/* Appending a second file adds to the rules. */
	assert_int_equal(policy_load_string(p, "u.json", "{\"rules\":[{\"match\":{\"uids\":[2]}}]}",
					    NULL, NULL, NULL),
			 0);
	assert_int_equal(policy_n_rules(p), 2);
	policy_free(p);
}

static void test_names(void **state)
{
	enum map_access a;

	assert_string_equal(map_access_to_string(MAP_ACCESS_NONE), "none");
	assert_string_equal(map_access_to_string(MAP_ACCESS_RO), "ro");
	assert_string_equal(map_access_to_string(MAP_ACCESS_WO), "wo");
	assert_string_equal(map_access_to_string(MAP_ACCESS_RW), "rw");
	assert_string_equal(map_access_to_string(MAP_ACCESS_CONSUME), "consume");
	assert_string_equal(map_access_to_string(MAP_ACCESS_CONSUME | MAP_ACCESS_RO), "ro+consume");
	assert_null(map_access_to_string((enum map_access)8));
	assert_int_equal(map_access_from_string("consume", &a), 0);
	assert_int_equal(a, MAP_ACCESS_CONSUME);
	/* Unions are shown, never accepted as words. */
	assert_int_equal(map_access_from_string("ro+consume", &a), -EINVAL);
	assert_int_equal(map_access_from_string("wo", &a), 0);
	assert_int_equal(a, MAP_ACCESS_WO);
	assert_int_equal(map_access_from_string("RW", &a), -EINVAL);
	assert_int_equal(map_access_from_string(NULL, &a), -EINVAL);

	assert_int_equal(policy_prog_type_from_string("socket_filter"),
			 BPF_PROG_TYPE_SOCKET_FILTER);
	assert_int_equal(policy_prog_type_from_string("sched_cls"), BPF_PROG_TYPE_SCHED_CLS);
	assert_int_equal(policy_prog_type_from_string("raw_tracepoint"),
			 BPF_PROG_TYPE_RAW_TRACEPOINT);
	assert_int_equal(policy_prog_type_from_string("sk_reuseport"), BPF_PROG_TYPE_SK_REUSEPORT);
	assert_int_equal(policy_prog_type_from_string("kprobe "), -EINVAL);
	assert_int_equal(policy_prog_type_from_string(NULL), -EINVAL);
	assert_string_equal(policy_prog_type_to_string(BPF_PROG_TYPE_XDP), "xdp");
	assert_null(policy_prog_type_to_string(-1));
	assert_null(policy_prog_type_to_string(64));
	/* POLICY_ALWAYS_FD_TYPES spells its bits as numbers: keep them honest. */
	assert_true(POLICY_ALWAYS_FD_TYPES ==
		    ((1ull << BPF_PROG_TYPE_SOCKET_FILTER) | (1ull << BPF_PROG_TYPE_SK_REUSEPORT)));
}

/* ---- Directories ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void remove_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(unlink(path), 0);
}

static void test_load_dir(void **state)
{
	char dir[] = "/tmp/test-policy-XXXXXX";
	struct warnings w = {};
	struct policy *p = NULL;
	struct policy_grant *g;
	char *error = NULL;

	assert_non_null(mkdtemp(dir));
	/* Written out of order; loaded sorted by name. */
	write_file(dir, "20-b.json",
		   "{\"rules\":[{\"match\":{\"uids\":[\"1000-2000\"]},"
		   "\"allow\":{\"program_types\":[\"kprobe\"]}}]}");
	write_file(dir, "10-a.json",
		   "{\"rules\":[{\"match\":{\"uids\":[\"1000\"]},"
		   "\"allow\":{\"program_types\":[\"xdp\"]}},"
		   "{\"match\":{\"uids\":[\"3\"]}}]}");
	/* Ignored: not "*.json", or hidden. */
	write_file(dir, "README", "this is not json");
	write_file(dir, "30-c.json.bak", "not json either");
	write_file(dir, ".hidden.json", "nor this");

	assert_int_equal(policy_load_dir(dir, collect_warning, &w, &p, &error), 0);
	assert_null(error);
	assert_int_equal(w.n, 0);
	assert_int_equal(policy_n_rules(p), 3);
	g = resolve(p, 1000, 1000, NULL, 0);
	assert_int_equal(g->n_sources, 2);
	assert_string_equal(g->sources[0], "10-a.json:rules[0]");
	assert_string_equal(g->sources[1], "20-b.json:rules[0]");
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_XDP));
	assert_true(policy_grant_prog_type(g, BPF_PROG_TYPE_KPROBE));
	policy_grant_free(g);
	g = resolve(p, 3, 3, NULL, 0);
	assert_int_equal(g->n_sources, 1);
	assert_string_equal(g->sources[0], "10-a.json:rules[1]");
	policy_grant_free(g);
	p = policy_free(p);

	/* One bad file fails the whole load, naming the file. */
	write_file(dir, "15-bad.json",
		   "{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"limits\":"
		   "{\"max_programs\":1000}}]}");
	assert_int_equal(policy_load_dir(dir, collect_warning, &w, &p, &error), -EINVAL);
	assert_null(p);
	assert_string_equal(error, "15-bad.json: rules[0].limits.max_programs: 1000 is over the "
				   "hard ceiling of 128");
	free(error);
	error = NULL;
	remove_file(dir, "15-bad.json");

	/* Oversized file. */
	{
		char *big = malloc(POLICY_MAX_FILE_BYTES + 2);

		assert_non_null(big);
		memset(big, ' ', POLICY_MAX_FILE_BYTES + 1);
		memcpy(big, "{\"rules\":[]}", 12);
		big[POLICY_MAX_FILE_BYTES + 1] = '\0';
		write_file(dir, "40-big.json", big);
		free(big);
	}
	assert_int_equal(policy_load_dir(dir, NULL, NULL, &p, &error), -EFBIG);
	assert_null(p);
	assert_string_equal(error, "40-big.json: file is larger than 1048576 bytes");
	free(error);
	error = NULL;
	remove_file(dir, "40-big.json");

	/* A directory named like a policy file. */
	{
		char sub[PATH_MAX];

		snprintf(sub, sizeof(sub), "%s/60-dir.json", dir);
		assert_int_equal(mkdir(sub, 0700), 0);
		assert_int_equal(policy_load_dir(dir, NULL, NULL, &p, &error), -EINVAL);
		assert_null(p);
		assert_string_equal(error, "60-dir.json: not a regular file");
		free(error);
		error = NULL;
		assert_int_equal(rmdir(sub), 0);
	}

	remove_file(dir, "10-a.json");
	remove_file(dir, "20-b.json");
	remove_file(dir, "README");
	remove_file(dir, "30-c.json.bak");
	remove_file(dir, ".hidden.json");

	/* Empty directory: no rules, no warning. */
	assert_int_equal(policy_load_dir(dir, collect_warning, &w, &p, &error), 0);
	assert_int_equal(policy_n_rules(p), 0);
	assert_int_equal(w.n, 0);
	p = policy_free(p);

	assert_int_equal(rmdir(dir), 0);

	/* Missing directory: empty policy and a warning. */
	assert_int_equal(policy_load_dir(dir, collect_warning, &w, &p, &error), 0);
	assert_null(error);
	assert_non_null(p);
	assert_int_equal(policy_n_rules(p), 0);
	assert_int_equal(w.n, 1);
	assert_true(strstr(w.msgs[0], dir) != NULL);
	assert_true(strstr(w.msgs[0], "does not exist") != NULL);
	assert_false(matches_uid(p, 0));
	policy_free(p);
	warnings_done(&w);
}

/* ---- Decisions ---- */

static const char decide_json[] =
	"{\"rules\":[{\"match\":{\"uids\":[\"1000\"]},"
	"\"allow\":{\"program_types\":[\"socket_filter\",\"kprobe\",\"raw_tracepoint\"],"
	" \"helper_classes\":[\"base\"],"
	" \"maps\":[{\"name\":\"ro_*\",\"access\":\"ro\"},{\"name\":\"hidden\",\"access\":"
	"\"none\"},{\"name\":\"*\",\"access\":\"rw\"}]},"
	"\"limits\":{\"max_object_bytes\":10000,\"max_insns_per_program\":100,\"max_programs\":2,"
	" \"max_maps\":3,\"max_map_entries\":1000}}]}";

static int helpers_base[] = {BPF_FUNC_map_lookup_elem};
static int helpers_read_kernel[] = {BPF_FUNC_map_lookup_elem, BPF_FUNC_probe_read_kernel};
static char *kfuncs_rcu[] = {"bpf_rcu_read_lock"};

static struct object_program prog(const char *name, int type, bool load, uint32_t insns)
{
	return (struct object_program){
		.name = (char *)name,
		.prog_type = type,
		.load = load,
		.insn_cnt = insns,
		.helpers = helpers_base,
		.n_helpers = ARRAY_SIZE(helpers_base),
	};
}

static struct object_map map(const char *name, uint32_t max_entries, bool pinned)
{
	return (struct object_map){
		.name = (char *)name,
		.map_type = BPF_MAP_TYPE_ARRAY,
		.key_size = 4,
		.value_size = 8,
		.max_entries = max_entries,
		.pinned = pinned,
	};
}

/* Decide and return the first reason (a copy), NULL if allowed. */
static char *decide_reason(const struct policy_grant *g, const struct object_desc *d)
{
	struct policy_verdict v = {};
	const char *reason;
	char *copy = NULL;

	assert_int_equal(policy_decide(g, d, &v), 0);
	reason = policy_verdict_first_reason(&v);
	assert_int_equal(v.allowed, reason == NULL);
	if (reason)
		copy = strdup(reason);
	policy_verdict_done(&v);
	return copy;
}

static void assert_denied(const struct policy_grant *g, const struct object_desc *d,
			  const char *expected)
{
	char *reason = decide_reason(g, d);

	assert_non_null(reason);
	assert_string_equal(reason, expected);
	free(reason);
}

static void test_decide_allowed(void **state)
{
	struct policy *p = load(decide_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	struct object_program progs[] = {
		prog("filter", BPF_PROG_TYPE_SOCKET_FILTER, true, 100),
		prog("probe", BPF_PROG_TYPE_KPROBE, true, 50),
		/* Not loaded: not checked (type not allowed, too long, too many), no fd. */
		prog("skipped", BPF_PROG_TYPE_XDP, false, 100000),
	};
	struct object_map maps[] = {
		map("ro_config", 1000, false),
		map("hidden", 10, false),
		map("counters", 1, false),
	};
	struct object_desc d = {
		.object_bytes = 10000,
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
		.maps = maps,
		.n_maps = ARRAY_SIZE(maps),
	};
	struct policy_verdict v = {};

	progs[2].kfuncs = kfuncs_rcu;
	progs[2].n_kfuncs = 1;
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_true(v.allowed);
	assert_null(policy_verdict_first_reason(&v));
	assert_true(v.object.allowed);
	assert_null(v.object.reason);
	assert_int_equal(v.n_programs, 3);
	assert_int_equal(v.n_maps, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(v.programs[i].allowed);
		assert_null(v.programs[i].reason);
		assert_true(v.maps[i].allowed);
	}
	assert_true(v.prog_fd[0]); /* socket_filter: always */
	assert_false(v.prog_fd[1]); /* kprobe: not in program_fds */
	assert_false(v.prog_fd[2]); /* not loaded */
	assert_int_equal(v.map_access[0], MAP_ACCESS_RO);
	/* Access none is not a denial: the map loads, the client gets no fd. */
	assert_int_equal(v.map_access[1], MAP_ACCESS_NONE);
	assert_int_equal(v.map_access[2], MAP_ACCESS_RW);
	policy_verdict_done(&v);
	policy_verdict_done(&v); /* idempotent */

	policy_grant_free(g);
	policy_free(p);
}

static void test_decide_denials(void **state)
{
	struct policy *p = load(decide_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	struct object_program progs[3];
	struct object_map maps[4];
	struct object_desc d = {
		.object_bytes = 100,
		.programs = progs,
		.maps = maps,
	};

	/* Object limits, in order: size, programs, maps. */
	progs[0] = prog("a", BPF_PROG_TYPE_SOCKET_FILTER, true, 10);
	progs[1] = prog("b", BPF_PROG_TYPE_SOCKET_FILTER, true, 10);
	progs[2] = prog("c", BPF_PROG_TYPE_SOCKET_FILTER, true, 10);
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++)
		maps[i] = map("m", 1, false);
	d.n_programs = 3;
	d.n_maps = 4;
	d.object_bytes = 10001;
	assert_denied(
		g, &d,
		"object is 10001 bytes, over your limit of 10000 (policy key max_object_bytes)");
	d.object_bytes = 10000;
	assert_denied(g, &d,
		      "object loads 3 programs, over your limit of 2 (policy key max_programs)");
	progs[2].load = false;
	assert_denied(g, &d, "object has 4 maps, over your limit of 3 (policy key max_maps)");
	d.n_maps = 3;
	assert_null(decide_reason(g, &d));

	/* Program type. */
	d.n_programs = 1;
	d.n_maps = 0;
	progs[0] = prog("x", BPF_PROG_TYPE_XDP, true, 10);
	assert_denied(g, &d,
		      "program \"x\" has type xdp, which your policy does not allow (policy key "
		      "program_types: xdp)");
	progs[0] = prog("x", 200, true, 10);
	assert_denied(g, &d,
		      "program \"x\" has unknown type 200, which your policy does not allow");

	/* Instructions. */
	progs[0] = prog("x", BPF_PROG_TYPE_KPROBE, true, 101);
	assert_denied(g, &d,
		      "program \"x\" has 101 instructions, over your limit of 100 (policy key "
		      "max_insns_per_program)");
	progs[0].insn_cnt = 100;
	assert_null(decide_reason(g, &d));

	/* The type comes first; the instruction count follows it (test_decide_all_reasons). */
	progs[0] = prog("x", BPF_PROG_TYPE_XDP, true, 5000);
	assert_denied(g, &d,
		      "program \"x\" has type xdp, which your policy does not allow (policy key "
		      "program_types: xdp)");

	/* Helpers. */
	progs[0] = prog("trace_open", BPF_PROG_TYPE_KPROBE, true, 10);
	progs[0].helpers = helpers_read_kernel;
	progs[0].n_helpers = ARRAY_SIZE(helpers_read_kernel);
	assert_denied(g, &d,
		      "program \"trace_open\" calls bpf_probe_read_kernel (class "
		      "read_kernel_memory), which your policy does not allow (policy key "
		      "helper_classes: read_kernel_memory)");

	/* A helper id the table does not know. */
	{
		static int helpers_unknown[] = {BPF_FUNC_map_lookup_elem, 99999};

		progs[0] = prog("x", BPF_PROG_TYPE_KPROBE, true, 10);
		progs[0].helpers = helpers_unknown;
		progs[0].n_helpers = ARRAY_SIZE(helpers_unknown);
		assert_denied(g, &d,
			      "program \"x\" calls helper 99999 (class unknown), which your policy "
			      "does not allow (policy key helper_classes: unknown)");
	}

	/* kfuncs. */
	progs[0] = prog("x", BPF_PROG_TYPE_RAW_TRACEPOINT, true, 10);
	progs[0].kfuncs = kfuncs_rcu;
	progs[0].n_kfuncs = 1;
	assert_denied(
		g, &d,
		"program \"x\" calls kfunc bpf_rcu_read_lock (class kfunc), which your policy "
		"does not allow (policy key helper_classes: kfunc)");

	/* Maps. */
	d.n_programs = 0;
	d.n_maps = 1;
	maps[0] = map("big", 1001, false);
	assert_denied(g, &d,
		      "map \"big\" has 1001 entries, over your limit of 1000 (policy key "
		      "max_map_entries)");
	maps[0] = map("pins", 10, true);
	assert_denied(g, &d,
		      "map \"pins\" is pinned by name, which your policy does not allow (policy "
		      "key pinning)");

	/* The object's reason comes first, then programs, then maps. */
	d.n_programs = 1;
	d.n_maps = 1;
	d.object_bytes = 20000;
	progs[0] = prog("x", BPF_PROG_TYPE_XDP, true, 10);
	assert_denied(
		g, &d,
		"object is 20000 bytes, over your limit of 10000 (policy key max_object_bytes)");
	d.object_bytes = 1;
	assert_denied(g, &d,
		      "program \"x\" has type xdp, which your policy does not allow (policy key "
		      "program_types: xdp)");

	/* Every item carries its own reason. */
	{
		struct policy_verdict v = {};

		assert_int_equal(policy_decide(g, &d, &v), 0);
		assert_false(v.allowed);
		assert_true(v.object.allowed);
		assert_false(v.programs[0].allowed);
		assert_false(v.maps[0].allowed);
		assert_string_equal(v.maps[0].reason, "map \"pins\" is pinned by name, which your "
						      "policy does not allow (policy key pinning)");
		assert_false(v.prog_fd[0]);
		policy_verdict_done(&v);
	}

	policy_grant_free(g);
	policy_free(p);
}

/* Reason i of it: its text and the policy key that would have to change. */
static void assert_reason(const struct verdict_item *it, size_t i, const char *text,
			  const char *key)
{
	assert_false(it->allowed);
	assert_true(i < it->n_reasons);
	assert_string_equal(it->reasons[i].text, text);
	assert_string_equal(it->reasons[i].key, key);
}

/*
 * The same with every name as long as the broker takes (128 bytes) and 64
 * kfuncs of 128 bytes each per program, 120 maps over their limits: each
 * item's verdict is cut to VERDICT_MAX_ITEM_TEXT, and "reasons", "denials"
 * and the items' verdicts together stay well under a reply's 1 MiB.
 */
static void test_decide_verdict_bounded_long_names(void **state)
{
	struct policy *p = load(decide_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	static int many_helpers[1000];
	static char names[128 + 120][129], kfunc_names[64][129];
	static char *kfuncs[64];
	static struct object_program progs[POLICY_HARD_MAX_PROGRAMS];
	static struct object_map maps[POLICY_HARD_MAX_MAPS];
	struct object_desc d = {
		.object_bytes = 100,
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
		.maps = maps,
		.n_maps = ARRAY_SIZE(maps),
	};
	struct policy_verdict v = {};
	json_object *reasons = json_object_new_array(), *denials = json_object_new_array();
	size_t bytes;

	for (size_t i = 0; i < ARRAY_SIZE(many_helpers); i++)
		many_helpers[i] = 100000 + (int)i;
	/* 128 bytes each, distinct in their first 6 (the rest of the arrays is NULs). */
	for (size_t i = 0; i < ARRAY_SIZE(kfuncs); i++) {
		memset(kfunc_names[i], 'k', 128);
		memcpy(kfunc_names[i], "kf", 2);
		for (size_t j = 0, n = i; j < 4; j++, n /= 10)
			kfunc_names[i][5 - j] = (char)('0' + n % 10);
		kfuncs[i] = kfunc_names[i];
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		memset(names[i], 'n', 128);
		for (size_t j = 0, n = i; j < 5; j++, n /= 10)
			names[i][5 - j] = (char)('0' + n % 10);
	}
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		progs[i] = prog(names[i], BPF_PROG_TYPE_XDP, true, 5000);
		progs[i].helpers = many_helpers;
		progs[i].n_helpers = ARRAY_SIZE(many_helpers);
		progs[i].kfuncs = kfuncs;
		progs[i].n_kfuncs = ARRAY_SIZE(kfuncs);
	}
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++)
		maps[i] = map(names[ARRAY_SIZE(progs) + i], 100000, false);

	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_false(v.allowed);
	assert_non_null(reasons);
	assert_non_null(denials);
	assert_int_equal(verdict_to_json(&v, &d, reasons, denials), 0);
	bytes = strlen(json_object_to_json_string(reasons)) +
		strlen(json_object_to_json_string(denials));
	for (size_t i = 0; i < ARRAY_SIZE(progs) + ARRAY_SIZE(maps); i++) {
		const struct verdict_item *it =
			i < ARRAY_SIZE(progs) ? &v.programs[i] : &v.maps[i - ARRAY_SIZE(progs)];
		char *text = verdict_item_text(it);

		assert_non_null(text);
		assert_true(strlen(text) <= VERDICT_MAX_ITEM_TEXT);
		/* Programs have more to say than fits: cut, with the ellipsis. */
		if (i < ARRAY_SIZE(progs))
			assert_non_null(strstr(text, VERDICT_ELLIPSIS));
		bytes += strlen(text);
		free(text);
	}
	assert_true(bytes < 1024 * 1024 * 3 / 4);
	json_object_put(reasons);
	json_object_put(denials);
	policy_verdict_done(&v);
	policy_grant_free(g);
	policy_free(p);
}

/*
 * Every reason of every item, each naming its policy key: a program refused
 * for its type still shows its instruction count and each helper class it
 * lacks; the object its three limits; a map all of its problems.
 */
/*
 * A verdict fits in a reply (1 MiB) however large the object: 128 programs,
 * each refused for its type, its size, 1000 helpers of a class it lacks and
 * a kfunc, give 512 reasons; "reasons"/"denials" hold 256 and one "and N
 * more reasons", the denials don't repeat the sentences, a helper list
 * names 16, and each item's verdict joins at most 16 reasons.
 */
static void test_decide_verdict_bounded(void **state)
{
	struct policy *p = load(decide_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	static int many_helpers[1000];
	struct object_program progs[128];
	struct object_map outer = map("outer", 1, false);
	struct object_desc d = {
		.object_bytes = 100,
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
		.maps = &outer,
		.n_maps = 1,
	};
	struct policy_verdict v = {};
	json_object *reasons = json_object_new_array(), *denials = json_object_new_array();
	json_object *last, *entry;
	size_t bytes;
	char *text;

	for (size_t i = 0; i < ARRAY_SIZE(many_helpers); i++)
		many_helpers[i] = 100000 + (int)i; /* unknown: all of class unknown */
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		progs[i] = prog("p", BPF_PROG_TYPE_XDP, true, 5000);
		progs[i].helpers = many_helpers;
		progs[i].n_helpers = ARRAY_SIZE(many_helpers);
		progs[i].kfuncs = kfuncs_rcu;
		progs[i].n_kfuncs = 1;
	}
	/* A ring buffer as a map of maps' inner map is sized in bytes too. */
	outer.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
	outer.inner_map_type = BPF_MAP_TYPE_RINGBUF;
	outer.inner_max_entries = 4096;

	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_false(v.allowed);
	assert_int_equal(v.programs[0].n_reasons, 4);
	assert_reason(&v.programs[0], 2,
		      "program \"p\" calls helper 100000, helper 100001, helper 100002, helper "
		      "100003, helper 100004, helper 100005, helper 100006, helper 100007, helper "
		      "100008, helper 100009, helper 100010, helper 100011, helper 100012, helper "
		      "100013, helper 100014, helper 100015 and 984 more (class unknown), which "
		      "your policy does not allow (policy key helper_classes: unknown)",
		      "helper_classes: unknown");
	assert_reason(&v.maps[0], 0,
		      "map \"outer\"'s inner ring buffer is 4096 bytes, over your limit of 1000 "
		      "(policy key max_map_entries, which limits a ring buffer's size in bytes)",
		      "max_map_entries");

	assert_non_null(reasons);
	assert_non_null(denials);
	assert_int_equal(verdict_to_json(&v, &d, reasons, denials), 0);
	assert_int_equal(json_object_array_length(reasons), VERDICT_MAX_REASONS + 1);
	assert_int_equal(json_object_array_length(denials), VERDICT_MAX_REASONS + 1);
	last = json_object_array_get_idx(reasons, VERDICT_MAX_REASONS);
	/* 128 * 4 of the programs, 1 of the map (of maps: the type is no grant either) ... */
	assert_non_null(strstr(json_object_get_string(last), " more reasons"));
	assert_string_equal(
		json_object_get_string(json_object_object_get(
			json_object_array_get_idx(denials, VERDICT_MAX_REASONS), "key")),
		"");
	/* Entries name kind, name and key; the sentence is reasons[i]. */
	entry = json_object_array_get_idx(denials, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(entry, "kind")),
			    "object");
	assert_string_equal(json_object_get_string(json_object_object_get(entry, "key")),
			    "max_programs");
	assert_null(json_object_object_get(entry, "reason"));
	entry = json_object_array_get_idx(denials, 1);
	assert_string_equal(json_object_get_string(json_object_object_get(entry, "kind")),
			    "program");
	assert_string_equal(json_object_get_string(json_object_object_get(entry, "name")), "p");
	assert_string_equal(json_object_get_string(json_object_object_get(entry, "key")),
			    "program_types: xdp");
	assert_null(json_object_object_get(entry, "reason"));

	bytes = strlen(json_object_to_json_string(reasons)) +
		strlen(json_object_to_json_string(denials));
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		text = verdict_item_text(&v.programs[i]);
		assert_non_null(text);
		bytes += strlen(text);
		free(text);
	}
	assert_true(bytes < 1024 * 1024 / 2);

	/* An item with more reasons than a verdict joins. */
	{
		struct verdict_item it = {.allowed = true};

		for (int i = 0; i < VERDICT_MAX_ITEM_REASONS + 3; i++)
			assert_int_equal(verdict_item_deny(&it, "k", "r%d", i), 0);
		text = verdict_item_text(&it);
		assert_non_null(text);
		assert_non_null(strstr(text, "r15 (policy key k); and 3 more reasons"));
		assert_null(strstr(text, "r16"));
		free(text);
		verdict_item_done(&it);
	}
	json_object_put(reasons);
	json_object_put(denials);
	policy_verdict_done(&v);
	policy_grant_free(g);
	policy_free(p);
}

static void test_decide_all_reasons(void **state)
{
	struct policy *p = load(decide_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	/* Sorted by id, as the inspection gives them. */
	static int helpers[] = {BPF_FUNC_map_lookup_elem, BPF_FUNC_get_current_pid_tgid,
				BPF_FUNC_probe_read_kernel, BPF_FUNC_probe_read_kernel_str};
	char *ksyms[] = {"bpf_prog_active", "jiffies"};
	struct object_program progs[] = {
		prog("x", BPF_PROG_TYPE_XDP, true, 5000),
		prog("b", BPF_PROG_TYPE_SOCKET_FILTER, true, 10),
		prog("c", BPF_PROG_TYPE_SOCKET_FILTER, true, 10),
	};
	struct object_map maps[] = {
		map("big", 1001, true),
		map("rb", 1, false),
		map("dev", 1, false),
		map("outer", 1, false),
	};
	struct object_desc d = {
		.object_bytes = 10001,
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
		.maps = maps,
		.n_maps = ARRAY_SIZE(maps),
	};
	struct policy_verdict v = {};
	const struct verdict_item *x;

	progs[0].helpers = helpers;
	progs[0].n_helpers = ARRAY_SIZE(helpers);
	progs[0].kfuncs = kfuncs_rcu;
	progs[0].n_kfuncs = 1;
	progs[0].ksyms = ksyms;
	progs[0].n_ksyms = 2;
	maps[1].map_type = BPF_MAP_TYPE_RINGBUF;
	maps[1].key_size = maps[1].value_size = 0;
	maps[1].max_entries = 4096;
	maps[2].map_type = BPF_MAP_TYPE_DEVMAP;
	maps[2].map_flags = 1u << 16;
	maps[3].map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
	maps[3].inner_map_type = BPF_MAP_TYPE_PROG_ARRAY;

	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_false(v.allowed);

	assert_int_equal(v.object.n_reasons, 3);
	assert_reason(&v.object, 0,
		      "object is 10001 bytes, over your limit of 10000 (policy key "
		      "max_object_bytes)",
		      "max_object_bytes");
	assert_reason(&v.object, 1,
		      "object loads 3 programs, over your limit of 2 (policy key max_programs)",
		      "max_programs");
	assert_reason(&v.object, 2, "object has 4 maps, over your limit of 3 (policy key max_maps)",
		      "max_maps");
	/* The one line for callers that want one: the first reason. */
	assert_string_equal(policy_verdict_first_reason(&v), v.object.reasons[0].text);
	assert_string_equal(v.object.reason, v.object.reasons[0].text);

	x = &v.programs[0];
	assert_int_equal(x->n_reasons, 6);
	assert_reason(x, 0,
		      "program \"x\" has type xdp, which your policy does not allow (policy key "
		      "program_types: xdp)",
		      "program_types: xdp");
	assert_reason(x, 1,
		      "program \"x\" has 5000 instructions, over your limit of 100 (policy key "
		      "max_insns_per_program)",
		      "max_insns_per_program");
	/* One reason per class, naming every helper of it. */
	assert_reason(x, 2,
		      "program \"x\" calls bpf_get_current_pid_tgid (class current_task), which "
		      "your policy does not allow (policy key helper_classes: current_task)",
		      "helper_classes: current_task");
	assert_reason(x, 3,
		      "program \"x\" calls bpf_probe_read_kernel, bpf_probe_read_kernel_str (class "
		      "read_kernel_memory), which your policy does not allow (policy key "
		      "helper_classes: read_kernel_memory)",
		      "helper_classes: read_kernel_memory");
	assert_reason(x, 4,
		      "program \"x\" calls kfunc bpf_rcu_read_lock (class kfunc), which your "
		      "policy does not allow (policy key helper_classes: kfunc)",
		      "helper_classes: kfunc");
	assert_reason(x, 5,
		      "program \"x\" references kernel symbols bpf_prog_active, jiffies (class "
		      "read_kernel_memory), which your policy does not allow (policy key "
		      "helper_classes: read_kernel_memory)",
		      "helper_classes: read_kernel_memory");
	assert_true(v.programs[1].allowed);
	assert_int_equal(v.programs[1].n_reasons, 0);
	assert_null(v.programs[1].reason);

	assert_int_equal(v.maps[0].n_reasons, 2);
	assert_reason(&v.maps[0], 0,
		      "map \"big\" has 1001 entries, over your limit of 1000 (policy key "
		      "max_map_entries)",
		      "max_map_entries");
	assert_reason(&v.maps[0], 1,
		      "map \"big\" is pinned by name, which your policy does not allow (policy "
		      "key pinning)",
		      "pinning");
	/* A ring buffer's max_entries is its size in bytes. */
	assert_int_equal(v.maps[1].n_reasons, 1);
	assert_reason(&v.maps[1], 0,
		      "ring buffer \"rb\" is 4096 bytes, over your limit of 1000 (policy key "
		      "max_map_entries, which limits a ring buffer's size in bytes)",
		      "max_map_entries");
	/* A flag no policy grants has no key. */
	assert_int_equal(v.maps[2].n_reasons, 2);
	assert_reason(&v.maps[2], 0,
		      "map \"dev\" has flags 0x10000 the broker does not allow (it allows "
		      "0x1fff)",
		      "");
	assert_reason(&v.maps[2], 1,
		      "map \"dev\" has type devmap, which your policy does not allow (types "
		      "beyond plain data are granted by name, in map_types) (policy key "
		      "map_types: devmap)",
		      "map_types: devmap");
	assert_int_equal(v.maps[3].n_reasons, 2);
	assert_reason(&v.maps[3], 0,
		      "map \"outer\" is a map of maps, which your policy does not allow (it "
		      "would let your programs write any map you hold a read-only fd of) (policy "
		      "key map_types: array_of_maps)",
		      "map_types: array_of_maps");
	assert_reason(&v.maps[3], 1,
		      "map \"outer\"'s inner map has type prog_array, which your policy does not "
		      "allow (types beyond plain data are granted by name, in map_types) (policy "
		      "key map_types: prog_array)",
		      "map_types: prog_array");
	policy_verdict_done(&v);

	/* A reason names at most 16 symbols: an object may reference thousands. */
	{
		char *many[20];

		for (size_t i = 0; i < ARRAY_SIZE(many); i++)
			many[i] = "jiffies";
		progs[0].ksyms = many;
		progs[0].n_ksyms = ARRAY_SIZE(many);
		assert_int_equal(policy_decide(g, &d, &v), 0);
		assert_non_null(strstr(v.programs[0].reasons[5].text,
				       "jiffies, jiffies and 4 more (class read_kernel_memory)"));
		policy_verdict_done(&v);
	}

	/* No rule: the key is the rule's match. */
	policy_grant_free(g);
	g = resolve(p, 1001, 1001, NULL, 0);
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_reason(&v.object, 0,
		      "no policy rule matches uid 1001; the broker allows nothing (policy key "
		      "match)",
		      "match");
	policy_verdict_done(&v);
	policy_grant_free(g);
	policy_free(p);
}

static void test_decide_kfunc_and_pinning_granted(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"0-4294967294\"]},"
				"\"allow\":{\"program_types\":[\"raw_tracepoint\"],"
				"\"program_fds\":[\"raw_tracepoint\"],"
				"\"helper_classes\":[\"base\",\"kfunc\"],\"pinning\":true}}]}",
				NULL);
	struct policy_grant *g = resolve(p, 4242, 4242, NULL, 0);
	struct object_program progs[] = {prog("x", BPF_PROG_TYPE_RAW_TRACEPOINT, true, 10)};
	struct object_map maps[] = {map("pins", 10, true)};
	struct object_desc d = {
		.programs = progs,
		.n_programs = 1,
		.maps = maps,
		.n_maps = 1,
	};
	struct policy_verdict v = {};

	progs[0].kfuncs = kfuncs_rcu;
	progs[0].n_kfuncs = 1;
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_true(v.allowed);
	assert_true(v.prog_fd[0]);
	/* No map patterns: the map loads but no fd is handed out. */
	assert_int_equal(v.map_access[0], MAP_ACCESS_NONE);
	policy_verdict_done(&v);
	policy_grant_free(g);
	policy_free(p);
}

static void test_decide_no_rule(void **state)
{
	struct policy *p = policy_new();
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	struct object_program progs[] = {
		prog("filter", BPF_PROG_TYPE_SOCKET_FILTER, true, 1),
		prog("off", BPF_PROG_TYPE_SOCKET_FILTER, false, 1),
	};
	struct object_map maps[] = {map("m", 1, false)};
	struct object_desc d = {
		.object_bytes = 1,
		.programs = progs,
		.n_programs = ARRAY_SIZE(progs),
		.maps = maps,
		.n_maps = ARRAY_SIZE(maps),
	};
	struct policy_verdict v = {};

	assert_false(g->matched);
	assert_int_equal(g->n_sources, 0);
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_false(policy_grant_prog_fd(g, BPF_PROG_TYPE_SOCKET_FILTER));
	assert_int_equal(policy_grant_map_access(g, "m"), MAP_ACCESS_NONE);

	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_false(v.allowed);
	assert_false(v.object.allowed);
	assert_string_equal(
		v.object.reason,
		"no policy rule matches uid 1000; the broker allows nothing (policy key match)");
	assert_string_equal(policy_verdict_first_reason(&v), v.object.reason);
	assert_false(v.programs[0].allowed);
	assert_non_null(v.programs[0].reason);
	assert_true(v.programs[1].allowed); /* not loaded */
	assert_false(v.maps[0].allowed);
	assert_non_null(v.maps[0].reason);
	assert_false(v.prog_fd[0]);
	assert_int_equal(v.map_access[0], MAP_ACCESS_NONE);
	policy_verdict_done(&v);

	/* Even an empty object is denied. */
	d = (struct object_desc){};
	assert_denied(
		g, &d,
		"no policy rule matches uid 1000; the broker allows nothing (policy key match)");

	policy_grant_free(g);
	policy_free(p);
}

/* ---- Lifecycle grants: test runs, attach targets, sharing, quotas ---- */

static const char lifecycle_json[] =
	"{\"rules\":["
	"{\"match\":{\"uids\":[\"1000\"]},"
	" \"allow\":{\"program_types\":[\"cgroup_skb\"],\"test_run_types\":[\"raw_tracepoint\"],"
	"  \"helper_classes\":[\"base\"],"
	"  \"attach\":{\"cgroups\":true,\"tracepoints\":[\"sched:sched_*\"],"
	"   \"raw_tracepoints\":[\"sys_enter\"],\"interfaces\":[\"veth*\"],"
	"   \"host_interfaces\":[\"eth1\"]},"
	"  "
	"\"shared\":[{\"owner\":\"0\",\"object\":\"count*\",\"map\":\"counts\",\"access\":\"ro\"}]}"
	","
	" \"limits\":{\"max_named_objects\":2,\"max_loads_per_minute\":5}},"
	"{\"match\":{\"uids\":[\"1000\"]},"
	" \"allow\":{\"shared\":[{\"owner\":\"root\",\"object\":\"counter\",\"map\":\"c*\","
	"  \"access\":\"wo\"}]},"
	" \"limits\":{\"max_named_objects\":1,\"max_map_memory_bytes\":4096}}"
	"]}";

static void test_lifecycle_grants(void **state)
{
	struct policy *p = load(lifecycle_json, NULL);
	struct policy_grant *g = resolve(p, 1000, 1000, NULL, 0);
	struct policy_grant *other = resolve(p, 1001, 1001, NULL, 0);
	struct object_program progs[] = {
		prog("egress", BPF_PROG_TYPE_CGROUP_SKB, true, 10),
		prog("trace", BPF_PROG_TYPE_RAW_TRACEPOINT, true, 10),
	};
	struct object_desc d = {.programs = progs, .n_programs = ARRAY_SIZE(progs)};
	struct policy_verdict v = {};
	_cleanup_free_ char *reason = NULL;
	json_object *j;

	/* test_run types load, but only for test runs: never an fd. */
	assert_true(policy_grant_test_run(g, BPF_PROG_TYPE_RAW_TRACEPOINT));
	assert_true(policy_grant_test_run(g, BPF_PROG_TYPE_CGROUP_SKB));
	assert_false(policy_grant_prog_type(g, BPF_PROG_TYPE_RAW_TRACEPOINT));
	assert_false(policy_grant_test_run(g, BPF_PROG_TYPE_XDP));
	assert_int_equal(policy_decide(g, &d, &v), 0);
	assert_true(v.allowed);
	assert_false(v.test_run_only[0]);
	assert_true(v.test_run_only[1]);
	assert_false(v.prog_fd[1]);
	policy_verdict_done(&v);
	reason = decide_reason(other, &d);
	assert_non_null(reason);

	/* Attach targets: only what is listed; names outside the safe alphabet never match. */
	assert_true(policy_grant_attach_cgroup(g, BPF_CGROUP_INET_EGRESS));
	assert_true(policy_grant_attach_cgroup(g, BPF_CGROUP_DEVICE));
	/* Hooks that rewrite what (setuid) programs in the cgroup see: only by name. */
	assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_INET4_CONNECT));
	assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_SYSCTL));
	assert_false(policy_grant_attach_cgroup(other, BPF_CGROUP_INET_EGRESS));
	assert_true(policy_grant_attach_tracepoint(g, "sched:sched_switch"));
	assert_false(policy_grant_attach_tracepoint(g, "syscalls:sys_enter_openat"));
	assert_false(policy_grant_attach_tracepoint(g, "sched:sched_*"));
	assert_false(policy_grant_attach_tracepoint(g, "sched:../../x"));
	assert_false(policy_grant_attach_tracepoint(g, "sched_switch"));
	assert_true(policy_grant_attach_raw_tracepoint(g, "sys_enter"));
	assert_false(policy_grant_attach_raw_tracepoint(g, "sys_exit"));
	assert_false(policy_grant_attach_raw_tracepoint(other, "sys_enter"));
	assert_true(policy_grant_attach_interface(g, "veth0"));
	assert_false(policy_grant_attach_interface(g, "eth0"));
	assert_false(policy_grant_attach_interface(g, "veth*"));
	assert_false(policy_grant_attach_interface(g, "veth/../x"));
	assert_false(policy_grant_attach_interface(g, "veth0123456789abc"));
	assert_false(policy_grant_attach_interface(other, "veth0"));
	/* Interfaces in network namespaces the caller does not own are a grant of their own. */
	assert_true(policy_grant_attach_host_interface(g, "eth1"));
	assert_false(policy_grant_attach_host_interface(g, "veth0"));
	assert_false(policy_grant_attach_interface(g, "eth1"));
	assert_false(policy_grant_attach_host_interface(other, "eth1"));
	/* Uprobes only where a rule says so. */
	assert_false(policy_grant_attach_uprobes(g));

	/* Shared access: per owner, object and map; rules combine as a union. */
	assert_int_equal(policy_grant_shared_access(g, 0, "counter", "counts"), MAP_ACCESS_RW);
	assert_int_equal(policy_grant_shared_access(g, 0, "counting", "counts"), MAP_ACCESS_RO);
	assert_int_equal(policy_grant_shared_access(g, 0, "counter", "config"), MAP_ACCESS_WO);
	assert_int_equal(policy_grant_shared_access(g, 0, "other", "counts"), MAP_ACCESS_NONE);
	assert_int_equal(policy_grant_shared_access(g, 1, "counter", "counts"), MAP_ACCESS_NONE);
	assert_int_equal(policy_grant_shared_access(other, 0, "counter", "counts"),
			 MAP_ACCESS_NONE);

	/* Quotas: per limit the largest of the matching rules, a rule that omits it
	 * counting as the default (so the second rule's silence lifts loads to 120). */
	assert_int_equal(g->limits.max_named_objects, 2);
	assert_int_equal(g->limits.max_loads_per_minute, POLICY_DEFAULT_MAX_LOADS_PER_MINUTE);
	assert_int_equal(g->limits.max_map_memory_bytes, POLICY_DEFAULT_MAX_MAP_MEMORY_BYTES);
	assert_int_equal(g->limits.max_loaded_programs, POLICY_DEFAULT_MAX_LOADED_PROGRAMS);

	j = policy_grant_to_json(g);
	assert_non_null(j);
	assert_non_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			       "\"test_run_types\":[\"raw_tracepoint\"]"));
	assert_non_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			       "\"max_named_objects\":2"));
	assert_non_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			       "\"tracepoints\":[\"sched:sched_*\"]"));
	json_object_put(j);
	policy_grant_free(other);
	policy_grant_free(g);
	policy_free(p);
}

static void test_cgroup_attach_list(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
				"{\"cgroups\":[\"cgroup_inet4_connect\"]}}}]}",
				NULL);
	struct policy_grant *g = resolve(p, 1, 1, NULL, 0);

	assert_true(policy_grant_attach_cgroup(g, BPF_CGROUP_INET4_CONNECT));
	assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_INET_EGRESS));
	policy_grant_free(g);
	policy_free(p);
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
		"{\"cgroups\":[\"xdp\"]}}}]}",
		"e.json: rules[0].allow.attach.cgroups[0]: \"xdp\" is not a cgroup attach "
		"type (such as cgroup_inet_egress, cgroup_device or cgroup_inet4_connect)");
}

/* The value of enumerator name of enum type in the running kernel's BTF, or -1. */
static int kernel_enum_value(const char *type, const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id = btf ? btf__find_by_name_kind(btf, type, BTF_KIND_ENUM) : -1, v = -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;

	for (unsigned i = 0; t && i < btf_vlen(t); i++)
		if (strcmp(btf__name_by_offset(btf, btf_enum(t)[i].name_off), name) == 0)
			v = btf_enum(t)[i].val;
	btf__free(btf);
	return v;
}

/*
 * Attach types newer than libbpf 1.1.2 (cgroup_unix_sendmsg is 50 on this
 * kernel's BTF): named as the kernel names them, or by number, the same
 * type; granted only when named, like any other.
 */
static void test_cgroup_attach_kernel_names(void **state)
{
	int unix_sendmsg = kernel_enum_value("bpf_attach_type", "BPF_CGROUP_UNIX_SENDMSG");
	struct policy *p;
	struct policy_grant *g;
	json_object *j;

	if (unix_sendmsg < 0)
		skip(); /* no kernel BTF, or a kernel without the hook */
	assert_int_equal(attach_type_from_string("cgroup_unix_sendmsg"), unix_sendmsg);
	assert_int_equal(attach_type_from_string("50"), unix_sendmsg);
	/* libbpf's name where libbpf knows the value; numbers of names it knows too. */
	assert_int_equal(attach_type_from_string("cgroup_inet_egress"), BPF_CGROUP_INET_EGRESS);
	assert_int_equal(attach_type_from_string("1"), BPF_CGROUP_INET_EGRESS);
	assert_int_equal(attach_type_from_string("01"), -EINVAL);
	assert_int_equal(attach_type_from_string("-1"), -EINVAL);
	assert_int_equal(attach_type_from_string("63"), -EINVAL);
	assert_int_equal(attach_type_from_string("64"), -EINVAL);
	assert_int_equal(attach_type_from_string("__max_bpf_attach_type"), -EINVAL);
	assert_int_equal(attach_type_from_string(""), -EINVAL);

	p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
		 "{\"cgroups\":[\"cgroup_unix_sendmsg\"]}}}]}",
		 NULL);
	g = resolve(p, 1, 1, NULL, 0);
	assert_true(policy_grant_attach_cgroup(g, unix_sendmsg));
	assert_false(policy_grant_attach_cgroup(g, unix_sendmsg - 1));
	assert_false(policy_grant_attach_cgroup(g, BPF_CGROUP_UDP4_SENDMSG));
	j = policy_grant_to_json(g);
	assert_non_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			       "\"cgroups\":[\"cgroup_unix_sendmsg\"]"));
	json_object_put(j);
	policy_grant_free(g);
	policy_free(p);
	p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
		 "{\"cgroups\":[\"50\"]}}}]}",
		 NULL);
	g = resolve(p, 1, 1, NULL, 0);
	assert_true(policy_grant_attach_cgroup(g, unix_sendmsg));
	policy_grant_free(g);
	policy_free(p);
	/* A kernel-only name that is no cgroup hook is refused as xdp is. */
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"cgroups\":[\"tcx_ingress\"]}}}]}",
			   "e.json: rules[0].allow.attach.cgroups[0]: \"tcx_ingress\" is not a "
			   "cgroup attach type (such as cgroup_inet_egress, cgroup_device or "
			   "cgroup_inet4_connect)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"cgroups\":[\"cgroup_unix_nope\"]}}}]}",
			   "e.json: rules[0].allow.attach.cgroups[0]: \"cgroup_unix_nope\" is not "
			   "a cgroup attach type (such as cgroup_inet_egress, cgroup_device or "
			   "cgroup_inet4_connect)");
}

static void test_uprobes_grant(void **state)
{
	struct policy *p = load("{\"rules\":["
				"{\"match\":{\"uids\":[\"1\",\"2\"]},\"allow\":{\"attach\":"
				"{\"uprobes\":false}}},"
				"{\"match\":{\"uids\":[\"2\"]},\"allow\":{\"attach\":"
				"{\"uprobes\":true}}}]}",
				NULL);
	struct policy_grant *one = resolve(p, 1, 1, NULL, 0), *two = resolve(p, 2, 2, NULL, 0);
	json_object *j;

	/* A grant in one rule is not taken away by another's false. */
	assert_false(policy_grant_attach_uprobes(one));
	assert_true(policy_grant_attach_uprobes(two));
	j = policy_grant_to_json(two);
	assert_non_null(strstr(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
			       "\"uprobes\":true"));
	json_object_put(j);
	policy_grant_free(one);
	policy_grant_free(two);
	policy_free(p);
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"uprobes\":\"yes\"}}}]}",
			   "e.json: rules[0].allow.attach.uprobes: expected true or false, got a "
			   "string");
}

static void test_lifecycle_parse_errors(void **state)
{
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"tracepoints\":[\"../x\"]}}}]}",
			   "e.json: rules[0].allow.attach.tracepoints[0]: \"../x\" is not a valid "
			   "tracepoint (CATEGORY:NAME) pattern");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"raw_tracepoints\":[\"a:b\"]}}}]}",
			   "e.json: rules[0].allow.attach.raw_tracepoints[0]: \"a:b\" is not a "
			   "valid raw tracepoint pattern");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"attach\":"
			   "{\"cgroup\":true}}}]}",
			   "e.json: rules[0].allow.attach: unknown key \"cgroup\" (expected "
			   "cgroups, tracepoints, raw_tracepoints, interfaces, host_interfaces or "
			   "uprobes)");
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"shared\":"
		"[{\"owner\":\"0\",\"object\":\"x\",\"map\":\"y\",\"access\":\"rx\"}]}}]}",
		"e.json: rules[0].allow.shared[0].access: unknown access \"rx\" "
		"(expected rw, ro, wo or none)");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"shared\":"
			   "[{\"owner\":\"0\",\"map\":\"y\",\"access\":\"ro\"}]}}]}",
			   "e.json: rules[0].allow.shared[0]: missing key \"object\"");
	assert_parse_error("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"limits\":"
			   "{\"max_named_objects\":5000}}]}",
			   "e.json: rules[0].limits.max_named_objects: 5000 is over the hard "
			   "ceiling of 4096");
}

static void test_load_with_perfmon(void **state)
{
	struct policy *p =
		load("{\"rules\":[{\"match\":{\"uids\":[\"1\",\"2\"]}},"
		     "{\"match\":{\"uids\":[\"2\"]},\"allow\":{\"load_with_perfmon\":true}}]}",
		     NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	json_object *o = policy_grant_to_json(g2), *v;

	/* Off unless a matching rule says so; one rule saying so is enough. */
	assert_false(g1->load_with_perfmon);
	assert_true(g2->load_with_perfmon);
	assert_true(json_object_object_get_ex(o, "load_with_perfmon", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	assert_parse_error(
		ALLOW("\"load_with_perfmon\":1"),
		"e.json: rules[0].allow.load_with_perfmon: expected true or false, got an "
		"integer");
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_free(p);
}

static void test_maps_of_maps(void **state)
{
	struct policy *p =
		load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]}},"
		     "{\"match\":{\"uids\":[\"2\"]},\"allow\":{\"maps_of_maps\":true}}]}",
		     NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	struct object_map maps[] = {map("outer", 1, false)};
	struct object_desc d = {.maps = maps, .n_maps = 1};
	char *reason;

	maps[0].map_type = BPF_MAP_TYPE_HASH_OF_MAPS;
	assert_denied(g1, &d,
		      "map \"outer\" is a map of maps, which your policy does not allow (it would "
		      "let your programs write any map you hold a read-only fd of) (policy key "
		      "map_types: hash_of_maps)");
	reason = decide_reason(g2, &d);
	assert_null(reason);
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_free(p);
}

/* A map of maps' inner map is a map: its entries, flags and memory count. */
static void test_inner_map_limits(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":"
				"{\"maps_of_maps\":true},\"limits\":{\"max_map_entries\":100}}]}",
				NULL);
	struct policy_grant *g = resolve(p, 1, 1, NULL, 0);
	struct object_map maps[] = {map("outer", 1, false)};
	struct object_desc d = {.maps = maps, .n_maps = 1};
	char *reason;

	maps[0].map_type = BPF_MAP_TYPE_HASH_OF_MAPS;
	maps[0].inner_map_type = BPF_MAP_TYPE_ARRAY;
	maps[0].inner_key_size = 4;
	maps[0].inner_value_size = 8;
	maps[0].inner_max_entries = 100;
	reason = decide_reason(g, &d);
	assert_null(reason);
	assert_int_equal(policy_map_inner_memory_estimate(&maps[0], 2), 8192 + 100 * 8);
	maps[0].inner_max_entries = 101;
	assert_denied(
		g, &d,
		"map \"outer\"'s inner map has 101 entries, over your limit of 100 (policy key "
		"max_map_entries)");
	maps[0].inner_max_entries = 1;
	maps[0].inner_map_flags = 1u << 16; /* BPF_F_TOKEN_FD */
	reason = decide_reason(g, &d);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "map \"outer\"'s inner map has flags 0x10000 the broker "
				       "does not allow"));
	free(reason);
	maps[0].inner_map_flags = 0;
	maps[0].inner_map_type = BPF_MAP_TYPE_CGROUP_ARRAY;
	assert_denied(g, &d,
		      "map \"outer\"'s inner map has type cgroup_array, which your policy does "
		      "not allow (types beyond plain data are granted by name, in map_types) "
		      "(policy key map_types: cgroup_array)");
	maps[0].inner_map_type = 0;
	assert_int_equal(policy_map_inner_memory_estimate(&maps[0], 2), 0);
	policy_grant_free(g);
	policy_free(p);
}

/* Map types: plain data by default, everything else only by name. */
static void test_map_types(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\",\"2\"]}},"
				"{\"match\":{\"uids\":[\"2\"]},\"allow\":{\"map_types\":"
				"[\"prog_array\",\"array_of_maps\"]}}]}",
				NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	struct object_map maps[] = {map("m", 1, false)};
	struct object_desc d = {.maps = maps, .n_maps = 1};
	static const int plain[] = {
		BPF_MAP_TYPE_HASH,	   BPF_MAP_TYPE_ARRAY,	     BPF_MAP_TYPE_PERCPU_HASH,
		BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_LRU_HASH,    BPF_MAP_TYPE_LRU_PERCPU_HASH,
		BPF_MAP_TYPE_LPM_TRIE,	   BPF_MAP_TYPE_QUEUE,	     BPF_MAP_TYPE_STACK,
		BPF_MAP_TYPE_RINGBUF,	   BPF_MAP_TYPE_BLOOM_FILTER};
	json_object *o;
	char *reason;

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		assert_true(policy_grant_map_type(g1, plain[i]));
	/* Everything else is named, one type at a time, and unknown types never are. */
	for (int t = 0; t < 64; t++) {
		bool is_plain = false;

		for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
			is_plain = is_plain || plain[i] == t;
		assert_int_equal(policy_grant_map_type(g1, t), is_plain);
	}
	maps[0].map_type = BPF_MAP_TYPE_STRUCT_OPS;
	assert_denied(g1, &d,
		      "map \"m\" has type struct_ops, which your policy does not allow (types "
		      "beyond plain data are granted by name, in map_types) (policy key map_types: "
		      "struct_ops)");
	assert_denied(g2, &d,
		      "map \"m\" has type struct_ops, which your policy does not allow (types "
		      "beyond plain data are granted by name, in map_types) (policy key map_types: "
		      "struct_ops)");
	maps[0].map_type = BPF_MAP_TYPE_CPUMAP;
	assert_denied(g1, &d,
		      "map \"m\" has type cpumap, which your policy does not allow (types "
		      "beyond plain data are granted by name, in map_types) (policy key map_types: "
		      "cpumap)");
	maps[0].map_type = 99;
	assert_denied(g2, &d, "map \"m\" has unknown type 99, which your policy does not allow");
	maps[0].map_type = BPF_MAP_TYPE_PROG_ARRAY;
	reason = decide_reason(g2, &d);
	assert_null(reason);
	/* Naming a map of maps type is granting maps of maps. */
	assert_true(policy_grant_map_type(g2, BPF_MAP_TYPE_ARRAY_OF_MAPS));
	assert_false(policy_grant_map_type(g1, BPF_MAP_TYPE_ARRAY_OF_MAPS));
	o = policy_grant_to_json(g2);
	assert_non_null(strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			       "\"prog_array\""));
	json_object_put(o);
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_free(p);
	assert_parse_error(ALLOW("\"map_types\":[\"sockmapp\"]"),
			   "e.json: rules[0].allow.map_types[0]: unknown map type \"sockmapp\" "
			   "(expected a libbpf name such as prog_array, perf_event_array, "
			   "stack_trace or array_of_maps)");
}

/*
 * Helper classes that act on the current task cover only programs that run
 * in the caller's own processes: kprobe-type programs the broker attaches
 * as uprobes. Elsewhere the *_any_task class is needed.
 */
static void test_task_classes(void **state)
{
	struct policy *p =
		load("{\"rules\":[{\"match\":{\"uids\":[\"1\",\"2\",\"3\"]},\"allow\":{"
		     "\"program_types\":[\"kprobe\",\"tracepoint\",\"raw_tracepoint\"],"
		     "\"helper_classes\":[\"base\",\"read_user_memory\",\"write_user_memory\","
		     "\"signal\",\"current_task\"]}},"
		     "{\"match\":{\"uids\":[\"2\"]},\"allow\":{\"program_types\":[\"kprobe\"],"
		     "\"program_fds\":[\"kprobe\"]}},"
		     "{\"match\":{\"uids\":[\"3\"]},\"allow\":{\"helper_classes\":"
		     "[\"read_user_memory_any_task\"]}}]}",
		     NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	struct policy_grant *g3 = resolve(p, 3, 3, NULL, 0);
	int read_user[] = {BPF_FUNC_probe_read_user};
	struct object_program progs[] = {prog("tp", BPF_PROG_TYPE_TRACEPOINT, true, 10)};
	struct object_desc d = {.programs = progs, .n_programs = 1};

	/* A uprobe (kprobe type, no fd): the caller's own process. */
	assert_true(policy_prog_runs_in_callers_task(g1, BPF_PROG_TYPE_KPROBE));
	assert_true(policy_grant_helper(g1, BPF_PROG_TYPE_KPROBE, BPF_FUNC_probe_read_user));
	assert_true(policy_grant_helper(g1, BPF_PROG_TYPE_KPROBE, BPF_FUNC_probe_write_user));
	assert_true(policy_grant_helper(g1, BPF_PROG_TYPE_KPROBE, BPF_FUNC_send_signal));
	/* Anyone's task: tracepoints, raw tracepoints. */
	for (int t = 0; t < 64; t++) {
		if (t == BPF_PROG_TYPE_KPROBE)
			continue;
		assert_false(policy_prog_runs_in_callers_task(g1, t));
		assert_false(policy_grant_helper(g1, t, BPF_FUNC_probe_read_user));
		assert_false(policy_grant_helper(g1, t, BPF_FUNC_probe_write_user));
		assert_false(policy_grant_helper(g1, t, BPF_FUNC_send_signal));
		/* Classes that mean the same everywhere are unaffected. */
		assert_true(policy_grant_helper(g1, t, BPF_FUNC_get_current_pid_tgid));
		assert_true(policy_grant_helper(g1, t, BPF_FUNC_map_lookup_elem));
	}
	/* With the kprobe fd the caller attaches it anywhere: anyone's task. */
	assert_false(policy_prog_runs_in_callers_task(g2, BPF_PROG_TYPE_KPROBE));
	assert_false(policy_grant_helper(g2, BPF_PROG_TYPE_KPROBE, BPF_FUNC_probe_read_user));
	/* The explicit class covers every program type, and nothing else. */
	assert_true(policy_grant_helper(g3, BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_user));
	assert_false(policy_grant_helper(g3, BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_write_user));
	progs[0].helpers = read_user;
	progs[0].n_helpers = 1;
	assert_denied(
		g1, &d,
		"program \"tp\" calls bpf_probe_read_user (class read_user_memory), which "
		"acts on the task the program runs in: class read_user_memory covers "
		"only programs that run in your own processes (uprobes the broker "
		"attaches), and a tracepoint program runs in anyone's; that needs class "
		"read_user_memory_any_task (policy key helper_classes: read_user_memory_any_task)");
	assert_null(decide_reason(g3, &d));
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_grant_free(g3);
	policy_free(p);
}

/*
 * The key a denial names is one that lets the helper through: for a program
 * that runs in anyone's task the *_any_task class, whether or not the plain
 * class is granted (granting the plain one would change nothing); for a
 * uprobe the plain class.
 */
static void test_task_class_keys(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{"
				"\"program_types\":[\"kprobe\",\"tracepoint\"],"
				"\"helper_classes\":[\"base\"]}}]}",
				NULL);
	struct policy_grant *g = resolve(p, 1, 1, NULL, 0);
	int read_user[] = {BPF_FUNC_probe_read_user};
	struct object_program progs[] = {prog("tp", BPF_PROG_TYPE_TRACEPOINT, true, 10)};
	struct object_desc d = {.programs = progs, .n_programs = 1};
	bool any_task;
	char *reason;

	progs[0].helpers = read_user;
	progs[0].n_helpers = 1;
	assert_int_equal(policy_helper_class_needed(g, BPF_PROG_TYPE_TRACEPOINT,
						    BPF_FUNC_probe_read_user, &any_task),
			 HELPER_CLASS_READ_USER_MEMORY_ANY_TASK);
	assert_true(any_task);
	reason = decide_reason(g, &d);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "(policy key helper_classes: read_user_memory_any_task)"));
	free(reason);
	/* A uprobe: the plain class is the one to grant. */
	assert_int_equal(policy_helper_class_needed(g, BPF_PROG_TYPE_KPROBE,
						    BPF_FUNC_probe_read_user, &any_task),
			 HELPER_CLASS_READ_USER_MEMORY);
	assert_false(any_task);
	progs[0].prog_type = BPF_PROG_TYPE_KPROBE;
	reason = decide_reason(g, &d);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "(policy key helper_classes: read_user_memory)"));
	free(reason);
	policy_grant_free(g);
	policy_free(p);
}

/* Past a hard ceiling no policy can raise, a denial names no key, and says why. */
static void test_limit_over_ceiling(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{"
				"\"program_types\":[\"socket_filter\"]},\"limits\":"
				"{\"max_maps\":16}}]}",
				NULL);
	struct policy_grant *g = resolve(p, 1, 1, NULL, 0);
	struct object_map maps[POLICY_HARD_MAX_MAPS + 1];
	struct object_desc d = {.maps = maps};
	char note[128];
	char *reason;

	for (size_t i = 0; i < ARRAY_SIZE(maps); i++)
		maps[i] = map("m", 1, false);
	assert_string_equal(policy_limit_key("max_maps", 17, note, sizeof(note)), "max_maps");
	assert_string_equal(note, "");
	assert_string_equal(policy_limit_key("max_maps", POLICY_HARD_MAX_MAPS, note, sizeof(note)),
			    "max_maps");
	assert_string_equal(
		policy_limit_key("max_maps", POLICY_HARD_MAX_MAPS + 1, note, sizeof(note)), "");
	assert_non_null(strstr(note, "hard ceiling of 120 for max_maps"));
	assert_string_equal(policy_limit_key("max_programs", 1000, note, sizeof(note)), "");
	/* The quotas and the rate the daemon checks outside the verdict. */
	assert_string_equal(policy_limit_key("max_map_memory_bytes",
					     POLICY_HARD_MAX_MAP_MEMORY_BYTES, note, sizeof(note)),
			    "max_map_memory_bytes");
	assert_string_equal(policy_limit_key("max_map_memory_bytes",
					     POLICY_HARD_MAX_MAP_MEMORY_BYTES + 1, note,
					     sizeof(note)),
			    "");
	assert_string_equal(policy_limit_key("max_loads_per_minute",
					     POLICY_HARD_MAX_LOADS_PER_MINUTE + 1, note,
					     sizeof(note)),
			    "");
	assert_non_null(strstr(note, "which no policy can raise"));
	/* Under the ceiling the key would do. */
	d.n_maps = 17;
	reason = decide_reason(g, &d);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "over your limit of 16 (policy key max_maps)"));
	free(reason);
	d.n_maps = ARRAY_SIZE(maps);
	reason = decide_reason(g, &d);
	assert_non_null(reason);
	assert_non_null(strstr(reason, "which no policy can raise"));
	assert_null(strstr(reason, "policy key"));
	free(reason);
	policy_grant_free(g);
	policy_free(p);
}

/* A reference to a kernel symbol is reading kernel memory. */
static void test_kernel_symbols(void **state)
{
	struct policy *p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"]},\"allow\":{"
				"\"program_types\":[\"socket_filter\"],\"helper_classes\":"
				"[\"base\"]}},{\"match\":{\"uids\":[\"2\"]},\"allow\":{"
				"\"program_types\":[\"socket_filter\"],\"helper_classes\":"
				"[\"base\",\"read_kernel_memory\"]}}]}",
				NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	char *ksyms[] = {"bpf_prog_active"};
	struct object_program progs[] = {prog("f", BPF_PROG_TYPE_SOCKET_FILTER, true, 10)};
	struct object_desc d = {.programs = progs, .n_programs = 1};

	progs[0].ksyms = ksyms;
	progs[0].n_ksyms = 1;
	assert_denied(g1, &d,
		      "program \"f\" references kernel symbol bpf_prog_active (class "
		      "read_kernel_memory), which your policy does not allow (policy key "
		      "helper_classes: read_kernel_memory)");
	assert_null(decide_reason(g2, &d));
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_free(p);
}

/*
 * consume: a word of its own that unites with the others; what one map gets
 * depends on its type. A ring buffer gets consume or nothing, a map of maps
 * at most ro, any other map its ro/wo/rw part.
 */
static void test_consume(void **state)
{
	struct policy *p = load("{\"rules\":["
				"{\"match\":{\"uids\":[\"1\"]},\"allow\":{\"maps\":["
				"{\"name\":\"events\",\"access\":\"consume\"},{\"name\":\"*\","
				"\"access\":\"rw\"}]}},"
				"{\"match\":{\"uids\":[\"1\",\"2\"]},\"allow\":{\"maps\":["
				"{\"name\":\"*\",\"access\":\"ro\"}]}}]}",
				NULL);
	struct policy_grant *g1 = resolve(p, 1, 1, NULL, 0), *g2 = resolve(p, 2, 2, NULL, 0);
	struct object_map maps[] = {map("events", 4096, false), map("other", 4096, false),
				    map("counts", 4, false)};
	struct object_desc d = {.maps = maps, .n_maps = 3};
	struct policy_verdict v = {};

	/* The union keeps both rules' words: consume from one, ro from the other. */
	assert_int_equal(policy_grant_map_access(g1, "events"), MAP_ACCESS_CONSUME | MAP_ACCESS_RO);
	assert_int_equal(policy_grant_map_access(g2, "events"), MAP_ACCESS_RO);

	assert_int_equal(policy_map_access_for_type(MAP_ACCESS_CONSUME | MAP_ACCESS_RO,
						    BPF_MAP_TYPE_RINGBUF),
			 MAP_ACCESS_CONSUME);
	assert_int_equal(policy_map_access_for_type(MAP_ACCESS_RW, BPF_MAP_TYPE_RINGBUF),
			 MAP_ACCESS_NONE);
	assert_int_equal(
		policy_map_access_for_type(MAP_ACCESS_CONSUME | MAP_ACCESS_WO, BPF_MAP_TYPE_HASH),
		MAP_ACCESS_WO);
	assert_int_equal(policy_map_access_for_type(MAP_ACCESS_CONSUME, BPF_MAP_TYPE_ARRAY),
			 MAP_ACCESS_NONE);
	assert_int_equal(policy_map_access_for_type(MAP_ACCESS_CONSUME | MAP_ACCESS_RW,
						    BPF_MAP_TYPE_ARRAY_OF_MAPS),
			 MAP_ACCESS_RO);
	/* A user ring buffer (user space produces) keeps ro/wo/rw: consume is for RINGBUF. */
	assert_int_equal(policy_map_access_for_type(MAP_ACCESS_RW | MAP_ACCESS_CONSUME,
						    BPF_MAP_TYPE_USER_RINGBUF),
			 MAP_ACCESS_RW);

	/* In a decision: both ring buffers load, one consumable, one without an fd. */
	maps[0].map_type = maps[1].map_type = BPF_MAP_TYPE_RINGBUF;
	maps[0].key_size = maps[0].value_size = maps[1].key_size = maps[1].value_size = 0;
	assert_int_equal(policy_decide(g1, &d, &v), 0);
	assert_true(v.allowed);
	assert_int_equal(v.map_access[0], MAP_ACCESS_CONSUME);
	assert_int_equal(v.map_access[1], MAP_ACCESS_NONE);
	assert_int_equal(v.map_access[2], MAP_ACCESS_RW);
	policy_verdict_done(&v);
	assert_int_equal(policy_decide(g2, &d, &v), 0);
	assert_true(v.allowed);
	assert_int_equal(v.map_access[0], MAP_ACCESS_NONE);
	assert_int_equal(v.map_access[2], MAP_ACCESS_RO);
	policy_verdict_done(&v);

	/* Policy shares never say consume: a ring buffer goes to its owner only. */
	policy_grant_free(g1);
	policy_grant_free(g2);
	policy_free(p);
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"uids\":[\"3\"]},\"allow\":{\"shared\":["
		"{\"owner\":\"0\",\"object\":\"o\",\"map\":\"events\",\"access\":\"consume\"}]}}]}",
		"e.json: rules[0].allow.shared[0].access: \"consume\" cannot be shared: consuming "
		"a ring buffer takes its records from every other consumer, so ring buffers go "
		"to their owner only");
}

static void test_map_memory_estimate(void **state)
{
	struct object_map array = {
		.map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 5, .max_entries = 100};
	struct object_map hash = {
		.map_type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 8, .max_entries = 100};

	struct object_map percpu = {.map_type = BPF_MAP_TYPE_PERCPU_ARRAY,
				    .key_size = 4,
				    .value_size = 8,
				    .max_entries = 1000};
	struct object_map huge = {.map_type = BPF_MAP_TYPE_PERCPU_HASH,
				  .key_size = 512,
				  .value_size = 4u << 20,
				  .max_entries = UINT32_MAX};
	struct object_map ring = {.map_type = BPF_MAP_TYPE_RINGBUF, .max_entries = 1u << 20};

	assert_int_equal(policy_map_memory_estimate(&array, 2), 8192 + 100 * 8);
	/* 128 buckets, and an element of key, value and header in kmalloc's sizes (96 take 128). */
	assert_int_equal(policy_map_memory_estimate(&hash, 2), 8192 + 128 * 16 + 100 * 128);
	/*
	 * An LPM trie: a node per entry and as many intermediate ones, and the
	 * nodes its allocator caches on each CPU (3 of 8 KiB); past 8 KiB, powers
	 * of two of pages.
	 */
	struct object_map lpm = {.map_type = BPF_MAP_TYPE_LPM_TRIE,
				 .key_size = 8,
				 .value_size = 4100,
				 .max_entries = 10};
	assert_int_equal(policy_map_memory_estimate(&lpm, 2), 8192 + (20 + 2 * 3) * 8192);
	lpm.value_size = 9000;
	assert_int_equal(policy_map_memory_estimate(&lpm, 2), 8192 + (20 + 2 * 3) * 16384);
	/*
	 * A hash map without preallocation, one 2 MiB entry: each element takes
	 * 4 MiB, and each CPU's cache holds 3 more. The kernel was seen holding
	 * (CPUs + 1) x 4 MiB of it right after creating it, with memlock at 2 MiB.
	 */
	struct object_map lazy = {.map_type = BPF_MAP_TYPE_HASH,
				  .key_size = 4,
				  .value_size = 2097104,
				  .max_entries = 1,
				  .map_flags = BPF_F_NO_PREALLOC};
	assert_int_equal(policy_map_memory_estimate(&lazy, 2),
			 8192 + 16 + (1 + 2 * 3) * (4u << 20));
	assert_true(policy_map_memory_estimate(&lazy, 64) >= 65ull * (4u << 20));
	/* Per-CPU values cached per CPU as well: CPUs squared times the value, at least. */
	struct object_map lazy_pcpu = {.map_type = BPF_MAP_TYPE_PERCPU_HASH,
				       .key_size = 4,
				       .value_size = 32768,
				       .max_entries = 1,
				       .map_flags = BPF_F_NO_PREALLOC};
	assert_true(policy_map_memory_estimate(&lazy_pcpu, 64) >= 64ull * 64 * 32768);
	/* One value per possible CPU (the kernel reported 24312 for this one, on 2 CPUs). */
	assert_int_equal(policy_map_memory_estimate(&percpu, 2), 8192 + 1000 * (8 + 2 * 8));
	assert_true(policy_map_memory_estimate(&percpu, 2) >= 24312);
	assert_true(policy_map_memory_estimate(&percpu, 64) >
		    policy_map_memory_estimate(&percpu, 2));
	/* Saturates rather than wrapping around to a small number. */
	assert_int_equal(policy_map_memory_estimate(&huge, 8192), UINT64_MAX);
	/* A ring buffer's pages and page table (1065288 reported for 1 MiB). */
	assert_true(policy_map_memory_estimate(&ring, 1) >= 1065288);
}

static void test_object_desc_done(void **state)
{
	struct object_desc d = {};

	d.n_programs = 1;
	d.programs = calloc(1, sizeof(*d.programs));
	assert_non_null(d.programs);
	d.programs[0].name = strdup("p");
	d.programs[0].helpers = calloc(2, sizeof(int));
	d.programs[0].n_helpers = 2;
	d.programs[0].kfuncs = calloc(1, sizeof(char *));
	d.programs[0].kfuncs[0] = strdup("bpf_rcu_read_lock");
	d.programs[0].n_kfuncs = 1;
	d.n_maps = 1;
	d.maps = calloc(1, sizeof(*d.maps));
	assert_non_null(d.maps);
	d.maps[0].name = strdup("m");
	object_desc_done(&d);
	assert_null(d.programs);
	assert_int_equal(d.n_programs, 0);
	object_desc_done(&d);
}

/* ---- systemd units and slices ---- */

/* Which rules of t.json matched id, as "0,3," (rules[N] in order). */
static const char *matched_rules(const struct policy *p, const struct policy_identity *id)
{
	static char buf[64];
	struct policy_grant *g = NULL;
	size_t len = 0;

	assert_int_equal(policy_resolve(p, id, &g), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < g->n_sources; i++) {
		const char *n = strstr(g->sources[i], "rules[");

		assert_non_null(n);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%d,", atoi(n + 6));
	}
	policy_grant_free(g);
	return buf;
}

static void test_unit_match(void **state)
{
	static const char *const system_slices[] = {"system.slice"};
	static const char *const user_slices[] = {"user.slice", "user-1000.slice"};
	static const char *const mon_slices[] = {"monitoring.slice", "monitoring-net.slice"};
	static const char *const app_slices[] = {"app.slice", "app-web.slice"};
	struct policy *p =
		load("{\"rules\":["
		     /* 0: a system unit, whoever runs it */
		     "{\"match\":{\"units\":[\"netmon.service\"]}},"
		     /* 1: uid 1000's own netmon.service */
		     "{\"match\":{\"uids\":[\"1000\"],\"user_units\":[\"netmon.service\"]}},"
		     /* 2: anything in monitoring.slice or below */
		     "{\"match\":{\"slices\":[\"monitoring.slice\"]}},"
		     /* 3: every condition must hold */
		     "{\"match\":{\"uids\":[\"1000\"],\"units\":[\"user@1000.service\"],"
		     "\"user_slices\":[\"app-*.slice\"]}},"
		     /* 4: backslashes are characters, not fnmatch escapes */
		     "{\"match\":{\"units\":[\"dev-a\\\\x2d*.service\"]}},"
		     /* 5: a principal that resolves to nobody stays a condition */
		     "{\"match\":{\"users\":[\"no-such-user-bpfbroker\"],"
		     "\"units\":[\"netmon.service\"]}}"
		     "]}",
		     NULL);
	struct policy_identity plain = {.uid = 1000, .gid = 1000};
	struct policy_identity sys = {.uid = 2000,
				      .gid = 2000,
				      .unit = "netmon.service",
				      .slices = system_slices,
				      .n_slices = 1};
	struct policy_identity mine = {.uid = 1000,
				       .gid = 1000,
				       .unit = "user@1000.service",
				       .user_unit = "netmon.service",
				       .slices = user_slices,
				       .n_slices = 2};
	struct policy_identity mon = {
		.uid = 3000, .gid = 3000, .slices = mon_slices, .n_slices = 2};
	struct policy_identity web = mine;
	struct policy_identity escaped = {.uid = 4000, .gid = 4000, .unit = "dev-a\\x2db.service"};

	assert_true(policy_uses_units(p));
	assert_string_equal(matched_rules(p, &plain), "");
	assert_string_equal(matched_rules(p, &sys), "0,");
	assert_string_equal(matched_rules(p, &mine), "1,");
	/* The same unit and slices for another uid: not uid 1000's rule. */
	mine.uid = 1001;
	assert_string_equal(matched_rules(p, &mine), "");
	/* A user unit named like the system unit is not the system unit. */
	mine.uid = 3000;
	mine.unit = NULL;
	assert_string_equal(matched_rules(p, &mine), "");
	assert_string_equal(matched_rules(p, &mon), "2,");
	mon.n_slices = 0;
	assert_string_equal(matched_rules(p, &mon), "");
	web.user_unit = "web.service";
	web.user_slices = app_slices;
	web.n_user_slices = 2;
	assert_string_equal(matched_rules(p, &web), "3,");
	web.uid = 1001;
	assert_string_equal(matched_rules(p, &web), "");
	assert_string_equal(matched_rules(p, &escaped), "4,");
	escaped.unit = "dev-ax2db.service";
	assert_string_equal(matched_rules(p, &escaped), "");
	policy_free(p);

	p = load("{\"rules\":[{\"match\":{\"uids\":[\"1\"],\"units\":[]}}]}", NULL);
	assert_false(policy_uses_units(p));
	assert_true(matches_uid(p, 1));
	policy_free(p);
}

static void test_unit_parse_errors(void **state)
{
	char json[512], expected[256], long_name[300];

	assert_parse_error(
		"{\"rules\":[{\"match\":{\"user_units\":[\"netmon.service\"]}}]}",
		"e.json: rules[0].match.user_units: needs \"uids\", \"users\" or "
		"\"groups\" in the same match: users name their own units and slices, so "
		"these identify nobody by themselves");
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"units\":[\"a.service\"],"
		"\"user_slices\":[\"app.slice\"]}}]}",
		"e.json: rules[0].match.user_slices: needs \"uids\", \"users\" or "
		"\"groups\" in the same match: users name their own units and slices, so "
		"these identify nobody by themselves");
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"units\":[\"a.service\",\"net mon.service\"]}}]}",
		"e.json: rules[0].match.units[1]: \"net mon.service\" is not a valid "
		"unit name pattern");
	assert_parse_error("{\"rules\":[{\"match\":{\"units\":[\"system.slice\"]}}]}",
			   "e.json: rules[0].match.units[0]: \"system.slice\" is a slice; match "
			   "slices with \"slices\"");
	assert_parse_error(
		"{\"rules\":[{\"match\":{\"uids\":[1],\"user_units\":[\"app.slice\"]}}]}",
		"e.json: rules[0].match.user_units[0]: \"app.slice\" is a slice; match "
		"slices with \"user_slices\"");
	assert_parse_error("{\"rules\":[{\"match\":{\"slices\":[\"netmon.service\"]}}]}",
			   "e.json: rules[0].match.slices[0]: \"netmon.service\" is not a slice "
			   "(slice names end in \".slice\")");
	assert_parse_error("{\"rules\":[{\"match\":{\"slices\":[\"\"]}}]}",
			   "e.json: rules[0].match.slices[0]: \"\" is not a valid slice name "
			   "pattern");
	assert_parse_error("{\"rules\":[{\"match\":{\"units\":\"netmon.service\"}}]}",
			   "e.json: rules[0].match.units: expected an array, got a string");
	assert_parse_error("{\"rules\":[{\"match\":{\"units\":[7]}}]}",
			   "e.json: rules[0].match.units[0]: expected a string, got an integer");
	memset(long_name, 'a', 256);
	strcpy(long_name + 256, ".service");
	snprintf(json, sizeof(json), "{\"rules\":[{\"match\":{\"units\":[\"%s\"]}}]}", long_name);
	snprintf(expected, sizeof(expected), "e.json: rules[0].match.units[0]: \"%.64s...\"",
		 long_name);
	assert_parse_error_ex(json, expected, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_rootless_example),
		cmocka_unit_test(test_user_network_example),
		cmocka_unit_test(test_limits_default),
		cmocka_unit_test(test_unknown_names),
		cmocka_unit_test(test_name_entries),
		cmocka_unit_test(test_empty_match),
		cmocka_unit_test(test_user_and_group_match),
		cmocka_unit_test(test_uid_forms),
		cmocka_unit_test(test_combination),
		cmocka_unit_test(test_non_matching_rule),
		cmocka_unit_test(test_grant_to_json),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_oversized),
		cmocka_unit_test(test_parse_ok_edge_cases),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_load_dir),
		cmocka_unit_test(test_decide_allowed),
		cmocka_unit_test(test_decide_denials),
		cmocka_unit_test(test_decide_verdict_bounded),
		cmocka_unit_test(test_decide_verdict_bounded_long_names),
		cmocka_unit_test(test_decide_all_reasons),
		cmocka_unit_test(test_decide_kfunc_and_pinning_granted),
		cmocka_unit_test(test_decide_no_rule),
		cmocka_unit_test(test_object_desc_done),
		cmocka_unit_test(test_lifecycle_grants),
		cmocka_unit_test(test_lifecycle_parse_errors),
		cmocka_unit_test(test_map_memory_estimate),
		cmocka_unit_test(test_maps_of_maps),
		cmocka_unit_test(test_inner_map_limits),
		cmocka_unit_test(test_map_types),
		cmocka_unit_test(test_task_classes),
		cmocka_unit_test(test_task_class_keys),
		cmocka_unit_test(test_limit_over_ceiling),
		cmocka_unit_test(test_kernel_symbols),
		cmocka_unit_test(test_consume),
		cmocka_unit_test(test_load_with_perfmon),
		cmocka_unit_test(test_cgroup_attach_list),
		cmocka_unit_test(test_cgroup_attach_kernel_names),
		cmocka_unit_test(test_uprobes_grant),
		cmocka_unit_test(test_unit_match),
		cmocka_unit_test(test_unit_parse_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
