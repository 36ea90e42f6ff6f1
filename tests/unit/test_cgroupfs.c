// SPDX-License-Identifier: MIT
/*
 * Unit tests for common/cgroupfs.c: the cgroup2 mount (statfs-verified), the unified line of
 * /proc/PID/cgroup parsed strictly against hostile text (a path out of our cgroup namespace,
 * "..", no such line, a line too long, a relative or empty path), and the two joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/cgroupfs.h"
#include "common/macro.h"

static void test_parse(void **state)
{
	static const char hybrid[] = "12:pids:/user.slice\n1:name=systemd:/user.slice/x.service\n"
				     "0::/user.slice/user-1000.slice/user@1000.service/app.slice\n";
	_cleanup_free_ char *p = NULL, *q = NULL, *r = NULL, *root = NULL, *odd = NULL;

	assert_int_equal(cgroupfs_parse(hybrid, &p), 0);
	assert_string_equal(p, "/user.slice/user-1000.slice/user@1000.service/app.slice");
	/* No newline at the end; the first unified line counts. */
	assert_int_equal(cgroupfs_parse("0::/a.service", &q), 0);
	assert_string_equal(q, "/a.service");
	assert_int_equal(cgroupfs_parse("0::/b\n0::/c\n", &r), 0);
	assert_string_equal(r, "/b");
	assert_int_equal(cgroupfs_parse("0::/\n", &root), 0);
	assert_string_equal(root, "/");
	/* Names with dots and spaces are names: only whole "." and ".." components are not. */
	assert_int_equal(cgroupfs_parse("0::/a..b/.c/d. e/_..\n", &odd), 0);
	assert_string_equal(odd, "/a..b/.c/d. e/_..");
}

/* What the kernel writes for no cgroup we can name, or never writes: refused, nothing returned. */
static void test_parse_hostile(void **state)
{
	static const struct {
		const char *text;
		int error;
	} bad[] = {
		/* A cgroup outside our cgroup namespace, and ".." inside a path. */
		{"0::/../x\n", -EINVAL},
		{"0::/..\n", -EINVAL},
		{"0::/a/../b\n", -EINVAL},
		{"0::/a/..\n", -EINVAL},
		{"0::/a/./b\n", -EINVAL},
		/* Relative, empty, empty components, a trailing '/'. */
		{"0::a\n", -EINVAL},
		{"0::\n", -EINVAL},
		{"0::", -EINVAL},
		{"0::/a//b\n", -EINVAL},
		{"0::/a/\n", -EINVAL},
		{"0:://\n", -EINVAL},
		/* The first unified line decides: a good one after a bad one is not taken. */
		{"0::a\n0::/b\n", -EINVAL},
		/* No unified line. */
		{"", -ENOENT},
		{"\n\n", -ENOENT},
		{"1::/a\n", -ENOENT},
		{"1:name=systemd:/a\n", -ENOENT},
		{" 0::/a\n", -ENOENT},
		{"00::/a\n", -ENOENT},
		{"0:/a\n", -ENOENT},
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *none = NULL;
		int k = cgroupfs_parse(bad[i].text, &none);

		if (k != bad[i].error || none)
			fail_msg("\"%s\": %d, not %d", bad[i].text, k, bad[i].error);
	}
}

/* A line of CGROUPFS_LINE_MAX bytes or more is refused, never cut short to a prefix. */
static void test_parse_long(void **state)
{
	_cleanup_free_ char *line = malloc(CGROUPFS_LINE_MAX + 2), *p = NULL;
	char *none = NULL;

	assert_non_null(line);
	memset(line, 'x', CGROUPFS_LINE_MAX + 1);
	memcpy(line, "0::/", 4);
	line[CGROUPFS_LINE_MAX] = '\n';
	line[CGROUPFS_LINE_MAX + 1] = '\0';
	assert_int_equal(cgroupfs_parse(line, &none), -ENAMETOOLONG);
	/* The same without the newline. */
	line[CGROUPFS_LINE_MAX] = '\0';
	assert_int_equal(cgroupfs_parse(line, &none), -ENAMETOOLONG);
	assert_null(none);
	/* One byte less is the longest taken. */
	line[CGROUPFS_LINE_MAX - 1] = '\0';
	assert_int_equal(cgroupfs_parse(line, &p), 0);
	assert_int_equal(strlen(p), CGROUPFS_LINE_MAX - 4);
}

