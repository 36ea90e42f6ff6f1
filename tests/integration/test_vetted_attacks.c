/* SPDX-License-Identifier: MIT */
/*
 * Attacks on vetted system objects from outside, as real unprivileged uids against the real
 * daemon, with the shipped network objects and the example policy's grant: test runs and
 * program fds of a vetted program, its read-only maps written, another user's objects and
 * cgroups, the root cgroup, load options past the manifest, the grant carried to the next
 * load, manifests and objects that are not root's alone, existence probes, quotas; each
 * asserts the safe outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "harness.h"
#include "harness_client.h"
#include "tests/integration/netinstall.h"

#define UID_A 4701 /* the example policy's network objects, and the broken ones below */
#define UID_B 4702 /* the example policy's network objects: another user */
#define UID_C 61002 /* outside the example's range: socket filters only */
#define UID_L 4703 /* the example's network objects; cgroup_skb of its own (test_lapsed) */
#define CG "bpfbroker-vetted-attacks" /* the test's cgroups: CG-PID/... */

static const struct user ua = {UID_A, UID_A}, ub = {UID_B, UID_B}, uc = {UID_C, UID_C};
#define ctl harness_ctl

static char objects_dir[300], user_dir[300], cg_a[PATH_MAX], cg_b[PATH_MAX];

/* k and e are the refusal expected: code, and the policy key if key is not NULL. */
static int refused(int k, struct bpfbroker_error *e, const char *what, const char *code,
		   const char *key)
{
	CHECK(k < 0 && e && strcmp(e->code, code) == 0, "%s: expected %s, got %d %s: %s", what,
	      code, k, e ? e->code : "", e ? e->message : "");
	fprintf(stderr, "%s refused as expected: %s\n", what, e->message);
	if (key)
		CHECK(harness_denial_has_key(e, key), "%s: key %s", what, key);
	bpfbroker_error_free(e);
	return 0;
}

static int load_sys(struct bpfbroker *b, const char *sys, const struct bpfbroker_load_opts *o,
		    struct bpfbroker_result **ret, struct bpfbroker_error **e)
{
	struct bpfbroker_load_opts def = {.sz = sizeof(def)};

	return bpfbroker_load_system(b, sys, o ?: &def, ret, e);
}

/* Load system object sys as named object name, on a connection of its own. */
static int load_named(const char *sys, const char *name)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = name};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = load_sys(b, sys, &o, &r, &e);
	bpfbroker_close(b);
	CHECK(k == 0, "load %s as %s: %d %s", sys, name, k, e ? e->message : "");
	bpfbroker_result_free(r);
	return 0;
}

static int attach_to(struct bpfbroker *b, const char *object, const char *prog, const char *dir,
		     const char *attach_type, struct bpfbroker_error **e)
{
	struct bpfbroker_attach_opts a = {.sz = sizeof(a),
					  .object = object,
					  .program = prog,
					  .target_type = "cgroup",
					  .attach_type = attach_type,
					  .pin = true};
	int k;

	a.cgroup_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(a.cgroup_fd >= 0, "open %s: %m", dir);
	k = bpfbroker_attach(b, &a, NULL, NULL, e);
	close(a.cgroup_fd);
	return k;
}

/*
 * A vetted program is the manifest's to run on real traffic only: a test run would feed it
 * crafted packets, so that it writes the maps the user may only read (ip_acct: any count
 * the user likes, at no traffic).
 */
static int try_test_run(void *arg)
{
	static const uint8_t pkt[64] = {[12] = 0x08, [14] = 0x45};
	struct bpfbroker_test_run_opts t = {.sz = sizeof(t),
					    .object = "fw",
					    .program = "ip_egress",
					    .data_in = pkt,
					    .data_in_size = sizeof(pkt),
					    .repeat = 1000};
	struct bpfbroker_test_run_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	if (load_named("ip-firewall", "fw"))
		return 1;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_test_run(b, &t, &res, &e);
	bpfbroker_test_run_result_free(res);
	if (refused(k, e, "test_run of a vetted program", "policy-denied", NULL))
		return 1;
	e = NULL;
	t.program = "ip_ingress";
	t.repeat = 0;
	k = bpfbroker_test_run(b, &t, &res, &e);
	bpfbroker_test_run_result_free(res);
	if (refused(k, e, "test_run of the other", "policy-denied", NULL))
		return 1;
	CHECK(bpfbroker_unload(b, "fw", NULL) == 0, "unload");
	bpfbroker_close(b);
	return 0;
}

