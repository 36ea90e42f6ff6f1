/* SPDX-License-Identifier: MIT */
/*
 * The setup real loaders do between open and load (issue 18, item 2), as
 * unprivileged uids against the real daemon: map key and value sizes, the
 * inner map of a map of maps declared without a template, attach types
 * newer than libbpf 1.1.2, BTF attach targets. Where a load succeeds or
 * fails, a direct libbpf load as root with the same setup must agree; every
 * limit applies to the configured maps, inner maps included.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"

#define UID_ALL 4601 /* socket_filter, cgroup_sock_addr, tracing; the map types used here */
#define UID_NARROW 4602 /* socket_filter; hash_of_maps but not cgroup_array, not stack_trace */
#define UID_NOHOOK 4603 /* what UID_ALL has but attaching to cgroups as cgroup_unix_sendmsg */

static const struct user all = {UID_ALL, UID_ALL};
static const struct user narrow = {UID_NARROW, UID_NARROW};
static const struct user nohook = {UID_NOHOOK, UID_NOHOOK};

/* The setup that makes setup_maps load: stack depth, record types reset, an inner map. */
static const struct bpfbroker_map_def good_defs[] = {
	{.name = "stacks", .value_size = 127 * 8},
	{.name = "events", .value_size = BPFBROKER_SIZE_ZERO},
	{.name = "perf_events", .value_size = 4},
};
static const struct bpfbroker_inner_map good_inner[] = {
	{.outer = "per_cpu_tables",
	 .type = "array",
	 .key_size = 4,
	 .value_size = 8,
	 .max_entries = 16},
};

static const char *code_of(const struct bpfbroker_error *e)
{
	return e ? e->code : "(no error)";
}

/* ---- direct libbpf, as root, with the same setup ---- */

struct direct {
	int err; /* bpf_object__load()'s */
	uint32_t key_size[8], value_size[8];
	size_t n_maps;
};

static void direct_load(const char *object, const struct bpfbroker_map_def *defs, size_t n_defs,
			const struct bpfbroker_inner_map *inner, size_t n_inner, struct direct *ret)
{
	struct bpf_object *obj = bpf_object__open_file(harness_object(object), NULL);
	int inner_fds[4] = {-1, -1, -1, -1};
	struct bpf_map *map;

	*ret = (struct direct){.err = obj ? 0 : -errno};
	if (!obj)
		return;
	for (size_t i = 0; i < n_defs; i++) {
		map = bpf_object__find_map_by_name(obj, defs[i].name);
		if (defs[i].key_size)
			bpf_map__set_key_size(map, defs[i].key_size == BPFBROKER_SIZE_ZERO
							   ? 0
							   : defs[i].key_size);
		if (defs[i].value_size)
			bpf_map__set_value_size(map, defs[i].value_size == BPFBROKER_SIZE_ZERO
							     ? 0
							     : defs[i].value_size);
	}
	for (size_t i = 0; i < n_inner && i < 4; i++) {
		inner_fds[i] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "inner", inner[i].key_size,
					      inner[i].value_size, inner[i].max_entries, NULL);
		bpf_map__set_inner_map_fd(bpf_object__find_map_by_name(obj, inner[i].outer),
					  inner_fds[i]);
	}
	ret->err = bpf_object__load(obj);
	bpf_object__for_each_map(map, obj)
	{
		if (ret->n_maps >= 8)
			break;
		ret->key_size[ret->n_maps] = bpf_map__key_size(map);
		ret->value_size[ret->n_maps++] = bpf_map__value_size(map);
	}
	for (size_t i = 0; i < 4; i++)
		if (inner_fds[i] >= 0)
			close(inner_fds[i]);
	bpf_object__close(obj);
}

/* ---- map key and value sizes ---- */

/* setup_maps with its loader's sizes and this inner map. */
static int load_setup_maps(const struct bpfbroker_inner_map *inner, struct bpfbroker_result **res,
			   struct bpfbroker_error **err)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o),
					.map_defs = good_defs,
					.n_map_defs = 3,
					.inner_maps = inner,
					.n_inner_maps = 1};

	return harness_load("setup_maps", &o, res, err);
}

