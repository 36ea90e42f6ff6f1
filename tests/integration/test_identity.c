/* SPDX-License-Identifier: MIT */
/*
 * Identity by systemd unit, end to end: clients placed in cgroups named as
 * systemd names them (a system service, a user's own service under
 * user@UID.service, a slice), and in look-alikes a user could make in a
 * subtree delegated to them, ask the real daemon for their policy as real
 * unprivileged uids. A rule on a system unit must match only the real one; a
 * user unit only in the caller's own user manager.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"

#define UID_USER 65534 /* has a user manager, user@65534.service */
#define UID_OTHER 4311 /* no manager of its own here */

static const struct user user = {UID_USER, UID_USER};
static const struct user other = {UID_OTHER, UID_OTHER};

/* Unit and slice names unique to this run, so nothing real is touched. */
static char netmon[64], other_unit[64], deleg_slice[64], mon_slice[64], mon_sub[80];
/* Where the clients are put. */
static char cg_system[400], cg_user_netmon[400], cg_user_other[400], cg_user_fake[400],
	cg_deleg[400], cg_mon[400], cg_plain[400];

static int cgroups_create(void)
{
	char rel[400], manager[300];
	int k;

	snprintf(netmon, sizeof(netmon), "bbtest-netmon-%d.service", (int)getpid());
	snprintf(other_unit, sizeof(other_unit), "bbtest-other-%d.service", (int)getpid());
	snprintf(deleg_slice, sizeof(deleg_slice), "bbtest%d.slice", (int)getpid());
	snprintf(mon_slice, sizeof(mon_slice), "bbtestmon%d.slice", (int)getpid());
	snprintf(mon_sub, sizeof(mon_sub), "bbtestmon%d-net.slice", (int)getpid());

	/* A system service. */
	snprintf(rel, sizeof(rel), "system.slice/%s", netmon);
	k = harness_cgroup_make(rel, 0, cg_system, sizeof(cg_system));
	/* The user's manager, delegated to them as systemd does, and two of their services. */
	snprintf(manager, sizeof(manager), "user.slice/user-%d.slice/user@%d.service", UID_USER,
		 UID_USER);
	if (k >= 0)
		k = harness_cgroup_make(manager, UID_USER, NULL, 0);
	snprintf(rel, sizeof(rel), "%s/app.slice", manager);
	if (k >= 0)
		k = harness_cgroup_make(rel, UID_USER, NULL, 0);
	snprintf(rel, sizeof(rel), "%s/app.slice/%s", manager, netmon);
	if (k >= 0)
		k = harness_cgroup_make(rel, UID_USER, cg_user_netmon, sizeof(cg_user_netmon));
	snprintf(rel, sizeof(rel), "%s/app.slice/%s", manager, other_unit);
	if (k >= 0)
		k = harness_cgroup_make(rel, UID_USER, cg_user_other, sizeof(cg_user_other));
	/* Inside their subtree the user can copy the system service's path. */
	snprintf(rel, sizeof(rel), "%s/system.slice/%s", manager, netmon);
	if (k >= 0)
		k = harness_cgroup_make(rel, UID_USER, cg_user_fake, sizeof(cg_user_fake));
	/* A slice an administrator delegated to the user: they name what is inside. */
	if (k >= 0)
		k = harness_cgroup_make(deleg_slice, UID_USER, NULL, 0);
	snprintf(rel, sizeof(rel), "%s/%s", deleg_slice, netmon);
	if (k >= 0)
		k = harness_cgroup_make(rel, UID_USER, cg_deleg, sizeof(cg_deleg));
	/* Neither a slice nor a unit (wherever the test itself runs). */
	snprintf(rel, sizeof(rel), "bbtest-plain-%d", (int)getpid());
	if (k >= 0)
		k = harness_cgroup_make(rel, 0, cg_plain, sizeof(cg_plain));
	/* A service in a sub-slice of a monitoring slice. */
	snprintf(rel, sizeof(rel), "%s/%s/probe.service", mon_slice, mon_sub);
	if (k >= 0)
		k = harness_cgroup_make(rel, 0, cg_mon, sizeof(cg_mon));
	return k;
}

/* ---- asking the broker, from inside a cgroup ---- */

struct ask {
	const char *cgroup;
	const struct user *as;
	const char *unit; /* the identity's "unit", or NULL for none */
	const char *user_unit;
	const char *slice; /* a slice the identity must list, or NULL */
	const char *rules; /* the matching rules, e.g. "0,2," */
};