static void test_test_run(void **state)
{
	assert_int_equal(harness_as_user(&ua, try_test_run, NULL), 0);
}

/*
 * Once a vetted object's grant lapses (its manifest's digest changed: a package upgrade),
 * its owner's own grant applies to it; one that grants cgroup_skb with its fds must still
 * not test-run the vetted programs, nor get their fds (a test run of its own). That the
 * grant did lapse shows in the maps: ip_acct read-only by the manifest, read-write by L's
 * own grant ("*" rw).
 */
static int lapsed_load(void *arg)
{
	(void)arg;
	return load_named("ip-firewall", "lapsed");
}

static int lapsed_try(void *arg)
{
	const bool lapsed = arg != NULL;
	static const uint8_t pkt[64] = {[12] = 0x08, [14] = 0x45};
	struct bpfbroker_test_run_opts t = {.sz = sizeof(t),
					    .object = "lapsed",
					    .program = "ip_egress",
					    .data_in = pkt,
					    .data_in_size = sizeof(pkt)};
	struct bpfbroker_test_run_result *res = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_test_run(b, &t, &res, &e);
	bpfbroker_test_run_result_free(res);
	CHECK(k < 0 && e && strstr(e->message, "is of vetted object \"lapsed\""),
	      "test_run refused for another reason: %d %s", k, e ? e->message : "");
	if (refused(k, e, "test_run of a vetted program", "policy-denied", NULL))
		return 1;
	e = NULL;
	k = bpfbroker_fds(b, "lapsed", &r, &e);
	CHECK(k == 0, "fds: %d %s", k, e ? e->message : "");
	for (size_t i = 0; i < r->n_programs; i++)
		CHECK(bpfbroker_result_program_at(r, i)->fd < 0, "a fd of program %s",
		      bpfbroker_result_program_at(r, i)->name);
	CHECK(bpfbroker_result_map(r, "ip_acct") != NULL, "no ip_acct");
	CHECK(bpfbroker_result_map(r, "ip_acct")->fd_access ==
		      (lapsed ? BPFBROKER_ACCESS_RW : BPFBROKER_ACCESS_RO),
	      "ip_acct fd access %d, but the grant %s",
	      (int)bpfbroker_result_map(r, "ip_acct")->fd_access,
	      lapsed ? "lapsed" : "is the manifest's");
	bpfbroker_result_free(r);
	if (lapsed)
		CHECK(bpfbroker_unload(b, "lapsed", NULL) == 0, "unload");
	bpfbroker_close(b);
	return 0;
}

static void test_lapsed(void **state)
{
	const struct user ul = {UID_L, UID_L};
	char path[400], saved[4096], policy[512], *digest;
	ssize_t n;
	int fd, k;

	snprintf(policy, sizeof(policy),
		 "{\"rules\": [{\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"program_types\":"
		 " [\"cgroup_skb\"], \"program_fds\": [\"cgroup_skb\"], \"helper_classes\": "
		 "[\"base\", \"net_read\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}}]}",
		 UID_L);
	assert_int_equal(harness_write_policy("60-lapsed.json", policy), 0);
	assert_int_equal(harness_reload(), 0);
	assert_int_equal(harness_as_user(&ul, lapsed_load, NULL), 0);
	assert_int_equal(harness_as_user(&ul, lapsed_try, NULL), 0); /* vetted still */
	/* As root: the manifest of another build (its digest's first digit changed). */
	snprintf(path, sizeof(path), "%s/ip-firewall.json", objects_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, saved, sizeof(saved) - 1);
	close(fd);
	assert_true(n > 0);
	saved[n] = '\0';
	{
		char changed[sizeof(saved)];

		memcpy(changed, saved, (size_t)n + 1);
		digest = strstr(changed, "sha256:");
		assert_non_null(digest);
		digest[7] = digest[7] == '0' ? '1' : '0';
		assert_int_equal(harness_write_file(path, changed), 0);
	}
	k = harness_as_user(&ul, lapsed_try, (void *)1);
	assert_int_equal(harness_write_file(path, saved), 0);
	assert_int_equal(k, 0);
}