static int client_sized_like_libbpf(void *arg)
{
	const struct direct *d = arg;
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = load_setup_maps(good_inner, &res, &err);

	CHECK(k == 0, "setup_maps with its loader's setup: %s", err ? err->message : strerror(-k));
	/* The inner map was for the load only: the result has the object's four maps. */
	CHECK(res->n_maps == d->n_maps && res->n_maps == 4, "%zu maps, libbpf %zu", res->n_maps,
	      d->n_maps);
	for (size_t i = 0; i < res->n_maps; i++) {
		const struct bpfbroker_map *m = bpfbroker_result_map_at(res, i);
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);

		CHECK(m->key_size == d->key_size[i] && m->value_size == d->value_size[i],
		      "map %s: %u/%u, libbpf %u/%u", m->name, m->key_size, m->value_size,
		      d->key_size[i], d->value_size[i]);
		/* The kernel's own word, where the policy handed out an fd. */
		if (m->fd >= 0 && bpf_obj_get_info_by_fd(m->fd, &info, &len) == 0)
			CHECK(info.value_size == m->value_size, "map %s: the kernel says %u",
			      m->name, info.value_size);
		if (strcmp(m->name, "stacks") == 0)
			CHECK(m->value_size == 127 * 8, "stacks: value size %u", m->value_size);
	}
	bpfbroker_result_free(res);
	return 0;
}

/* Without resetting the ring buffer's value type, libbpf fails, and so does the broker. */
static int client_unset_like_libbpf(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o),
					.map_defs = good_defs,
					.n_map_defs = 1,
					.inner_maps = good_inner,
					.n_inner_maps = 1};
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = harness_load("setup_maps", &o, &res, &err);

	CHECK(k < 0 && err && strcmp(err->code, "load-failed") == 0,
	      "a ring buffer with a value size loaded (%d %s)", k, code_of(err));
	CHECK(strstr(err->message, "events") || strstr(err->message, "Invalid argument"),
	      "message: %s", err->message);
	bpfbroker_error_free(err);
	return 0;
}

static void test_map_sizes_like_libbpf(void **state)
{
	struct direct d;

	direct_load("setup_maps", good_defs, 3, good_inner, 1, &d);
	assert_int_equal(d.err, 0);
	assert_int_equal(harness_as_user(&all, client_sized_like_libbpf, &d), 0);
	direct_load("setup_maps", good_defs, 1, good_inner, 1, &d);
	assert_int_not_equal(d.err, 0);
	assert_int_equal(harness_as_user(&all, client_unset_like_libbpf, NULL), 0);
}

struct refusal {
	const char *object;
	struct bpfbroker_load_opts opts;
	const char *code;
	const char *needle;
};

static int client_refused(void *arg)
{
	const struct refusal *r = arg;
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = harness_load(r->object, &r->opts, &res, &err);

	if (k == 0)
		bpfbroker_result_free(res);
	CHECK(k < 0 && err && strcmp(err->code, r->code) == 0, "expected %s, got %d %s: %s",
	      r->code, k, code_of(err), err ? err->message : "");
	CHECK(strstr(err->message, r->needle) != NULL, "message lacks \"%s\": %s", r->needle,
	      err->message);
	bpfbroker_error_free(err);
	return 0;
}

static void expect_refused(const struct user *u, const char *object,
			   const struct bpfbroker_load_opts *opts, const char *code,
			   const char *needle)
{
	struct refusal r = {.object = object, .opts = *opts, .code = code, .needle = needle};

	assert_int_equal(harness_as_user(u, client_refused, &r), 0);
}

