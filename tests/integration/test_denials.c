/* SPDX-License-Identifier: MIT */
/*
 * Denials name their policy key, all of them: a real uid under a restrictive
 * policy is refused with every reason of every program, map and the object,
 * each with the key that would have to change, through libbpfbroker
 * (reasons and reason_keys) and bpfctl. And bpfctl does what its user typed:
 * options after the object of run are options, an unknown one is refused
 * before anything loads, and check says which programs were not selected.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"
#include "proto/proto.h"

#define UID_NOBODY 65534

static const struct user nobody = {UID_NOBODY, UID_NOBODY};
static char daemon_log[400];

/* The daemon's audit records of loads and checks by nobody so far. */
static int audited_loads(void)
{
	char line[4096];
	FILE *f = fopen(daemon_log, "re");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += (strstr(line, "audit: event=load ") || strstr(line, "audit: event=check ")) &&
		     strstr(line, " uid=65534 ");
	if (f)
		fclose(f);
	return n;
}

/* Wait (records may come late) until there are at least want; how many there are then. */
static int audited_loads_reach(int want)
{
	int n = audited_loads();

	for (int tries = 0; n < want && tries < 100; tries++) {
		usleep(20000);
		n = audited_loads();
	}
	return n;
}

/* The index of the reason of e or r whose key is key and whose text has needle; -1 if none. */
static int find_reason(const char *const *reasons, const char *const *keys, const char *key,
		       const char *needle)
{
	for (int i = 0; reasons && reasons[i]; i++)
		if (keys && keys[i] && strcmp(keys[i], key) == 0 && strstr(reasons[i], needle))
			return i;
	return -1;
}

/* Reasons and keys are parallel, and each reason with a key names it in its text. */
static int check_parallel(const char *const *reasons, const char *const *keys)
{
	size_t n = 0;

	CHECK(reasons && keys, "reasons %p, keys %p", (void *)reasons, (void *)keys);
	for (; reasons[n]; n++) {
		char with_key[256];

		CHECK(keys[n], "reason %zu has no key entry: %s", n, reasons[n]);
		snprintf(with_key, sizeof(with_key), "(policy key %s", keys[n]);
		CHECK(!*keys[n] || strstr(reasons[n], with_key), "reason %zu lacks its key %s: %s",
		      n, keys[n], reasons[n]);
	}
	CHECK(!keys[n], "more keys than reasons");
	return 0;
}

/*
 * A uprobe (kprobe type) calling bpf_probe_read_kernel, loaded as nobody, who
 * may load socket filters with base helpers only: refused for its type AND
 * its helper class, each with its key.
 */
static int client_all_reasons(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("uprobe_kread", NULL, &res, &e);

	CHECK(k < 0 && e, "uprobe_kread loaded: %s", strerror(-k));
	CHECK(strcmp(e->code, PROTO_E_DENIED) == 0, "code %s: %s", e->code, e->message);
	CHECK(check_parallel(e->reasons, e->reason_keys) == 0, "reasons and keys");
	CHECK(find_reason(e->reasons, e->reason_keys, "program_types: kprobe",
			  "program \"peek_kernel\" has type kprobe") >= 0,
	      "no program_types reason: %s", e->message);
	CHECK(find_reason(e->reasons, e->reason_keys, "helper_classes: read_kernel_memory",
			  "calls bpf_probe_read_kernel (class read_kernel_memory)") >= 0,
	      "the helper class hides behind the type: %s", e->message);
	bpfbroker_error_free(e);

	/* A check too: the object's limit and a ring buffer's size, in bytes. */
	e = NULL;
	{
		struct bpfbroker_load_opts o = {.sz = sizeof(o), .check_only = true};

		k = harness_load("ringbuf", &o, &res, &e);
	}
	CHECK(k == 0, "check ringbuf: %s", e ? e->message : strerror(-k));
	CHECK(!res->allowed, "a 4096-byte ring buffer allowed under max_map_entries 1024");
	CHECK(check_parallel(res->reasons, res->reason_keys) == 0, "reasons and keys");
	CHECK(find_reason(res->reasons, res->reason_keys, "max_map_entries",
			  "ring buffer \"events\" is 4096 bytes, over your limit of 1024") >= 0,
	      "no ring buffer reason: %s", res->json);
	CHECK(strstr(res->json, "\"denials\""), "no denials on the wire: %s", res->json);
	bpfbroker_result_free(res);
	return 0;
}

static void test_all_reasons(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_all_reasons, NULL), 0);
}

