/* SPDX-License-Identifier: MIT */
/*
 * Every byte of kernel memory a client causes counts (issue 17, class 2):
 * unnamed loads as well as named ones, per-CPU maps once per possible CPU,
 * objects held only by a client's fd until the kernel frees them, kernel
 * threads a cpumap starts. Unprivileged uids against the real daemon; the
 * kernel's own figures (fdinfo memlock) are the measure.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/fdinfo.h"
#include "harness.h"
#include "harness_client.h"

#define UID_MEM 4601 /* 4 MiB of map memory */
#define UID_THREADS 4602 /* the same, and cpumaps: 8 kernel threads (the default) */
#define UID_PIN 4603 /* maps pinned by name, granted read-only */
#define QUOTA (4u << 20)

static const struct user mem = {UID_MEM, UID_MEM};
static const struct user threads = {UID_THREADS, UID_THREADS};
static const struct user pinner = {UID_PIN, UID_PIN};

/* Load object as the current user with map sizes; name may be NULL. */
static int load(const char *object, const char *name, const struct bpfbroker_map_size *sizes,
		size_t n_sizes, struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker_load_opts opts = {
		.sz = sizeof(opts), .name = name, .map_sizes = sizes, .n_map_sizes = n_sizes};

	return harness_load(object, &opts, res, err);
}

/* A plain array of n 8-byte values (and a one-entry per-CPU array): about 8n bytes. */
static int load_big(const char *name, uint32_t n, struct bpfbroker_result **res,
		    struct bpfbroker_error **err)
{
	struct bpfbroker_map_size sizes[] = {{"big", n}};

	return load("memhog", name, sizes, 1, res, err);
}

/*
 * Load until it fits: the kernel frees what a client closed after an RCU
 * grace period and a workqueue, so room comes back soon after, not at once.
 */
static int load_big_eventually(uint32_t n, struct bpfbroker_result **res,
			       struct bpfbroker_error **err)
{
	int k = -EAGAIN;

	for (int i = 0; i < 100 && k < 0; i++) {
		if (i) {
			bpfbroker_error_free(*err);
			usleep(20000);
		}
		k = load_big(NULL, n, res, err);
	}
	return k;
}

static int expect_quota(int k, struct bpfbroker_error *err, const char *limit)
{
	CHECK(k < 0 && err && strcmp(err->code, "quota") == 0 && strstr(err->message, limit),
	      "expected quota %s, got %d %s", limit, k, err ? err->message : "(loaded)");
	return 0;
}

/* The usage bpfctl policy reports, read through the library. */
static int64_t usage_of(const char *key)
{
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	json_object *o, *u, *v;
	char *json = NULL;
	int64_t value = -1;

	if (bpfbroker_connect(H.socket, &b) < 0)
		return -1;
	if (bpfbroker_policy(b, &json, &err) == 0 && (o = json_tokener_parse(json))) {
		if (json_object_object_get_ex(o, "usage", &u) &&
		    json_object_object_get_ex(u, key, &v))
			value = json_object_get_int64(v);
		json_object_put(o);
	}
	free(json);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return value;
}

/* ---- unnamed loads count, as long as the client holds what they made ---- */