/* The owner's fds: no program fd, the counts read-only; no write through the broker. */
static int own_fds(void *arg)
{
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	uint32_t key = 0;
	uint64_t acct[2] = {1u << 30, 1u << 30};
	struct bpfbroker *b;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_fds(b, "fw", &r, &e) == 0, "fds: %s", e ? e->message : "");
	CHECK(bpfbroker_result_program(r, "ip_egress")->fd < 0, "program fd handed out");
	CHECK(bpfbroker_result_program(r, "ip_ingress")->fd < 0, "program fd handed out");
	CHECK(bpfbroker_result_map(r, "ip_acct")->fd_access == BPFBROKER_ACCESS_RO,
	      "ip_acct fd writable");
	bpfbroker_result_free(r);
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	CHECK(bpfbroker_map_open(b, "fw", "ip_acct", &h, &e) == 0, "map open");
	k = bpfbroker_map_update_elem(h, &key, acct, 0, &e);
	bpfbroker_map_close(h);
	if (refused(k, e, "writing ip_acct", "policy-denied", NULL))
		return 1;
	bpfbroker_close(b);
	return 0;
}

/* Another user: A's objects are not found, whatever the method. */
static int others_objects(void *arg)
{
	char ref[64];
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	snprintf(ref, sizeof(ref), "%d/fw", UID_A);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_fds(b, ref, &r, &e);
	bpfbroker_result_free(r);
	if (refused(k, e, "fds of another's vetted object", "not-found", NULL))
		return 1;
	e = NULL;
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	k = bpfbroker_map_open(b, ref, "ipv4_allow", &h, &e);
	if (k == 0) {
		uint8_t key[8] = {0}, one = 1;

		e = NULL;
		k = bpfbroker_map_update_elem(h, key, &one, 0, &e);
		bpfbroker_map_close(h);
	}
	if (refused(k, e, "writing another's allow list", "not-found", NULL))
		return 1;
	e = NULL;
	k = bpfbroker_unload(b, ref, &e);
	if (refused(k, e, "unloading another's object", "not-found", NULL))
		return 1;
	e = NULL;
	k = attach_to(b, ref, "ip_egress", cg_b, NULL, &e);
	if (refused(k, e, "attaching another's object to my cgroup", "not-found", NULL))
		return 1;
	bpfbroker_close(b);
	return 0;
}

/* Attach: not another's cgroup, not the root cgroup, not an attach type not granted. */
static int attach_targets(void *arg)
{
	char root[PATH_MAX];
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	CHECK(harness_cgroup_root(root, sizeof(root)) == 0, "cgroup root");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = attach_to(b, "fw", "ip_egress", cg_b, NULL, &e);
	if (refused(k, e, "attach to another's cgroup", "policy-denied", NULL))
		return 1;
	e = NULL;
	k = attach_to(b, "fw", "ip_egress", root, NULL, &e);
	if (refused(k, e, "attach to the root cgroup", "policy-denied", NULL))
		return 1;
	e = NULL;
	k = attach_to(b, "fw", "ip_egress", cg_a, "cgroup_inet_sock_create", &e);
	if (refused(k, e, "attach as an attach type the manifest does not grant", "policy-denied",
		    "attach.cgroups: cgroup_inet_sock_create"))
		return 1;
	e = NULL;
	k = attach_to(b, "fw", "ip_egress", cg_a, NULL, &e);
	CHECK(k == 0, "attach to my own cgroup: %d %s", k, e ? e->message : "");
	bpfbroker_close(b);
	return 0;
}

static int load_fw(void *arg)
{
	(void)arg;
	return load_named("ip-firewall", "fw");
}

static int own_fds_then_unload(void *arg)
{
	if (own_fds(arg))
		return 1;
	return harness_unload("fw") == 0 ? 0 : 1;
}