static void test_map_sizes_refused(void **state)
{
	static const struct bpfbroker_map_def missing[] = {{.name = "nope", .value_size = 8}};
	static const struct bpfbroker_map_def ring[] = {{.name = "events", .value_size = 8}};
	static const struct bpfbroker_map_def stack_odd[] = {{.name = "stacks", .value_size = 12}};
	static const struct bpfbroker_map_def twice[] = {{.name = "stacks", .value_size = 8},
							 {.name = "stacks", .key_size = 4}};
	static const struct bpfbroker_map_def globals[] = {{.name = ".bss", .value_size = 4096}};
	static const struct bpfbroker_program_select cfg_prog = {.name = "cfg_prog"};
	/* 16 stacks of 2^20 frames: 128 MiB, over the 64 MiB memory quota. */
	static const struct bpfbroker_map_def deep[] = {
		{.name = "stacks", .value_size = 8u << 20},
		{.name = "events", .value_size = BPFBROKER_SIZE_ZERO},
		{.name = "perf_events", .value_size = 4}};
	static const struct bpfbroker_map_def too_big[] = {
		{.name = "stacks", .value_size = 1u << 30}};
	struct bpfbroker_load_opts o = {
		.sz = sizeof(o), .inner_maps = good_inner, .n_inner_maps = 1};

	o.map_defs = missing, o.n_map_defs = 1;
	expect_refused(&all, "setup_maps", &o, "invalid-request", "no map \"nope\"");
	o.map_defs = ring;
	expect_refused(&all, "setup_maps", &o, "invalid-request",
		       "map \"events\" value_size 8 is invalid: a ringbuf map's value_size is 0");
	o.map_defs = stack_odd;
	expect_refused(&all, "setup_maps", &o, "invalid-request",
		       "map \"stacks\" value_size 12 is invalid");
	o.map_defs = twice, o.n_map_defs = 2;
	expect_refused(&all, "setup_maps", &o, "invalid-request", "\"stacks\" is given twice");
	/* libbpf 1.1 would read past its copy of the globals. */
	o.map_defs = globals, o.n_map_defs = 1;
	o.programs = &cfg_prog, o.n_programs = 1, o.n_inner_maps = 0;
	expect_refused(&all, "configurable", &o, "invalid-request",
		       "map \".bss\" holds the object's global variables");
	o.programs = NULL, o.n_programs = 0, o.n_inner_maps = 1;
	o.map_defs = too_big;
	expect_refused(&all, "setup_maps", &o, "invalid-request", "value_size");
	/* The policy decides on the configured map: its memory with the value size set. */
	o.map_defs = deep, o.n_map_defs = 3;
	expect_refused(&all, "setup_maps", &o, "quota", "max_map_memory_bytes");
	/* stack_trace is granted by name: the size set doesn't change that. */
	o.map_defs = good_defs;
	expect_refused(&narrow, "setup_maps", &o, "policy-denied",
		       "map \"stacks\" has type stack_trace, which your policy does not allow");
}

/* ---- inner maps ---- */

static void test_inner_maps(void **state)
{
	static const struct bpfbroker_inner_map cgroup_inner[] = {{.outer = "per_cpu_tables",
								   .type = "cgroup_array",
								   .key_size = 4,
								   .value_size = 4,
								   .max_entries = 1}};
	static const struct bpfbroker_inner_map many[] = {{.outer = "per_cpu_tables",
							   .type = "array",
							   .key_size = 4,
							   .value_size = 8,
							   .max_entries = 1000000}};
	static const struct bpfbroker_inner_map wide[] = {{.outer = "per_cpu_tables",
							   .type = "array",
							   .key_size = 4,
							   .value_size = 1u << 20,
							   .max_entries = 65536}};
	static const struct bpfbroker_inner_map not_outer[] = {{.outer = "stacks",
								.type = "array",
								.key_size = 4,
								.value_size = 8,
								.max_entries = 1}};
	static const struct bpfbroker_inner_map templated[] = {{.outer = "outer",
								.type = "array",
								.key_size = 4,
								.value_size = 8,
								.max_entries = 1}};
	static const struct bpfbroker_inner_map unknown[] = {{.outer = "per_cpu_tables",
							      .type = "nope",
							      .key_size = 4,
							      .value_size = 8,
							      .max_entries = 1}};
	static const struct bpfbroker_inner_map nested[] = {{.outer = "per_cpu_tables",
							     .type = "array_of_maps",
							     .key_size = 4,
							     .value_size = 4,
							     .max_entries = 1}};
	static const struct bpfbroker_inner_map bad_key[] = {{.outer = "per_cpu_tables",
							      .type = "array",
							      .key_size = 8,
							      .value_size = 8,
							      .max_entries = 1}};
	struct bpfbroker_load_opts o = {
		.sz = sizeof(o), .map_defs = good_defs, .n_map_defs = 3, .n_inner_maps = 1};

	/* The inner map's type is granted by name like any map's: cgroup_array is not. */
	o.inner_maps = cgroup_inner;
	expect_refused(&all, "setup_maps", &o, "policy-denied",
		       "map \"per_cpu_tables\"'s inner map has type cgroup_array, which your "
		       "policy does not allow");
	o.inner_maps = many;
	expect_refused(&all, "setup_maps", &o, "policy-denied",
		       "map \"per_cpu_tables\"'s inner map has 1000000 entries, over your limit "
		       "of 65536");
	/* 64 Ki values of 1 MiB: within max_map_entries, but 64 GiB of memory. */
	o.inner_maps = wide;
	expect_refused(&all, "setup_maps", &o, "quota", "max_map_memory_bytes");
	o.inner_maps = not_outer;
	expect_refused(&all, "setup_maps", &o, "invalid-request",
		       "map \"stacks\" is not a map of maps");
	o.inner_maps = unknown;
	expect_refused(&all, "setup_maps", &o, "invalid-request", "unknown map type \"nope\"");
	o.inner_maps = nested;
	expect_refused(&all, "setup_maps", &o, "invalid-request", "cannot be a map of maps");
	o.inner_maps = bad_key;
	expect_refused(&all, "setup_maps", &o, "invalid-request",
		       "the inner map of \"per_cpu_tables\" key_size 8 is invalid");
	o.inner_maps = templated, o.map_defs = NULL, o.n_map_defs = 0;
	expect_refused(&all, "mapinmap", &o, "invalid-request",
		       "map \"outer\" has an inner map template in the object already");
}