/* A quota refusal (outside the verdict) names its key the same way. */
static int client_quota_key(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "den-1"};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("counter", &o, &res, &e), ret = 0;

	CHECK(k == 0, "first named load: %s", e ? e->message : strerror(-k));
	bpfbroker_result_free(res);
	o.name = "den-2";
	k = harness_load("counter", &o, &res, &e);
	if (k == 0) {
		bpfbroker_result_free(res);
		harness_unload("den-2");
		fprintf(stderr, "a second named object loaded over max_named_objects 1\n");
		ret = 1;
	} else if (!e || strcmp(e->code, PROTO_E_QUOTA) != 0 ||
		   check_parallel(e->reasons, e->reason_keys) != 0 ||
		   find_reason(e->reasons, e->reason_keys, "max_named_objects",
			       "your quota max_named_objects") != 0) {
		fprintf(stderr, "quota refusal without its key: %s\n",
			e ? e->message : strerror(-k));
		ret = 1;
	}
	bpfbroker_error_free(e);
	harness_unload("den-1");
	return ret;
}

static void test_quota_key(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_quota_key, NULL), 0);
}

/*
 * A key is named only where changing it could help: no grant in "maps" lets
 * a map of maps be shared writable (its fds are at most read-only, so that
 * only the broker inserts), so that refusal names no key, and says why.
 */
static int client_share_beyond_type(void *arg)
{
	struct bpfbroker_share share = {.map = "outer", .user = "0", .access = BPFBROKER_ACCESS_RW};
	struct bpfbroker_load_opts o = {
		.sz = sizeof(o), .name = "den-mom", .shares = &share, .n_shares = 1};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("mapinmap", &o, &res, &e), ret = 0;

	if (k == 0) {
		bpfbroker_result_free(res);
		harness_unload("den-mom");
		fprintf(stderr, "a map of maps was shared rw\n");
		return 1;
	}
	if (!e || strcmp(e->code, PROTO_E_DENIED) != 0 ||
	    check_parallel(e->reasons, e->reason_keys) != 0 ||
	    find_reason(e->reasons, e->reason_keys, "", "no policy grants that access") != 0) {
		fprintf(stderr, "a refusal no key can lift names one: %s\n",
			e ? e->message : strerror(-k));
		ret = 1;
	}
	bpfbroker_error_free(e);
	return ret;
}

static void test_share_beyond_type(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_share_beyond_type, NULL), 0);
}

/* bpfctl check prints every reason with its key. */
static void test_bpfctl_check_reasons(void **state)
{
	assert_int_equal(harness_ctl(&nobody, "check", harness_object("multi"), NULL), 1);
	assert_non_null(strstr(harness_out, "reasons:\n"));
	assert_non_null(strstr(harness_out, "object loads 3 programs, over your limit of 1 "
					    "(policy key max_programs)"));
	assert_non_null(strstr(harness_out, "program \"multi_c\" has type raw_tracepoint, which "
					    "your policy does not allow (policy key "
					    "program_types: raw_tracepoint)"));
}

/* check --program: the programs left out are "not selected", not "allowed". */
static void test_bpfctl_check_not_selected(void **state)
{
	/* Options after the object, as for every command but run's CMD. */
	assert_int_equal(harness_ctl(&nobody, "check", harness_object("multi"), "--program",
				     "multi_a", NULL),
			 0);
	assert_non_null(strstr(harness_out, "program multi_a (socket_filter, "));
	assert_non_null(strstr(harness_out, "insns): allowed\n"));
	assert_non_null(strstr(harness_out, "program multi_b (socket_filter, "));
	assert_non_null(strstr(harness_out, "program multi_c (raw_tracepoint, "));
	{
		const char *b = strstr(harness_out, "program multi_b ");
		const char *c = strstr(harness_out, "program multi_c ");

		assert_non_null(b);
		assert_non_null(c);
		assert_non_null(strstr(b, "insns): not selected\n"));
		assert_true(strstr(b, "insns): not selected\n") < c);
		assert_non_null(strstr(c, "insns): not selected\n"));
	}
	assert_null(strstr(harness_out, "reasons:"));
}

