/* SPDX-License-Identifier: MIT */
/*
 * Vetted objects end to end, as real unprivileged uids against the real daemon and kernel: a
 * system object loaded by name with its manifest's grants (and only for it), attached to a
 * cgroup its user owns; refused when not granted, tampered with, in a directory someone else
 * could write, or when its manifest grants less than it needs; the same grant by digest for
 * an object the user brings, and not for one byte changed; names that are not one path
 * component.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
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
#include "common/sha256.h"
#include "common/macro.h"
#include "harness.h"
#include "harness_client.h"

#define UID_VET 4501 /* socket filters ordinarily; the system objects and a digest granted */
#define UID_PLAIN 4502 /* the same ordinary grant, no vetted object */
#define UID_BYNAME 4503 /* a digest granted with a system object's grants, by its name */

static const struct user vet = {UID_VET, UID_VET};
static const struct user plain = {UID_PLAIN, UID_PLAIN};
static const struct user byname = {UID_BYNAME, UID_BYNAME};

static char objects_dir[300], built_obj[300], built_manifest[300], manifest_digest[80];
static char egress_digest[80], cgroup[PATH_MAX], other_cgroup[PATH_MAX];

#define ctl harness_ctl
#define out harness_out

static int read_file(const char *path, char **ret, size_t *ret_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		close(fd);
		return -EIO;
	}
	close(fd);
	buf[st.st_size] = '\0';
	*ret = buf;
	*ret_size = (size_t)st.st_size;
	return 0;
}

static int file_digest(const char *path, char ret[80])
{
	char hex[SHA256_HEX_SIZE], *buf;
	size_t size;
	int k = read_file(path, &buf, &size);

	if (k < 0)
		return k;
	k = sha256_hex(buf, size, hex);
	free(buf);
	snprintf(ret, 80, "sha256:%s", hex);
	return k;
}

/* A manifest for the built object with these grants ("allow" members). */
static int write_manifest(const char *name, const char *allow)
{
	char path[400], text[2048];

	snprintf(path, sizeof(path), "%s/%s.json", objects_dir, name);
	snprintf(text, sizeof(text), "{\"digest\": \"%s\", %s}", manifest_digest, allow);
	return harness_write_file(path, text);
}

static int install_object(const char *name, uid_t owner)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s.bpf.o", objects_dir, name);
	return harness_copy_file(built_obj, path, owner, 0644);
}

/* Load system object name (named as keep, if not NULL); the error's code and key checked. */
static int load_system(const char *name, const char *keep, const char *code, const char *key,
		       struct bpfbroker_result **ret)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = keep};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_system(b, name, &o, &r, &e);
	bpfbroker_close(b);
	if (!code) {
		CHECK(k == 0, "%s: %d %s: %s", name, k, e ? e->code : "",
		      e ? e->message : strerror(-k));
		if (ret)
			*ret = r;
		else
			bpfbroker_result_free(r);
		return 0;
	}
	CHECK(k < 0 && e && strcmp(e->code, code) == 0, "%s: expected %s, got %d %s: %s", name,
	      code, k, e ? e->code : "", e ? e->message : "");
	fprintf(stderr, "refused as expected: %s\n", e->message);
	if (key)
		CHECK(harness_denial_has_key(e, key), "key %s", key);
	bpfbroker_error_free(e);
	return 0;
}

static int map_access_is(const struct bpfbroker_result *r, const char *map, enum bpfbroker_access a)
{
	const struct bpfbroker_map *m = bpfbroker_result_map(r, map);

	CHECK(m, "no map %s", map);
	CHECK(m->access == a, "map %s: access %d, expected %d", map, (int)m->access, (int)a);
	CHECK((m->fd >= 0) == (a != BPFBROKER_ACCESS_NONE), "map %s: fd %d", map, m->fd);
	return 0;
}