static void test_maps(void **state)
{
	assert_int_equal(harness_as_user(&ua, load_fw, NULL), 0);
	assert_int_equal(harness_as_user(&ub, others_objects, NULL), 0);
	assert_int_equal(harness_as_user(&ua, attach_targets, NULL), 0);
	assert_int_equal(harness_as_user(&ua, own_fds_then_unload, NULL), 0);
}

/* Load options past the manifest: sizes, types, attach types, shares beyond its access. */
static int load_options(void *arg)
{
	static const struct bpfbroker_map_size big[] = {{"ipv4_allow", 1025}};
	static const struct bpfbroker_program_select as_filter[] = {
		{"ip_egress", "socket_filter", NULL}};
	static const struct bpfbroker_program_select as_connect[] = {
		{"bind4", NULL, "cgroup_inet4_connect"}};
	char uid_b[16];
	struct bpfbroker_share share = {
		.map = "ip_acct", .user = uid_b, .access = BPFBROKER_ACCESS_RW};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .map_sizes = big, .n_map_sizes = 1};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	snprintf(uid_b, sizeof(uid_b), "%d", UID_B);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = load_sys(b, "ip-firewall", &o, &r, &e);
	if (refused(k, e, "a map over the manifest's max_map_entries", "policy-denied",
		    "max_map_entries"))
		return 1;
	e = NULL;
	o = (struct bpfbroker_load_opts){.sz = sizeof(o), .programs = as_filter, .n_programs = 1};
	k = load_sys(b, "ip-firewall", &o, &r, &e);
	if (refused(k, e, "a vetted program as another type", "policy-denied",
		    "program_types: socket_filter"))
		return 1;
	e = NULL;
	o = (struct bpfbroker_load_opts){
		.sz = sizeof(o), .name = "shared", .shares = &share, .n_shares = 1};
	k = load_sys(b, "ip-firewall", &o, &r, &e);
	if (refused(k, e, "sharing a read-only map read-write", "policy-denied", NULL))
		return 1;
	e = NULL;
	/* Loads (the type is the manifest's); attaching as connect4 is not granted. */
	o = (struct bpfbroker_load_opts){
		.sz = sizeof(o), .name = "sb", .programs = as_connect, .n_programs = 1};
	k = load_sys(b, "socket-bind", &o, &r, &e);
	if (k == 0) {
		bpfbroker_result_free(r);
		k = attach_to(b, "sb", "bind4", cg_a, NULL, &e);
		CHECK(k < 0 && e &&
			      harness_denial_has_key(e, "attach.cgroups: cgroup_inet4_connect"),
		      "bind4 attached as connect4: %d %s", k, e ? e->message : "");
		bpfbroker_error_free(e);
		CHECK(bpfbroker_unload(b, "sb", NULL) == 0, "unload sb");
	} else {
		if (refused(k, e, "socket-bind as connect4", "policy-denied", NULL))
			return 1;
	}
	bpfbroker_close(b);
	return 0;
}

static void test_load_options(void **state)
{
	assert_int_equal(harness_as_user(&ua, load_options, NULL), 0);
	/* The refused named load left nothing behind: its name is free. */
	assert_int_equal(ctl(&ua, "load", "--system", "ip-firewall", "--name", "shared", NULL), 0);
	assert_int_equal(ctl(&ua, "unload", "shared", NULL), 0);
}