/* run OBJ OPTIONS -- CMD: the options apply (counts' size, seen in its fd's fdinfo). */
static void test_bpfctl_run_options_after_object(void **state)
{
	static const char *show = "echo \"$LISTEN_FDNAMES\"; grep max_entries /proc/self/fdinfo/4";
	int before;

	assert_int_equal(harness_ctl(&nobody, "run", harness_object("counter"), "--map-size",
				     "counts=7", "--", "/bin/sh", "-c", show, NULL),
			 0);
	assert_non_null(strstr(harness_out, "map/config_map:map/counts:"));
	assert_non_null(strstr(harness_out, "max_entries:\t7\n"));

	/* Without "--": CMD starts at the first argument that is no option; its own stay its. */
	assert_int_equal(harness_ctl(&nobody, "run", harness_object("counter"), "--map-size",
				     "counts=3", "/bin/sh", "-c", show, NULL),
			 0);
	assert_non_null(strstr(harness_out, "max_entries:\t3\n"));

	/*
	 * An unknown option after the object: refused by bpfctl, nothing loads
	 * or runs. The broker's audit trail shows it: the next load it records
	 * is the check that follows, not a load of this.
	 */
	before = audited_loads_reach(1);
	assert_int_equal(harness_ctl(&nobody, "run", harness_object("counter"), "--map-sise",
				     "counts=3", "--", "/bin/sh", "-c", "echo ran", NULL),
			 2);
	assert_null(strstr(harness_out, "ran"));
	assert_int_equal(harness_ctl(&nobody, "check", harness_object("counter"), NULL), 0);
	assert_int_equal(audited_loads_reach(before + 1), before + 1);
	usleep(100000);
	assert_int_equal(audited_loads(), before + 1);
	/* An object and --name together: which one is meant? */
	assert_int_equal(harness_ctl(&nobody, "run", harness_object("counter"), "--name", "x", "--",
				     "/bin/sh", "-c", "echo ran", NULL),
			 2);
	assert_null(strstr(harness_out, "ran"));
}

/*
 * libbpf's opt-in SEC("?socket") programs: not loaded unless named, but not
 * left out by the request either. bpfctl check says which is which, and so
 * does the library.
 */
static int client_optin(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .check_only = true};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("optin", &o, &res, &e);

	CHECK(k == 0, "check optin: %s", e ? e->message : strerror(-k));
	CHECK(res->allowed, "denied: %s", res->json);
	CHECK(bpfbroker_result_program_selected(res, "optin_maybe"), "optin_maybe not selected");
	CHECK(!bpfbroker_result_program_autoload(res, "optin_maybe"), "optin_maybe loads");
	CHECK(bpfbroker_result_program_selected(res, "optin_always") &&
		      bpfbroker_result_program_autoload(res, "optin_always"),
	      "optin_always");
	CHECK(strstr(res->json, "\"selected\":true"), "no selected on the wire: %s", res->json);
	bpfbroker_result_free(res);
	return 0;
}

static void test_optin_programs(void **state)
{
	assert_int_equal(harness_as_user(&nobody, client_optin, NULL), 0);
	assert_int_equal(harness_ctl(&nobody, "check", harness_object("optin"), NULL), 0);
	assert_non_null(strstr(harness_out, "program optin_always (socket_filter, "));
	assert_non_null(strstr(harness_out, "program optin_maybe (socket_filter, "));
	{
		const char *a = strstr(harness_out, "program optin_always ");
		const char *m = strstr(harness_out, "program optin_maybe ");

		assert_true(strstr(a, "insns): allowed\n") < m);
		assert_non_null(strstr(m, "insns): not loaded (autoload off)\n"));
	}
	/* Named, it loads; the other is then left out. */
	assert_int_equal(harness_ctl(&nobody, "check", harness_object("optin"), "--program",
				     "optin_maybe", NULL),
			 0);
	assert_non_null(
		strstr(strstr(harness_out, "program optin_always "), "insns): not selected\n"));
	assert_non_null(strstr(strstr(harness_out, "program optin_maybe "), "insns): allowed\n"));
}

static int setup(void **state)
{
	if (harness_init() < 0)
		return -1;
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	if (harness_write_policy(
		    "50-test.json",
		    "{\"rules\": [ {\"match\": {\"uids\": [\"65534\"]},"
		    "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		    "[\"base\"], \"map_types\": [\"array_of_maps\"],"
		    "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		    "  \"limits\": {\"max_map_entries\": 1024, \"max_programs\": 1,"
		    "   \"max_named_objects\": 1}} ]}") < 0)
		return -1;
	harness_mark_kernel_objects();
	if (harness_start(NULL) < 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_reasons),
		cmocka_unit_test(test_quota_key),
		cmocka_unit_test(test_share_beyond_type),
		cmocka_unit_test(test_bpfctl_check_reasons),
		cmocka_unit_test(test_bpfctl_check_not_selected),
		cmocka_unit_test(test_bpfctl_run_options_after_object),
		cmocka_unit_test(test_optin_programs),
	};

	return cmocka_run_group_tests_name("denials", tests, setup, harness_group_teardown);
}