/* By name: the manifest's grants exactly (not the user's "*": rw), no program fds. */
static int by_name(void *arg)
{
	struct bpfbroker_result *r = NULL;

	if (load_system("cgroup-count", NULL, NULL, NULL, &r))
		return 1;
	CHECK(r->allowed, "allowed");
	if (map_access_is(r, "counters", BPFBROKER_ACCESS_RO) ||
	    map_access_is(r, "config", BPFBROKER_ACCESS_RW))
		return 1;
	CHECK(bpfbroker_result_program(r, "count_egress") &&
		      bpfbroker_result_program(r, "count_egress")->fd < 0,
	      "no program fd: cgroup_skb is not in the manifest's program_fds");
	bpfbroker_result_free(r);
	return 0;
}

static void test_by_name(void **state)
{
	assert_int_equal(harness_as_user(&vet, by_name, NULL), 0);
}

/* The same program types from the user's own objects get the ordinary grant: refused. */
static int own_object(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	/* The system object's very bytes, sent as the user's own: no grant by name applies. */
	k = bpfbroker_load_file(b, built_obj, &o, &r, &e);
	CHECK(k < 0 && e && harness_denial_has_key(e, "program_types: cgroup_skb"),
	      "own copy of the system object: %d %s", k, e ? e->message : "");
	bpfbroker_error_free(e);
	e = NULL;
	bpfbroker_close(b);
	return 0;
}

/* Another cgroup_skb object, by a user who has no digest grant for it. */
static int own_egress(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k = harness_load("egress", &o, &r, &e);

	CHECK(k < 0 && e && harness_denial_has_key(e, "program_types: cgroup_skb"),
	      "own cgroup_skb object: %d %s", k, e ? e->message : "");
	bpfbroker_error_free(e);
	return 0;
}

static void test_own_object(void **state)
{
	assert_int_equal(harness_as_user(&vet, own_object, NULL), 0);
	assert_int_equal(harness_as_user(&plain, own_egress, NULL), 0);
}

static int not_granted(void *arg)
{
	return load_system("cgroup-count", NULL, "policy-denied", "objects: cgroup-count", NULL);
}

static void test_not_granted(void **state)
{
	assert_int_equal(harness_as_user(&plain, not_granted, NULL), 0);
}

static int refused(void *arg)
{
	const char *const *a = arg;

	return load_system(a[0], NULL, a[1], a[2], NULL);
}

static void expect_refused(const struct user *u, const char *name, const char *code,
			   const char *key)
{
	const char *args[] = {name, code, key};

	assert_int_equal(harness_as_user(u, refused, args), 0);
}

/* One byte of the installed object changed: its digest is not the manifest's. */
static void test_tampered(void **state)
{
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s/tampered.bpf.o", objects_dir);
	assert_int_equal(write_manifest("tampered", "\"program_types\": [\"cgroup_skb\"], "
						    "\"helper_classes\": [\"base\"]"),
			 0);
	assert_int_equal(install_object("tampered", 0), 0);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	expect_refused(&vet, "tampered", "bad-object", NULL);
}

/* A file someone else owns, and the directory made writable by others or by a user. */
static void test_untrusted(void **state)
{
	assert_int_equal(write_manifest("loose", "\"program_types\": [\"cgroup_skb\"], "
						 "\"helper_classes\": [\"base\"]"),
			 0);
	assert_int_equal(install_object("loose", UID_VET), 0);
	expect_refused(&vet, "loose", "bad-object", NULL);

	assert_int_equal(chmod(objects_dir, 0777), 0);
	expect_refused(&vet, "cgroup-count", "bad-object", NULL);
	assert_int_equal(chmod(objects_dir, 0755), 0);
	assert_int_equal(chown(objects_dir, UID_VET, 0), 0);
	expect_refused(&vet, "cgroup-count", "bad-object", NULL);
	assert_int_equal(chown(objects_dir, 0, 0), 0);
	assert_int_equal(harness_as_user(&vet, by_name, NULL), 0);
}