/* The vetted grant is the vetted object's: the next load on the connection gets none of it. */
static int same_connection(void *arg)
{
	static const char insns_req[] =
		"{\"bpfbroker\":1,\"id\":9,\"method\":\"load_insns\",\"params\":"
		"{\"insns_fd\":0,\"prog_type\":\"cgroup_skb\",\"system_object\":\"ip-firewall\"}}";
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	char *reply = NULL;
	int *fds = NULL, fd, k;
	size_t n_fds = 0;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = load_sys(b, "ip-firewall", NULL, &r, &e);
	CHECK(k == 0, "vetted load: %d %s", k, e ? e->message : "");
	bpfbroker_result_free(r);
	r = NULL;
	k = bpfbroker_load_file(b, harness_object("egress"), &o, &r, &e);
	if (refused(k, e, "own cgroup_skb after a vetted load", "policy-denied",
		    "program_types: cgroup_skb"))
		return 1;
	e = NULL;
	/* Raw instructions do not take a system object's name (nor its grant). */
	fd = open(harness_object("egress"), O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open");
	k = bpfbroker_call_raw(b, insns_req, &fd, 1, &reply, &fds, &n_fds);
	close(fd);
	CHECK(k == 0 && reply && strstr(reply, "\"invalid-request\"") && n_fds == 0,
	      "load_insns with system_object: %d %s", k, reply ?: "");
	free(reply);
	free(fds);
	bpfbroker_close(b);
	return 0;
}

static void test_same_connection(void **state)
{
	assert_int_equal(harness_as_user(&ua, same_connection, NULL), 0);
}

static int expect_load_refused(void *arg)
{
	const char *const *a = arg;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = load_sys(b, a[0], NULL, &r, &e);
	bpfbroker_result_free(r);
	bpfbroker_close(b);
	return refused(k, e, a[0], a[1], NULL);
}

static void expect_refused(const struct user *u, const char *name, const char *code)
{
	const char *args[] = {name, code};

	assert_int_equal(harness_as_user(u, expect_load_refused, (void *)args), 0);
}

static void install(const char *name, const char *from_name, mode_t manifest_mode)
{
	char from[600], to[600];

	snprintf(from, sizeof(from), "%s/%s.bpf.o", objects_dir, from_name);
	snprintf(to, sizeof(to), "%s/%s.bpf.o", objects_dir, name);
	assert_int_equal(harness_copy_file(from, to, 0, 0644), 0);
	snprintf(from, sizeof(from), "%s/%s.json", objects_dir, from_name);
	snprintf(to, sizeof(to), "%s/%s.json", objects_dir, name);
	assert_int_equal(harness_copy_file(from, to, 0, manifest_mode), 0);
}

/* Manifests and objects that someone other than root could change, or that are not files. */
static void test_untrusted_files(void **state)
{
	char path[600], target[600];

	/* Group-writable manifest (group root too). */
	install("gw", "ip-firewall", 0664);
	expect_refused(&ua, "gw", "bad-object");
	/* A manifest that is root's, reached through a link into a user's directory. */
	install("lnk", "ip-firewall", 0644);
	snprintf(path, sizeof(path), "%s/lnk.json", objects_dir);
	snprintf(target, sizeof(target), "%s/lnk.json", user_dir);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
	expect_refused(&ua, "lnk", "bad-object");
	/* The object file a link to a user's file with the very bytes. */
	install("objlnk", "ip-firewall", 0644);
	snprintf(path, sizeof(path), "%s/objlnk.bpf.o", objects_dir);
	snprintf(target, sizeof(target), "%s/objlnk.bpf.o", user_dir);
	assert_int_equal(harness_copy_file(path, target, UID_A, 0644), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(target, path), 0);
	expect_refused(&ua, "objlnk", "bad-object");
	/* A FIFO as the manifest: refused, not waited on. */
	snprintf(path, sizeof(path), "%s/fifo.json", objects_dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	expect_refused(&ua, "fifo", "bad-object");
	/* A directory as the object. */
	install("dir", "ip-firewall", 0644);
	snprintf(path, sizeof(path), "%s/dir.bpf.o", objects_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	expect_refused(&ua, "dir", "bad-object");
	/* Another object's manifest: the digest is not this object's. */
	install("swapped", "ip-firewall", 0644);
	snprintf(path, sizeof(path), "%s/swapped.bpf.o", objects_dir);
	snprintf(target, sizeof(target), "%s/socket-bind.bpf.o", objects_dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(harness_copy_file(target, path, 0, 0644), 0);
	expect_refused(&ua, "swapped", "bad-object");
}

/* Who is not granted a name learns nothing of it: installed or not, the same answer. */
static int probe(void *arg)
{
	static const char *const names[] = {"ip-firewall", "nosuch", "gw", "lnk"};
	char first[512] = "";

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct bpfbroker_result *r = NULL;
		struct bpfbroker_error *e = NULL;
		struct bpfbroker *b;
		char msg[512];
		const char *at;
		int k;

		CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
		k = load_sys(b, names[i], NULL, &r, &e);
		bpfbroker_close(b);
		CHECK(k < 0 && e && strcmp(e->code, "policy-denied") == 0, "%s: %d %s", names[i], k,
		      e ? e->message : "");
		/* The message with the name taken out. */
		at = strstr(e->message, names[i]);
		CHECK(at, "%s: %s", names[i], e->message);
		snprintf(msg, sizeof(msg), "%.*s%s", (int)(at - e->message), e->message,
			 at + strlen(names[i]));
		at = strstr(msg, names[i]);
		if (at)
			memmove((char *)at, at + strlen(names[i]),
				strlen(at + strlen(names[i])) + 1);
		CHECK(!strstr(e->message, objects_dir), "a path: %s", e->message);
		if (!first[0])
			snprintf(first, sizeof(first), "%s", msg);
		CHECK(strcmp(first, msg) == 0, "different answers: \"%s\", \"%s\"", first, msg);
		bpfbroker_error_free(e);
	}
	return 0;
}

static void test_probe(void **state)
{
	assert_int_equal(harness_as_user(&uc, probe, NULL), 0);
}

/* One user's objects up to the quota: another user's still load. */
static int fill(void *arg)
{
	struct bpfbroker *b;
	int n = 0;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	for (; n < 64; n++) {
		struct bpfbroker_load_opts o = {.sz = sizeof(o)};
		struct bpfbroker_result *r = NULL;
		struct bpfbroker_error *e = NULL;
		char name[16];
		int k;

		snprintf(name, sizeof(name), "q%d", n);
		o.name = name;
		k = load_sys(b, "restrict-ifaces", &o, &r, &e);
		bpfbroker_result_free(r);
		if (k < 0) {
			CHECK(e && harness_denial_has_key(e, "max_named_objects"), "%s: %d %s",
			      name, k, e ? e->message : "");
			bpfbroker_error_free(e);
			break;
		}
	}
	bpfbroker_close(b);
	CHECK(n > 0 && n < 64, "loaded %d", n);
	return 0;
}

static int drain(void *arg)
{
	(void)arg;
	for (int n = 0; n < 64; n++) {
		char name[16];

		snprintf(name, sizeof(name), "q%d", n);
		harness_unload(name);
	}
	return 0;
}

static int load_one(void *arg)
{
	(void)arg;
	if (load_named("ip-firewall", "mine"))
		return 1;
	return harness_unload("mine") == 0 ? 0 : 1;
}

static void test_quota_isolated(void **state)
{
	assert_int_equal(harness_as_user(&ua, fill, NULL), 0);
	assert_int_equal(harness_as_user(&ub, load_one, NULL), 0);
	assert_int_equal(harness_as_user(&ua, drain, NULL), 0);
}

static int start(void)
{
	char arg[400], policy[1024];

	if (harness_init() < 0 || netinstall_objects_and_policy(arg, sizeof(arg)) < 0)
		return -1;
	netinstall_objects_dir(objects_dir, sizeof(objects_dir));
	snprintf(user_dir, sizeof(user_dir), "%s/users-own", H.dir);
	if (mkdir(user_dir, 0755) < 0 || chown(user_dir, UID_A, UID_A) < 0)
		return -1;
	/* Beside the example policy, A also gets the broken objects' names. */
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"objects\": [\"gw\", \"lnk\","
		 " \"objlnk\", \"fifo\", \"dir\", \"swapped\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"program_types\":"
		 " [\"socket_filter\"], \"helper_classes\": [\"base\"]}}"
		 "]}",
		 UID_A, UID_C);
	if (harness_write_policy("50-test.json", policy) < 0)
		return -1;
	if (harness_cgroup_make_own(CG, "a", UID_A, cg_a, sizeof(cg_a)) < 0 ||
	    harness_cgroup_make_own(CG, "b", UID_B, cg_b, sizeof(cg_b)) < 0)
		return -1;
	harness_mark_kernel_objects();
	return harness_start(arg);
}

static int setup(void **state)
{
	return start() < 0 ? harness_setup_failed() : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_test_run),
		cmocka_unit_test(test_lapsed),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_load_options),
		cmocka_unit_test(test_same_connection),
		cmocka_unit_test(test_untrusted_files),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_quota_isolated),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