static int client_inner_lpm_trie(void *arg)
{
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = load_setup_maps(arg, &res, &err);

	CHECK(k == 0, "an lpm_trie inner map with BPF_F_NO_PREALLOC: %s",
	      err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	return 0;
}

/* Inner maps with map flags: an lpm_trie exists only without preallocation. */
static void test_inner_map_flags(void **state)
{
	/* A 4-byte prefix length and an IPv4 address, as a loader's per-CPU prefix tables. */
	static const struct bpfbroker_inner_map lpm = {.outer = "per_cpu_tables",
						       .type = "lpm_trie",
						       .key_size = 8,
						       .value_size = 4,
						       .max_entries = 16,
						       .map_flags = 1 /* BPF_F_NO_PREALLOC */};
	struct bpfbroker_inner_map m = lpm;
	struct bpfbroker_load_opts o = {.sz = sizeof(o),
					.map_defs = good_defs,
					.n_map_defs = 3,
					.inner_maps = &m,
					.n_inner_maps = 1};

	assert_int_equal(harness_as_user(&all, client_inner_lpm_trie, &m), 0);
	/* Without the flag the kernel refuses the inner map, as it would root's. */
	m.map_flags = 0;
	expect_refused(&all, "setup_maps", &o, "load-failed",
		       "the kernel refused to create the inner map of \"per_cpu_tables\" "
		       "(lpm_trie, key_size 8, value_size 4, max_entries 16, map_flags 0x0)");
	/* Flags no policy knows (BPF_F_TOKEN_FD, bit 16): refused before anything is made. */
	m.map_flags = 1u << 16;
	expect_refused(&all, "setup_maps", &o, "invalid-request",
		       "inner_maps[0]: \"map_flags\" must be between 0 and 8191");
}

/* ---- attach types newer than libbpf 1.1.2 ---- */

struct attach_case {
	const char *given, *expected;
};

static int client_attach_type(void *arg)
{
	const struct attach_case *c = arg;
	struct bpfbroker_program_select sel = {
		.name = "unix_sendmsg", .type = "cgroup_sock_addr", .attach_type = c->given};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .programs = &sel, .n_programs = 1};
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	bool seen = false;
	int k = harness_load("setup_progs", &o, &res, &err);

	CHECK(k == 0, "attach type %s: %s", c->given, err ? err->message : strerror(-k));
	for (size_t i = 0; i < res->n_programs; i++) {
		const struct bpfbroker_program *p = bpfbroker_result_program_at(res, i);

		if (strcmp(p->name, "unix_sendmsg") != 0)
			continue;
		seen = true;
		CHECK(p->loaded && p->attach_type && strcmp(p->attach_type, c->expected) == 0,
		      "loaded %d as %s", p->loaded, p->attach_type ?: "(none)");
	}
	CHECK(seen, "no program unix_sendmsg in the result");
	bpfbroker_result_free(res);
	return 0;
}