/* A manifest that grants less than its object needs: the ordinary checks refuse it. */
static void test_manifest_short(void **state)
{
	assert_int_equal(write_manifest("nohelpers", "\"program_types\": [\"cgroup_skb\"]"), 0);
	assert_int_equal(install_object("nohelpers", 0), 0);
	expect_refused(&vet, "nohelpers", "policy-denied", "helper_classes: base");
	assert_int_equal(write_manifest("wrongtype", "\"program_types\": [\"socket_filter\"], "
						     "\"helper_classes\": [\"base\"]"),
			 0);
	assert_int_equal(install_object("wrongtype", 0), 0);
	expect_refused(&vet, "wrongtype", "policy-denied", "program_types: cgroup_skb");
	/* Granted, but not installed. */
	expect_refused(&vet, "missing", "not-found", NULL);
}

/* Names that are not one plain path component never reach the file system. */
static int bad_names(void *arg)
{
	static const char *const names[] = {
		"../x",
		"",
		"a/b",
		".hidden",
		"-x",
		"..",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (load_system(names[i], NULL, "invalid-request", NULL, NULL))
			return 1;
	return 0;
}

/*
 * A system object's load carries no fd: one sent with it (the client's own
 * bytes, which the vetted name must never cover) is refused, nothing loaded.
 */
static int system_with_fd(void *arg)
{
	static const char *const requests[] = {
		"{\"bpfbroker\":1,\"id\":1,\"method\":\"load\","
		"\"params\":{\"system_object\":\"cgroup-count\"}}",
		"{\"bpfbroker\":1,\"id\":2,\"method\":\"load\","
		"\"params\":{\"system_object\":\"cgroup-count\",\"object_fd\":0}}",
	};
	struct bpfbroker *b;
	int fd = open(harness_object("counter"), O_RDONLY | O_CLOEXEC);

	(void)arg;
	CHECK(fd >= 0, "open: %m");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	for (size_t i = 0; i < ARRAY_SIZE(requests); i++) {
		char *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		int k = bpfbroker_call_raw(b, requests[i], &fd, 1, &reply, &fds, &n_fds);

		CHECK(k == 0 && reply && strstr(reply, "\"error\"") && n_fds == 0,
		      "system_object with an fd: %d %s", k, reply ?: "");
		free(reply);
		free(fds);
	}
	bpfbroker_close(b);
	close(fd);
	return 0;
}

static void test_bad_names(void **state)
{
	assert_int_equal(harness_as_user(&vet, bad_names, NULL), 0);
	assert_int_equal(harness_as_user(&vet, system_with_fd, NULL), 0);
}

/* The user's own object, allow-listed by its digest; one byte more and it is not. */
static int by_digest(void *arg)
{
	const char *which = arg;
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	char *buf;
	size_t size;
	int k;

	CHECK(read_file(harness_object("egress"), &buf, &size) == 0, "read egress");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_mem(b, buf, size, &o, &r, &e);
	CHECK(k == 0, "exact digest: %d %s", k, e ? e->message : "");
	if (strcmp(which, "inline") == 0) {
		if (map_access_is(r, "counts", BPFBROKER_ACCESS_RO) ||
		    map_access_is(r, "config", BPFBROKER_ACCESS_NONE))
			return 1;
	} else if (map_access_is(r, "counts", BPFBROKER_ACCESS_NONE) ||
		   map_access_is(r, "config", BPFBROKER_ACCESS_RW)) {
		return 1;
	}
	bpfbroker_result_free(r);
	r = NULL;
	/* Trailing bytes change nothing libbpf reads, only the digest. */
	buf = realloc(buf, size + 1);
	CHECK(buf, "realloc");
	buf[size] = '\n';
	k = bpfbroker_load_mem(b, buf, size + 1, &o, &r, &e);
	CHECK(k < 0 && e && harness_denial_has_key(e, "program_types: cgroup_skb"),
	      "one byte more: %d %s", k, e ? e->message : "");
	bpfbroker_error_free(e);
	bpfbroker_close(b);
	free(buf);
	return 0;
}

static void test_by_digest(void **state)
{
	assert_int_equal(harness_as_user(&vet, by_digest, (void *)"inline"), 0);
	assert_int_equal(harness_as_user(&byname, by_digest, (void *)"manifest"), 0);
}

/* Named, then attached by the broker to a cgroup the user owns, with the manifest's types. */
static void test_attach(void **state)
{
	const char *counters, *access;
	char prog[64];

	assert_int_equal(ctl(&vet, "load", "--system", "cgroup-count", "--name", "cc", NULL), 0);
	snprintf(prog, sizeof(prog), "cc/count_egress");
	assert_int_equal(ctl(&vet, "attach", prog, "cgroup", cgroup, "--pin", NULL), 0);
	/* Attach ownership still holds: not a cgroup of someone else's. */
	assert_int_not_equal(
		ctl(&vet, "attach", "cc/count_ingress", "cgroup", other_cgroup, "--pin", NULL), 0);
	/* The map access stays the manifest's at later requests. */
	assert_int_equal(ctl(&vet, "-j", "show", "cc", NULL), 0);
	counters = strstr(out, "\"counters\"");
	assert_non_null(counters);
	access = strstr(counters, "\"access\"");
	assert_non_null(access);
	assert_int_equal(strncmp(access, "\"access\": \"ro\"", 14), 0);
	assert_int_equal(ctl(&vet, "unload", "cc", NULL), 0);
	/* The same bytes as the user's own named object: the ordinary grant, no cgroup_skb. */
	assert_int_not_equal(ctl(&vet, "load", built_obj, "--name", "own", NULL), 0);
}

static int start(void)
{
	char policy[4096];

	if (harness_init() < 0 || sha256_init() < 0)
		return -1;
	snprintf(built_obj, sizeof(built_obj), "%s/objects/cgroup-count.bpf.o", H.build_dir);
	snprintf(built_manifest, sizeof(built_manifest), "%s/objects/cgroup-count.json",
		 H.build_dir);
	snprintf(objects_dir, sizeof(objects_dir), "%s/objects", H.dir);
	if (mkdir(objects_dir, 0755) < 0 || file_digest(built_obj, manifest_digest) < 0 ||
	    file_digest(harness_object("egress"), egress_digest) < 0)
		return -1;
	/* The package's object as meson built it, manifest and all. */
	{
		char path[400];

		snprintf(path, sizeof(path), "%s/cgroup-count.json", objects_dir);
		if (harness_copy_file(built_manifest, path, 0, 0644) < 0 ||
		    install_object("cgroup-count", 0) < 0)
			return -1;
	}
	if (harness_cgroup_make_own("bpfbroker-vetted", "mine", UID_VET, cgroup, sizeof(cgroup)) <
		    0 ||
	    harness_cgroup_make_own("bpfbroker-vetted", "theirs", UID_PLAIN, other_cgroup,
				    sizeof(other_cgroup)) < 0)
		return -1;
	snprintf(
		policy, sizeof(policy),
		"{\"rules\": ["
		" {\"match\": {\"uids\": [\"%d\", \"%d\", \"%d\"]},"
		"  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		"[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"objects\": [\"cgroup-count\", \"tampered\", \"loose\", "
		"\"nohelpers\", \"wrongtype\", \"missing\"],"
		"   \"digests\": {\"%s\": {\"program_types\": [\"cgroup_skb\"],"
		"     \"helper_classes\": [\"base\"], \"maps\": [{\"name\": \"counts\", \"access\":"
		" \"ro\"}]}}}},"
		" {\"match\": {\"uids\": [\"%d\"]},"
		"  \"allow\": {\"digests\": {\"%s\": \"cgroup-count\"}}}"
		"]}",
		UID_VET, UID_PLAIN, UID_BYNAME, UID_VET, egress_digest, UID_BYNAME, egress_digest);
	if (harness_write_policy("50-test.json", policy) < 0)
		return -1;
	harness_mark_kernel_objects();
	{
		char arg[400];

		snprintf(arg, sizeof(arg), "--objects-dir=%s", objects_dir);
		if (harness_start(arg) < 0)
			return -1;
	}
	return 0;
}

static int setup(void **state)
{
	return start() < 0 ? harness_setup_failed() : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_name),	    cmocka_unit_test(test_own_object),
		cmocka_unit_test(test_not_granted), cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_untrusted),   cmocka_unit_test(test_manifest_short),
		cmocka_unit_test(test_bad_names),   cmocka_unit_test(test_by_digest),
		cmocka_unit_test(test_attach),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
