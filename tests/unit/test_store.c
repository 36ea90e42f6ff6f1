// SPDX-License-Identifier: MIT
/*
 * Unit tests for daemon/store.c without root (as root, the test first becomes nobody): the
 * store's files in a temporary directory standing in for bpffs and the state directory, as a
 * worker sees them: locks, commit records written, read, listed and removed, and the debris an
 * interrupted load or unload leaves swept at startup.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

#include "common/macro.h"
#include "daemon/worker/store.h"

static char root[64], pins[128], state[128];
static const struct store_config cfg = {.pin_root = pins, .state_dir = state};

static int group_setup(void **st)
{
	/* Nobody, with no groups: what the store does needs no privilege. */
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			       setresuid(65534, 65534, 65534) < 0))
		return -1;
	snprintf(root, sizeof(root), "/tmp/test-store-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(pins, sizeof(pins), "%s/pins", root);
	snprintf(state, sizeof(state), "%s/state", root);
	return mkdir(pins, 0700) < 0 ? -1 : 0;
}

static int group_teardown(void **st)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Does dir/rel exist? */
static bool exists(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return access(path, F_OK) == 0;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void commit(uid_t uid, const char *name)
{
	json_object *meta = json_object_new_object();

	assert_non_null(meta);
	json_object_object_add(meta, "name", json_object_new_string(name));
	assert_int_equal(store_object_dir_create(&cfg, uid, name), 0);
	assert_int_equal(store_meta_write(&cfg, uid, name, meta), 0);
	json_object_put(meta);
}

static void test_lock_makes_private_dirs(void **st)
{
	char path[PATH_MAX];
	struct stat s;
	int fd = store_lock_user(&cfg, 1000);

	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	snprintf(path, sizeof(path), "%s/1000", state);
	assert_int_equal(stat(path, &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);
	assert_int_equal(stat(state, &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);
	/* The same process again, after letting go. */
	close(fd);
	fd = store_lock_user(&cfg, 1000);
	assert_true(fd >= 0);
	close(fd);
}

static void test_meta_round_trip(void **st)
{
	json_object *meta = json_object_new_object(), *back = NULL, *v;
	char path[PATH_MAX];
	int fd = store_lock_user(&cfg, 1001);

	assert_true(fd >= 0);
	assert_int_equal(store_meta_read(&cfg, 1001, "obj", &back), -ENOENT);
	json_object_object_add(meta, "programs", json_object_new_int(3));
	assert_int_equal(store_meta_write(&cfg, 1001, "obj", meta), 0);
	assert_int_equal(store_meta_read(&cfg, 1001, "obj", &back), 0);
	assert_true(json_object_object_get_ex(back, "programs", &v));
	assert_int_equal(json_object_get_int(v), 3);
	json_object_put(back);
	/* No temporary file left behind by the commit. */
	assert_false(exists(state, "1001/obj.json.tmp"));
	/* Metadata that is not a JSON object: an error, nothing returned. */
	snprintf(path, sizeof(path), "%s/1001/bad.json", state);
	write_file(path, "[1, 2");
	back = NULL;
	assert_int_equal(store_meta_read(&cfg, 1001, "bad", &back), -EIO);
	assert_null(back);
	assert_int_equal(store_meta_remove(&cfg, 1001, "obj"), 0);
	assert_int_equal(store_meta_remove(&cfg, 1001, "obj"), -ENOENT);
	assert_int_equal(store_meta_read(&cfg, 1001, "obj", &back), -ENOENT);
	unlink(path);
	json_object_put(meta);
	close(fd);
}

static void test_list_and_count(void **st)
{
	char path[PATH_MAX], **names = NULL;
	uid_t *owners = NULL;
	size_t n = 0;
	uint64_t count = 99;
	int fd = store_lock_user(&cfg, 1002);

	assert_true(fd >= 0);
	/* A user without state: nothing, not an error. */
	assert_int_equal(store_list_names(&cfg, 4242, &names, &n), 0);
	assert_int_equal(n, 0);
	commit(1002, "zeta");
	commit(1002, "alpha");
	/* Neither temporary files nor names the protocol refuses are objects. */
	snprintf(path, sizeof(path), "%s/1002/beta.json.tmp", state);
	write_file(path, "{}");
	snprintf(path, sizeof(path), "%s/1002/-bad.json", state);
	write_file(path, "{}");
	assert_int_equal(store_list_names(&cfg, 1002, &names, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "alpha");
	assert_string_equal(names[1], "zeta");
	store_names_free(names, n);
	assert_int_equal(store_count_objects(&cfg, 1002, &count), 0);
	assert_int_equal(count, 2);
	/* Owners: the numeric directories of the state directory, sorted by name. */
	snprintf(path, sizeof(path), "%s/not-a-uid", state);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(store_list_owners(&cfg, &owners, &n), 0);
	assert_true(n >= 3);
	for (size_t i = 0; i < n; i++)
		assert_true(owners[i] >= 1000 && owners[i] <= 1002);
	free(owners);
	close(fd);
}

static void test_dirs(void **st)
{
	char buf[PATH_MAX], small[16];
	char long_name[PATH_MAX];
	json_object *empty = json_object_new_object();

	assert_int_equal(store_object_dir_create(&cfg, 1003, "obj"), 0);
	assert_int_equal(store_object_dir_create(&cfg, 1003, "obj"), -EEXIST);
	assert_int_equal(store_pinned_dir(&cfg, 1003, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "/1003/-pinned"));
	assert_int_equal(access(buf, F_OK), 0);
	/* Paths that do not fit are refused, not cut short. */
	assert_int_equal(store_object_dir(&cfg, 1003, "obj", small, sizeof(small)), -ENAMETOOLONG);
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(store_meta_write(&cfg, 1003, long_name, empty), -ENAMETOOLONG);
	json_object_put(empty);
}

static void test_sweep_and_recover(void **st)
{
	char path[PATH_MAX];
	int fd = store_lock_user(&cfg, 1004);

	assert_true(fd >= 0);
	commit(1004, "kept");
	/* An interrupted load: pins (a file standing for one) without a commit record. */
	assert_int_equal(store_object_dir_create(&cfg, 1004, "debris"), 0);
	snprintf(path, sizeof(path), "%s/1004/debris/m0", pins);
	write_file(path, "");
	assert_int_equal(store_sweep_user(&cfg, 1004), 0);
	assert_false(exists(pins, "1004/debris"));
	assert_true(exists(pins, "1004/kept"));
	close(fd);

	/* Startup: a temporary commit record and one whose pins are gone are dropped too. */
	commit(1004, "orphan");
	snprintf(path, sizeof(path), "%s/1004/orphan", pins);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/1004/half.json.tmp", state);
	write_file(path, "{");
	assert_int_equal(store_object_dir_create(&cfg, 1004, "debris2"), 0);
	assert_int_equal(store_recover(&cfg), 0);
	assert_false(exists(state, "1004/half.json.tmp"));
	assert_false(exists(state, "1004/orphan.json"));
	assert_false(exists(pins, "1004/debris2"));
	assert_true(exists(state, "1004/kept.json"));
	assert_true(exists(pins, "1004/kept"));
}

static void test_no_fault(void **st)
{
	/* Without --fault-inject nothing happens at a fault point. */
	store_fault(&cfg, "after-pin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_makes_private_dirs),
		cmocka_unit_test(test_meta_round_trip),
		cmocka_unit_test(test_list_and_count),
		cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_sweep_and_recover),
		cmocka_unit_test(test_no_fault),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
