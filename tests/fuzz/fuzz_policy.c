/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: policy files. The input is split at NUL bytes into up to
 * three files loaded into one policy (as policy_load_dir would), then resolved
 * for a few identities; every grant is queried, rendered as JSON and used to
 * decide on a small fixed object description. Vetted objects (policy/vetted.h) too: each
 * digest's inline grants, and the first file read as a manifest, become a vetted load's grant,
 * queried the same way. (Manifests are root's files, like the policy: fuzzed all the same.)
 */
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/vetted.h"

static void warn(void *userdata, const char *message)
{
	size_t *n = userdata;

	if (!message)
		abort();
	(*n)++;
}

static int helpers_a[] = {1, 2, 3, 6, 14, 113};
static char *kfuncs_a[] = {"bpf_rcu_read_lock"};

static struct object_program programs[] = {
	{.name = "prog_a",
	 .prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
	 .load = true,
	 .insn_cnt = 100,
	 .helpers = helpers_a,
	 .n_helpers = 6},
	{.name = "prog_b",
	 .prog_type = BPF_PROG_TYPE_KPROBE,
	 .load = true,
	 .insn_cnt = 5000,
	 .kfuncs = kfuncs_a,
	 .n_kfuncs = 1},
	{.name = "prog_c",
	 .prog_type = BPF_PROG_TYPE_CGROUP_SKB,
	 .attach_type = BPF_CGROUP_INET_EGRESS,
	 .load = false,
	 .insn_cnt = 10},
};

static struct object_map maps[] = {
	{.name = "config_x", .map_type = BPF_MAP_TYPE_ARRAY, 4, 8, 16, false},
	{.name = "secret", .map_type = BPF_MAP_TYPE_HASH, 8, 64, 1000000, false},
	{.name = "pins", .map_type = BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 10, true},
	{.name = "outer", .map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4, false},
	{.name = "obj.rodata", .map_type = BPF_MAP_TYPE_ARRAY, 4, 4096, 1, false},
};

static const struct object_desc desc = {
	.object_bytes = 12345,
	.programs = programs,
	.n_programs = sizeof(programs) / sizeof(programs[0]),
	.maps = maps,
	.n_maps = sizeof(maps) / sizeof(maps[0]),
};

static void query(const struct policy_grant *g)
{
	static const char *const names[] = {"config_x", "secret", "stats_1", "",
					    "events",	"a*b",	  "x"};
	static const char *const tps[] = {"syscalls:sys_enter_openat", "sched:sched_process_fork",
					  "sched"};
	static const char *const ifnames[] = {"lo", "eth0", "veth12345678901"};
	struct policy_verdict v = {};
	json_object *j;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		enum map_access a = policy_grant_map_access(g, names[i]);

		if ((unsigned)a > MAP_ACCESS_RW || !map_access_to_string(a))
			abort();
		a = policy_grant_shared_access(g, 0, "obj", names[i]);
		a |= policy_grant_shared_access(g, 1000, names[i], names[i]);
		if ((unsigned)a > MAP_ACCESS_RW)
			abort();
		(void)policy_grant_attach_raw_tracepoint(g, names[i]);
		(void)policy_grant_attach_interface(g, names[i]);
	}
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++)
		(void)policy_grant_attach_tracepoint(g, tps[i]);
	for (size_t i = 0; i < sizeof(ifnames) / sizeof(ifnames[0]); i++) {
		(void)policy_grant_attach_interface(g, ifnames[i]);
		(void)policy_grant_attach_host_interface(g, ifnames[i]);
	}
	for (int t = -1; t < 70; t++) {
		(void)policy_grant_prog_type(g, t);
		(void)policy_grant_prog_fd(g, t);
		(void)policy_grant_test_run(g, t);
		(void)policy_grant_attach_cgroup(g, t);
	}

	j = policy_grant_to_json(g);
	if (!j)
		abort();
	if (!json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN))
		abort();
	json_object_put(j);

	if (policy_decide(g, &desc, &v) < 0)
		abort();
	if (v.allowed != !policy_verdict_first_reason(&v))
		abort();
	policy_verdict_done(&v);
	for (size_t i = 0; i < desc.n_maps; i++)
		(void)policy_map_memory_estimate(&desc.maps[i], 4);
}

/* A vetted object's load grant (inline grants only: a manifest by name is the worker's). */
static void query_vetted(const struct policy_grant *g, const struct policy_vetted *v)
{
	struct policy_grant *e = NULL;

	if (v->manifest)
		return;
	if (policy_grant_vetted(g, v, "vetted", &e) < 0 || !e)
		abort();
	query(e);
	policy_grant_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const gid_t groups[] = {27, 100, 1000};
	static const char *const slices[] = {"system.slice", "monitoring-net.slice"};
	static const char *const user_slices[] = {"app.slice", "app-web.slice"};
	static const struct policy_identity ids[] = {
		{.uid = 0, .gid = 0},
		{.uid = 1000,
		 .gid = 1000,
		 .unit = "user@1000.service",
		 .user_unit = "netmon.service",
		 .slices = slices,
		 .n_slices = 2,
		 .user_slices = user_slices,
		 .n_user_slices = 2},
		{.uid = 65534,
		 .gid = 65534,
		 .unit = "netmon.service",
		 .slices = slices,
		 .n_slices = 1},
		{.uid = 65534, .gid = 65534},
		{.uid = 1000, .gid = 1000, .groups = groups, .n_groups = 3},
		{.uid = 100000, .gid = 100, .groups = groups + 1, .n_groups = 1},
		{.uid = 4294967294u, .gid = 4294967294u},
	};
	static const char *const file_names[] = {"10-a.json", "50-b.json", "90-c.json"};
	char *text = malloc(size + 1), *cur, *merror = NULL;
	struct policy_vetted *manifest = NULL;
	size_t n_warnings = 0;
	struct policy *p;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (policy_manifest_parse("m.json", text, &manifest, &merror) < 0 && !merror)
		abort();
	free(merror);
	p = policy_new();
	if (!p)
		abort();

	/* Up to three files, separated by NUL bytes. */
	cur = text;
	for (size_t f = 0; f < 3 && cur <= text + size; f++) {
		char *error = NULL;
		size_t len = strlen(cur);
		int r = policy_load_string(p, file_names[f], cur, warn, &n_warnings, &error);

		if (r < 0 && !error)
			abort(); /* policy.h: an error always comes with a message */
		free(error);
		cur += len + 1;
	}
	(void)policy_n_rules(p);
	(void)policy_uses_units(p);

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct policy_grant *g = NULL;

		if (policy_resolve(p, &ids[i], &g) < 0 || !g)
			abort();
		query(g);
		for (size_t d = 0; d < g->n_digests; d++)
			query_vetted(g, g->digests[d]);
		(void)policy_grant_object(g, "ip-firewall");
		if (manifest)
			query_vetted(g, manifest);
		policy_grant_free(g);
	}
	policy_vetted_free(manifest);
	policy_free(p);
	free(text);
	return 0;
}