static void test_attach_types(void **state)
{
	static const struct attach_case by_name = {"cgroup_unix_sendmsg", "cgroup_unix_sendmsg"};
	static const struct attach_case by_number = {"50", "cgroup_unix_sendmsg"};
	static const struct attach_case libbpf_name = {"cgroup_udp4_sendmsg",
						       "cgroup_udp4_sendmsg"};
	struct bpfbroker_program_select sel = {.name = "unix_sendmsg", .type = "cgroup_sock_addr"};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .programs = &sel, .n_programs = 1};

	/* By the kernel's name, and by number: the same attach type. */
	assert_int_equal(harness_as_user(&all, client_attach_type, (void *)&by_name), 0);
	assert_int_equal(harness_as_user(&all, client_attach_type, (void *)&by_number), 0);
	/* libbpf's names keep working. */
	assert_int_equal(harness_as_user(&all, client_attach_type, (void *)&libbpf_name), 0);
	sel.attach_type = "cgroup_unix_nope";
	expect_refused(&all, "setup_progs", &o, "invalid-request",
		       "unknown attach type \"cgroup_unix_nope\"");
	sel.attach_type = "63";
	expect_refused(&all, "setup_progs", &o, "invalid-request", "unknown attach type \"63\"");
	sel.attach_type = "050";
	expect_refused(&all, "setup_progs", &o, "invalid-request", "unknown attach type \"050\"");
	/* Not granted the program type: refused, whatever the attach type's name. */
	sel.attach_type = "50";
	expect_refused(&narrow, "setup_progs", &o, "policy-denied",
		       "program \"unix_sendmsg\" has type cgroup_sock_addr, which your policy "
		       "does not allow");
}

/*
 * The brokered attach takes the same names: a program loaded as
 * cgroup_unix_sendmsg attaches to the caller's cgroup only where the policy
 * names that attach type (by name or number, the same grant).
 */
struct hook_case {
	const char *cgroup;
	const char *attach_type; /* or NULL: the program's own */
	bool granted;
};

static int client_attach_unix_hook(void *arg)
{
	const struct hook_case *c = arg;
	struct bpfbroker_program_select sel = {
		.name = "unix_sendmsg", .type = "cgroup_sock_addr", .attach_type = "50"};
	struct bpfbroker_load_opts o = {
		.sz = sizeof(o), .programs = &sel, .n_programs = 1, .name = "unixhook"};
	struct bpfbroker_attach_opts a = {.sz = sizeof(a),
					  .object = "unixhook",
					  .program = "unix_sendmsg",
					  .target_type = "cgroup",
					  .attach_type = c->attach_type};
	struct bpfbroker_result *res;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	uint32_t id = 0;
	int link_fd = -1, k;

	k = harness_load("setup_progs", &o, &res, &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	a.cgroup_fd = open(c->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(a.cgroup_fd >= 0, "open %s: %m", c->cgroup);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_attach(b, &a, &id, &link_fd, &err);
	bpfbroker_close(b);
	close(a.cgroup_fd);
	if (link_fd >= 0)
		close(link_fd);
	harness_unload("unixhook");
	if (c->granted) {
		CHECK(k == 0, "attach as %s: %s", c->attach_type ?: "its own type",
		      err ? err->message : strerror(-k));
		return 0;
	}
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "attach: %d %s", k,
	      code_of(err));
	CHECK(strstr(err->message, "does not allow attaching to cgroups as cgroup_unix_sendmsg"),
	      "message: %s", err->message);
	bpfbroker_error_free(err);
	return 0;
}

static void test_attach_types_brokered(void **state)
{
	char cg_all[256], cg_nohook[256];
	struct hook_case c = {.cgroup = cg_all, .granted = true};

	assert_int_equal(
		harness_cgroup_make("bpfbroker-test-setup/all", UID_ALL, cg_all, sizeof(cg_all)),
		0);
	assert_int_equal(harness_cgroup_make("bpfbroker-test-setup/nohook", UID_NOHOOK, cg_nohook,
					     sizeof(cg_nohook)),
			 0);
	assert_int_equal(harness_as_user(&all, client_attach_unix_hook, &c), 0);
	c.attach_type = "cgroup_unix_sendmsg";
	assert_int_equal(harness_as_user(&all, client_attach_unix_hook, &c), 0);
	c.attach_type = "50";
	assert_int_equal(harness_as_user(&all, client_attach_unix_hook, &c), 0);
	c = (struct hook_case){.cgroup = cg_nohook, .granted = false};
	assert_int_equal(harness_as_user(&nohook, client_attach_unix_hook, &c), 0);
	c.attach_type = "50";
	assert_int_equal(harness_as_user(&nohook, client_attach_unix_hook, &c), 0);
}

/* ---- BTF attach targets ---- */

/*
 * What libbpf answers root for bpf_program__set_attach_target(prog, 0, target),
 * in a child: libbpf 1.1.2 frees the vmlinux BTF it reads for that only in a
 * load, not in bpf_object__close().
 */
static int root_set_attach_target(const char *object, const char *prog, const char *target)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct bpf_object *obj = bpf_object__open_file(harness_object(object), NULL);
		int k = obj ? bpf_program__set_attach_target(
				      bpf_object__find_program_by_name(obj, prog), 0, target)
			    : -errno;

		_exit(k < 0 && k > -256 ? -k : k == 0 ? 0 : 255);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return -WEXITSTATUS(status);
}