static int client_unnamed(void *arg)
{
	struct bpfbroker_result *first = NULL, *second = NULL;
	struct bpfbroker_error *err = NULL;
	uint64_t memlock = 0;
	int k;

	/* 3 MiB of 4: the first fits. */
	k = load_big(NULL, 3u << 17, &first, &err);
	CHECK(k == 0, "first load: %s", err ? err->message : strerror(-k));
	/* What counts is what the kernel allocated, and bpfctl policy says so. */
	CHECK(fdinfo_get_u64(bpfbroker_result_map_at(first, 0)->fd, "memlock", &memlock) == 0,
	      "memlock");
	CHECK(usage_of("map_memory_bytes") >= (int64_t)memlock,
	      "usage %lld below the kernel's %llu", (long long)usage_of("map_memory_bytes"),
	      (unsigned long long)memlock);
	CHECK(usage_of("maps") == 2, "usage counts %lld maps", (long long)usage_of("maps"));
	/* The object's BTF stays in the kernel with its maps: it counts too. */
	CHECK(usage_of("btf_bytes") > 0 &&
		      usage_of("map_memory_bytes") >= (int64_t)memlock + usage_of("btf_bytes"),
	      "BTF not counted: btf_bytes %lld", (long long)usage_of("btf_bytes"));
	CHECK(usage_of("loaded_programs") == 1, "programs");
	/* Held by this client only, unnamed: it still counts. */
	k = load_big(NULL, 3u << 17, &second, &err);
	if (expect_quota(k, err, "max_map_memory_bytes"))
		return 1;
	bpfbroker_error_free(err);
	err = NULL;
	/* Closed, the kernel frees it, and the room is back. */
	bpfbroker_result_free(first);
	k = load_big_eventually(3u << 17, &second, &err);
	CHECK(k == 0, "after closing the first: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(second);
	return 0;
}

static void test_unnamed_loads_count(void **state)
{
	assert_int_equal(harness_as_user(&mem, client_unnamed, NULL), 0);
}

/* ---- per-CPU maps: one copy per possible CPU ---- */

static int client_percpu(void *arg)
{
	int cpus = libbpf_num_possible_cpus();
	/* 8-byte values: one CPU's copies take 3/4 of the quota, all of them more. */
	struct bpfbroker_map_size sizes[] = {{"percpu", (uint32_t)((QUOTA / 8) * 3 / 4)}};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k;

	CHECK(cpus >= 1, "possible CPUs");
	k = load("memhog", NULL, sizes, 1, &res, &err);
	if (cpus == 1) {
		/* Nothing to tell apart on one CPU: it fits. */
		CHECK(k == 0, "%s", err ? err->message : "");
		bpfbroker_result_free(res);
		return 0;
	}
	return expect_quota(k, err, "max_map_memory_bytes") || (bpfbroker_error_free(err), 0);
}

static void test_percpu_counted_per_cpu(void **state)
{
	assert_int_equal(harness_as_user(&mem, client_percpu, NULL), 0);
}

/* ---- a named object's maps held by an fd outlive unload, and still count ---- */

static int client_fd_outlives_unload(void *arg)
{
	struct bpfbroker_result *res = NULL, *fds = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	int k;

	k = load_big("keep", 3u << 17, &res, &err);
	CHECK(k == 0, "named load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_fds(b, "keep", &fds, &err);
	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	k = bpfbroker_unload(b, "keep", &err);
	bpfbroker_close(b);
	CHECK(k == 0, "unload: %s", err ? err->message : strerror(-k));
	/* Unloaded, but this client holds its maps: the kernel keeps them, and so does the count.
	 */
	k = load_big(NULL, 3u << 17, &res, &err);
	if (expect_quota(k, err, "max_map_memory_bytes"))
		return 1;
	bpfbroker_error_free(err);
	err = NULL;
	bpfbroker_result_free(fds);
	k = load_big_eventually(3u << 17, &res, &err);
	CHECK(k == 0, "after closing the fds: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	return 0;
}

static void test_fd_held_objects_count(void **state)
{
	assert_int_equal(harness_as_user(&mem, client_fd_outlives_unload, NULL), 0);
}

/*
 * A hash map without preallocation: its memlock says 2 MiB, the kernel holds
 * (CPUs + 1) x 4 MiB of it from the start (elements in powers of two of
 * pages, cached on every CPU): over the 4 MiB quota, whatever memlock says.
 */
static int client_lazy_hash(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = load("lazyhash", NULL, NULL, 0, &res, &err);

	if (expect_quota(k, err, "max_map_memory_bytes"))
		return 1;
	bpfbroker_error_free(err);
	return 0;
}

static void test_lazy_hash_counted_as_allocated(void **state)
{
	assert_int_equal(harness_as_user(&mem, client_lazy_hash, NULL), 0);
}

/* ---- kernel threads: a cpumap entry starts one ---- */

static int client_cpumap(void *arg)
{
	struct bpfbroker_map_size sizes[] = {{"cpus", 64}};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = load("maptypes", NULL, sizes, 1, &res, &err);

	if (expect_quota(k, err, "max_kernel_threads"))
		return 1;
	bpfbroker_error_free(err);
	/* Two entries are within the default of 8. */
	sizes[0].max_entries = 2;
	k = load("maptypes", NULL, sizes, 1, &res, &err);
	CHECK(k == 0, "2 entries: %s", err ? err->message : strerror(-k));
	CHECK(usage_of("kernel_threads") == 2, "usage says %lld kernel threads",
	      (long long)usage_of("kernel_threads"));
	bpfbroker_result_free(res);
	return 0;
}

static void test_kernel_threads(void **state)
{
	assert_int_equal(harness_as_user(&threads, client_cpumap, NULL), 0);
}

/* ---- a load refused after the kernel made its maps leaves nothing behind ---- */

static int client_refused_after_load(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = load("pinned", NULL, NULL, 0, &res, &err);

	/* Loaded, pinned by name, then refused at the hand-out: the bpffs guard. */
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "writable by users other than root"),
	      "expected the bpffs guard's refusal, got %d %s", k, err ? err->message : "(loaded)");
	bpfbroker_error_free(err);
	return 0;
}

/*
 * The map libbpf pinned by name while loading must not outlive the refused
 * request (it would stay, and count against nothing that was recorded).
 */
static void test_refused_after_load_keeps_no_pins(void **state)
{
	char bpffs[400], pin[600];
	int k_result;

	snprintf(bpffs, sizeof(bpffs), "%s/bpf", H.dir);
	assert_int_equal(mkdir(bpffs, 0755), 0);
	/* Mounted without mode=: world-writable, so ro fds are not handed out. */
	assert_int_equal(mount("bpf", bpffs, "bpf", 0, NULL), 0);
	k_result = harness_as_user(&pinner, client_refused_after_load, NULL);
	assert_int_equal(umount(bpffs), 0);
	rmdir(bpffs);
	assert_int_equal(k_result, 0);
	snprintf(pin, sizeof(pin), "%s/%d/-pinned/shared_pin", H.pin_root, UID_PIN);
	if (access(pin, F_OK) == 0)
		fail_msg("%s outlived the refused load", pin);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[2048];

	if (harness_init() < 0)
		return -1;
	snprintf(
		policy, sizeof(policy),
		"{\"rules\": ["
		" {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		"  \"limits\": {\"max_map_memory_bytes\": %u, \"max_map_entries\": 1000000}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"map_types\": [\"cpumap\", \"prog_array\"]}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"], \"pinning\": true, \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}]}}"
		"]}",
		UID_MEM, UID_THREADS, QUOTA, UID_THREADS, UID_PIN);
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unnamed_loads_count),
		cmocka_unit_test(test_percpu_counted_per_cpu),
		cmocka_unit_test(test_fd_held_objects_count),
		cmocka_unit_test(test_lazy_hash_counted_as_allocated),
		cmocka_unit_test(test_kernel_threads),
		cmocka_unit_test(test_refused_after_load_keeps_no_pins),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