static void test_path_is_valid(void **state)
{
	assert_true(cgroupfs_path_is_valid("/"));
	assert_true(cgroupfs_path_is_valid("/a"));
	assert_true(cgroupfs_path_is_valid("/user.slice/user@1000.service/_..x"));
	assert_false(cgroupfs_path_is_valid(NULL));
	assert_false(cgroupfs_path_is_valid(""));
	assert_false(cgroupfs_path_is_valid("a"));
	assert_false(cgroupfs_path_is_valid("/a\nb"));
	assert_false(cgroupfs_path_is_valid("/.."));
	assert_false(cgroupfs_path_is_valid("/../a"));
	assert_false(cgroupfs_path_is_valid("/."));
	assert_false(cgroupfs_path_is_valid("//"));
}

/* Read through an fd, from its start each time (the daemon reads one fd twice). */
static void test_read(void **state)
{
	static const char text[] = "1:name=systemd:/x\n0::/a/b\n";
	_cleanup_close_ int fd = memfd_create("cgroup", MFD_CLOEXEC);
	_cleanup_free_ char *p = NULL, *q = NULL;
	char *none = NULL;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	assert_int_equal(cgroupfs_read(fd, &p), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(cgroupfs_read(fd, &q), 0);
	assert_string_equal(q, "/a/b");
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "0::/../c\n", 9, 0), 9);
	assert_int_equal(cgroupfs_read(fd, &none), -EINVAL);
	assert_int_equal(cgroupfs_read(-1, &none), -EBADF);
	assert_null(none);
}

static void test_mount(void **state)
{
	const char *mount = cgroupfs_mount();
	struct statfs sfs;

	if (!mount)
		skip();
	assert_true(strcmp(mount, "/sys/fs/cgroup") == 0 ||
		    strcmp(mount, "/sys/fs/cgroup/unified") == 0);
	assert_int_equal(statfs(mount, &sfs), 0);
	assert_true((unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC);
	/* Looked up once: the same answer. */
	assert_ptr_equal(cgroupfs_mount(), mount);
}

static void test_join(void **state)
{
	const char *mount = cgroupfs_mount();
	char buf[PATH_MAX], want[PATH_MAX], small[8] = "keep";
	size_t m;

	if (!mount) {
		assert_int_equal(cgroupfs_join("/a", buf, sizeof(buf)), -ENODEV);
		skip();
	}
	m = strlen(mount);
	assert_int_equal(cgroupfs_join("/", buf, sizeof(buf)), 0);
	assert_string_equal(buf, mount);
	assert_int_equal(cgroupfs_join("/a/b", buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/a/b", mount);
	assert_string_equal(buf, want);
	/* Refused paths, and no room: buf is not written. */
	assert_int_equal(cgroupfs_join("/../x", small, sizeof(small)), -EINVAL);
	assert_int_equal(cgroupfs_join("x", small, sizeof(small)), -EINVAL);
	assert_int_equal(cgroupfs_join("/a", small, sizeof(small)), -ENAMETOOLONG);
	assert_string_equal(small, "keep");
	/* Exactly fits, one byte short. */
	assert_int_equal(cgroupfs_join("/ab", buf, m + 4), 0);
	assert_int_equal(cgroupfs_join("/ab", buf, m + 3), -ENAMETOOLONG);
}

/* Our own cgroup: the same by pid 0 and by our pid, and a directory there. */
static void test_pid_dir(void **state)
{
	char self[PATH_MAX], by_pid[PATH_MAX];
	struct stat st;

	if (!cgroupfs_mount())
		skip();
	assert_int_equal(cgroupfs_pid_dir(0, self, sizeof(self)), 0);
	assert_int_equal(cgroupfs_pid_dir(getpid(), by_pid, sizeof(by_pid)), 0);
	assert_string_equal(self, by_pid);
	assert_int_equal(stat(self, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(cgroupfs_pid_dir(0, self, 4), -ENAMETOOLONG);
}

/* cgroupfs_write(): the whole text into an existing file; a missing one or a path too long fails.
 */
static void test_write(void **state)
{
	char dir[] = "/tmp/test-cgroupfs-XXXXXX", path[PATH_MAX], buf[16] = {0},
	     longdir[PATH_MAX + 64];
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cgroupfs_write(dir, "cgroup.procs", "4242"), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 4);
	close(fd);
	assert_string_equal(buf, "4242");
	assert_int_equal(cgroupfs_write(dir, "cgroup.kill", "1"), -ENOENT);
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	assert_int_equal(cgroupfs_write(longdir, "cgroup.procs", "1"), -ENAMETOOLONG);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),	   cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_parse_long), cmocka_unit_test(test_path_is_valid),
		cmocka_unit_test(test_read),	   cmocka_unit_test(test_mount),
		cmocka_unit_test(test_join),	   cmocka_unit_test(test_pid_dir),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