/* setup_progs' on_fork alone, with this BTF attach target. */
static int load_on_fork(const char *target, struct bpfbroker_result **res,
			struct bpfbroker_error **err)
{
	struct bpfbroker_program_select sel = {.name = "on_fork"};
	struct bpfbroker_attach_target t = {.program = "on_fork", .target = target};
	struct bpfbroker_load_opts o = {.sz = sizeof(o),
					.programs = &sel,
					.n_programs = 1,
					.attach_targets = &t,
					.n_attach_targets = 1};

	return harness_load("setup_progs", &o, res, err);
}

static int client_target_missing(void *arg)
{
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = load_on_fork(arg, &res, &err);

	if (k == 0)
		bpfbroker_result_free(res);
	CHECK(k == -ESRCH && err && strcmp(err->code, "load-failed") == 0,
	      "a missing target: %d %s: %s", k, code_of(err), err ? err->message : "");
	CHECK(strstr(err->message, "libbpf could not set the attach target of program "
				   "\"on_fork\"") &&
		      strstr(err->message, "the kernel's BTF has no such target"),
	      "message: %s", err->message);
	bpfbroker_error_free(err);
	return 0;
}

static int client_attach_target(void *arg)
{
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = load_on_fork("sched_process_fork", &res, &err);

	CHECK(k == 0, "tp_btf on sched_process_fork: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	return 0;
}

static void test_attach_targets(void **state)
{
	struct bpfbroker_program_select fork_sel = {.name = "on_fork"};
	struct bpfbroker_program_select unix_sel = {.name = "unix_sendmsg",
						    .type = "cgroup_sock_addr",
						    .attach_type = "cgroup_unix_sendmsg"};
	struct bpfbroker_attach_target t = {.program = "on_fork", .target = "sched_process_fork"};
	struct bpfbroker_load_opts o = {.sz = sizeof(o),
					.programs = &fork_sel,
					.n_programs = 1,
					.attach_targets = &t,
					.n_attach_targets = 1};

	assert_int_equal(harness_as_user(&all, client_attach_target, NULL), 0);
	/* Without a target libbpf cannot load a bare tp_btf section; nor can the broker. */
	o.n_attach_targets = 0;
	expect_refused(&all, "setup_progs", &o, "load-failed", "");
	o.n_attach_targets = 1;
	/*
	 * A target the kernel lacks fails as one named in the section does, and as
	 * bpf_program__set_attach_target() answers root: load-failed, ESRCH.
	 */
	t.target = "no_such_tracepoint_here";
	assert_int_equal(root_set_attach_target("setup_progs", "on_fork", t.target), -ESRCH);
	assert_int_equal(harness_as_user(&all, client_target_missing, (void *)t.target), 0);
	t.target = "sched-process-fork";
	expect_refused(&all, "setup_progs", &o, "invalid-request", "\"target\" must be 1 to 128");
	t.target = "sched_process_fork";
	t.program = "nope";
	expect_refused(&all, "setup_progs", &o, "invalid-request", "no program \"nope\"");
	t.program = "unix_sendmsg";
	o.programs = &unix_sel;
	expect_refused(&all, "setup_progs", &o, "invalid-request",
		       "program \"unix_sendmsg\" has type cgroup_sock_addr, which takes no BTF "
		       "attach target");
	/* tracing is granted by program type, whatever the target. */
	t.program = "on_fork";
	o.programs = &fork_sel;
	expect_refused(&narrow, "setup_progs", &o, "policy-denied",
		       "program \"on_fork\" has type tracing, which your policy does not allow");
}

/* ---- bpfctl ---- */

static void test_bpfctl(void **state)
{
	const char *obj = harness_object("setup_maps");

	assert_int_equal(harness_ctl(&all, "-j", "--map-value-size", "stacks=1016",
				     "--map-value-size", "events=0", "--map-value-size",
				     "perf_events=4", "--map-key-size", "perf_events=4",
				     "--inner-map", "per_cpu_tables=array:4:8:16", "check", obj,
				     NULL),
			 0);
	assert_non_null(strstr(harness_out, "\"value_size\":1016"));
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks=1016", "--map-value-size",
				     "events=0", "--map-value-size", "perf_events=4", "--inner-map",
				     "per_cpu_tables=array:4:8:16", "load", obj, "--name", "sized",
				     NULL),
			 0);
	assert_int_equal(harness_ctl(&all, "unload", "sized", NULL), 0);
	/* Malformed options: refused before anything is sent. */
	assert_int_equal(
		harness_ctl(&all, "--inner-map", "per_cpu_tables=array:4:8", "check", obj, NULL),
		2);
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks", "check", obj, NULL), 2);
	/*
	 * Above the protocol's sizes: refused, not sent. UINT32_MAX would go as 0, which a
	 * ring buffer takes: the check would pass with another size than the one typed.
	 */
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks=1016", "--map-value-size",
				     "events=4294967295", "--map-value-size", "perf_events=4",
				     "--inner-map", "per_cpu_tables=array:4:8:16", "check", obj,
				     NULL),
			 2);
	assert_int_equal(
		harness_ctl(&all, "--map-value-size", "stacks=16777217", "check", obj, NULL), 2);
	assert_int_equal(harness_ctl(&all, "--map-key-size", "stacks=65537", "check", obj, NULL),
			 2);
	/* An inner map's flags, decimal or hex; refused by the broker beyond the known ones. */
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks=1016", "--map-value-size",
				     "events=0", "--map-value-size", "perf_events=4", "--inner-map",
				     "per_cpu_tables=lpm_trie:8:4:16:0x1", "load", obj, "--name",
				     "lpm", NULL),
			 0);
	assert_int_equal(harness_ctl(&all, "unload", "lpm", NULL), 0);
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks=1016", "--map-value-size",
				     "events=0", "--map-value-size", "perf_events=4", "--inner-map",
				     "per_cpu_tables=lpm_trie:8:4:16:1", "check", obj, NULL),
			 0);
	assert_int_equal(harness_ctl(&all, "--map-value-size", "stacks=1016", "--map-value-size",
				     "events=0", "--map-value-size", "perf_events=4", "--inner-map",
				     "per_cpu_tables=lpm_trie:8:4:16:0x10000", "check", obj, NULL),
			 2);
	assert_int_equal(harness_ctl(&all, "--inner-map", "per_cpu_tables=array:4:8:16:0xg",
				     "check", obj, NULL),
			 2);
	assert_int_equal(harness_ctl(&all, "--inner-map", "per_cpu_tables=array:4:8:16:", "check",
				     obj, NULL),
			 2);
	assert_int_equal(harness_ctl(&all, "--attach-target", "on_fork", "check", obj, NULL), 2);
	assert_int_equal(harness_ctl(&all, "--attach-target", "on_fork=sched_process_fork",
				     "--program", "on_fork", "check", harness_object("setup_progs"),
				     NULL),
			 0);
	assert_int_equal(harness_ctl(&all, "--program", "unix_sendmsg:cgroup_sock_addr:50", "check",
				     harness_object("setup_progs"), NULL),
			 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[2048];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}],"
		 "   \"map_types\": [\"hash_of_maps\", \"perf_event_array\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"map_types\": [\"lpm_trie\"]}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"cgroup_sock_addr\", \"tracing\"],"
		 "   \"map_types\": [\"stack_trace\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"attach\": {\"cgroups\": [\"cgroup_unix_sendmsg\"]}}}"
		 "]}",
		 UID_ALL, UID_NARROW, UID_NOHOOK, UID_ALL, UID_ALL, UID_NOHOOK, UID_ALL);
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_sizes_like_libbpf),
		cmocka_unit_test(test_map_sizes_refused),
		cmocka_unit_test(test_inner_maps),
		cmocka_unit_test(test_inner_map_flags),
		cmocka_unit_test(test_attach_types),
		cmocka_unit_test(test_attach_types_brokered),
		cmocka_unit_test(test_attach_targets),
		cmocka_unit_test(test_bpfctl),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