static const char *json_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Runs in a child in the cgroup: bpfctl -j policy as the user, checked against a. */
static int ask_policy(void *arg)
{
	const struct ask *a = arg;
	static char out[16384];
	json_object *o, *identity, *policy, *v;
	char rules[64] = "";
	size_t len = 0;
	const char *args[] = {"-j", "policy", NULL};
	bool slice_found = a->slice == NULL;

	CHECK(harness_bpfctl(a->as, out, sizeof(out), args) == 0, "bpfctl policy failed: %s", out);
	o = json_tokener_parse(out);
	CHECK(o && json_object_object_get_ex(o, "identity", &identity) &&
		      json_object_object_get_ex(o, "policy", &policy),
	      "bad output: %s", out);
	CHECK(same(json_str(identity, "unit"), a->unit), "%s: unit %s, expected %s", a->cgroup,
	      json_str(identity, "unit") ?: "(none)", a->unit ?: "(none)");
	CHECK(same(json_str(identity, "user_unit"), a->user_unit), "%s: user unit %s, expected %s",
	      a->cgroup, json_str(identity, "user_unit") ?: "(none)", a->user_unit ?: "(none)");
	if (a->cgroup)
		CHECK(json_str(identity, "cgroup") &&
			      strstr(a->cgroup, json_str(identity, "cgroup")) &&
			      strlen(json_str(identity, "cgroup")) > 1,
		      "cgroup %s not shown for %s", json_str(identity, "cgroup") ?: "(none)",
		      a->cgroup);
	if (json_object_object_get_ex(identity, "slices", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			slice_found = slice_found ||
				      same(json_object_get_string(json_object_array_get_idx(v, i)),
					   a->slice);
	CHECK(slice_found, "slice %s not in %s", a->slice, out);
	if (json_object_object_get_ex(policy, "rules", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *src = json_object_get_string(json_object_array_get_idx(v, i));
			const char *n = src ? strstr(src, "rules[") : NULL;

			CHECK(n, "bad rule source %s", src ?: "(null)");
			len += (size_t)snprintf(rules + len, sizeof(rules) - len, "%d,",
						atoi(n + 6));
		}
	CHECK(strcmp(rules, a->rules) == 0, "%s as uid %u: rules \"%s\", expected \"%s\"",
	      a->cgroup, (unsigned)a->as->uid, rules, a->rules);
	json_object_put(o);
	return 0;
}

static void check(const struct ask *a)
{
	assert_int_equal(harness_in_cgroup(a->cgroup, ask_policy, (void *)a), 0);
}

/* ---- the tests ---- */

static void test_system_unit(void **state)
{
	/* The system service matches its rule, whoever it runs as. */
	check(&(struct ask){cg_system, &other, netmon, NULL, "system.slice", "0,"});
	check(&(struct ask){cg_system, &user, netmon, NULL, "system.slice", "0,"});
	/* Outside any unit: nothing. */
	check(&(struct ask){cg_plain, &user, NULL, NULL, NULL, ""});
}

static void test_user_unit(void **state)
{
	char manager[64];

	snprintf(manager, sizeof(manager), "user@%d.service", UID_USER);
	/* The user's own service, in their own manager. */
	check(&(struct ask){cg_user_netmon, &user, manager, netmon, "user.slice", "1,"});
	/* Another of their services. */
	check(&(struct ask){cg_user_other, &user, manager, other_unit, NULL, ""});
	/* Another uid put in the user's manager: someone else's names, not its own. */
	check(&(struct ask){cg_user_netmon, &other, manager, NULL, NULL, ""});
}

static void test_lookalikes_refused(void **state)
{
	char manager[64];

	snprintf(manager, sizeof(manager), "user@%d.service", UID_USER);
	/*
	 * "system.slice/NETMON" made inside the user's manager: systemd (and the
	 * broker) see the unit user@UID.service; the look-alike is only a user
	 * unit, which the user's own rule may match, never the system rule.
	 */
	check(&(struct ask){cg_user_fake, &user, manager, netmon, NULL, "1,"});
	/*
	 * In a slice delegated to the user, libsystemd reports NETMON as the
	 * unit, but the user created that cgroup: no unit at all, only the slice
	 * root made.
	 */
	check(&(struct ask){cg_deleg, &user, NULL, NULL, deleg_slice, ""});
}

static void test_slices(void **state)
{
	/* In a sub-slice of the monitoring slice: the slice rule matches. */
	check(&(struct ask){cg_mon, &other, "probe.service", NULL, mon_slice, "2,"});
}

/* Runs in the cgroup: would the broker load a socket filter for a? (checked in the worker) */
static int ask_check(void *arg)
{
	const struct ask *a = arg;
	static char out[16384];
	const char *args[] = {"check", harness_object("counter"), NULL};
	int k = harness_bpfctl(a->as, out, sizeof(out), args);

	CHECK(k == (a->rules[0] ? 0 : 1), "check in %s: exit %d: %s", a->cgroup, k, out);
	return 0;
}

static void test_worker_sees_units(void **state)
{
	/* The worker decides with the identity taken at accept, units included. */
	assert_int_equal(harness_in_cgroup(cg_system, ask_check,
					   &(struct ask){cg_system, &other, .rules = "0,"}),
			 0);
	assert_int_equal(harness_in_cgroup(cg_plain, ask_check,
					   &(struct ask){cg_plain, &other, .rules = ""}),
			 0);
	assert_int_equal(
		harness_in_cgroup(cg_deleg, ask_check, &(struct ask){cg_deleg, &user, .rules = ""}),
		0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	if (cgroups_create() < 0) {
		fprintf(stderr, "cannot create test cgroups: %m\n");
		harness_cgroups_remove();
		return -1;
	}
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 /* 0: the system service, whatever uid it runs as */
		 " {\"match\": {\"units\": [\"%s\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		 /* 1: these uids' own netmon service */
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"], \"user_units\": [\"%s\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"]}},"
		 /* 2: anything in the monitoring slice */
		 " {\"match\": {\"slices\": [\"%s\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"]}}"
		 "]}",
		 netmon, UID_USER, UID_OTHER, netmon, mon_slice);
	if (harness_write_policy("50-id.json", policy) < 0)
		return -1;
	harness_mark_kernel_objects();
	if (harness_start(NULL) < 0)
		return -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_unit),	   cmocka_unit_test(test_user_unit),
		cmocka_unit_test(test_lookalikes_refused), cmocka_unit_test(test_slices),
		cmocka_unit_test(test_worker_sees_units),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
