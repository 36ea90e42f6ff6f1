// SPDX-License-Identifier: MIT
/*
 * Unit tests for daemon/shared/procfs.c and common/procfs.c: /proc text read whole through an
 * fd, the status lines the uprobe and capability checks need (strict numbers), and the split of a
 * cgroup path (its parse from /proc/PID/cgroup: test_cgroupfs.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/macro.h"
#include "daemon/shared/procfs.h"

static void test_read(void **state)
{
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int big = memfd_create("big", MFD_CLOEXEC);
	_cleanup_free_ char *text = NULL, *again = NULL, *none = NULL;
	uint64_t pid = 0;

	assert_true(fd >= 0);
	assert_int_equal(procfs_read(fd, &text), 0);
	assert_int_equal(procfs_status_u64(text, "Pid", 10, &pid), 0);
	assert_int_equal(pid, (uint64_t)getpid());
	/* The same fd reads again from the start. */
	assert_int_equal(procfs_read(fd, &again), 0);
	assert_non_null(strstr(again, "Pid:"));
	/* Over the limit: refused, nothing returned. */
	assert_true(big >= 0);
	assert_int_equal(ftruncate(big, PROCFS_MAX_BYTES), 0);
	assert_int_equal(procfs_read(big, &none), -EFBIG);
	assert_null(none);
}

static void test_status_u64(void **state)
{
	static const char text[] = "Name:\tx\nCapPrm:\t000001ffffffffff\nCapEff:\t 0\n"
				   "NoNewPrivs:\t1\nCapInh:\t-1\nCapAmb:\t0x10\nCapBnd:\t12 34\n"
				   "Seccomp:\t\nFoo:\t99999999999999999999\n";
	uint64_t v = 7;

	assert_int_equal(procfs_status_u64(text, "CapPrm", 16, &v), 0);
	assert_int_equal(v, 0x1ffffffffffull);
	assert_int_equal(procfs_status_u64(text, "CapEff", 16, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(procfs_status_u64(text, "NoNewPrivs", 10, &v), 0);
	assert_int_equal(v, 1);
	/* A prefix of a key is not the key; no line is no line. */
	assert_int_equal(procfs_status_u64(text, "Cap", 16, &v), -ENOENT);
	assert_int_equal(procfs_status_u64(text, "CapXyz", 16, &v), -ENOENT);
	/* What the kernel never writes: a sign, a 0x, two numbers, none, too large. */
	v = 7;
	assert_int_equal(procfs_status_u64(text, "CapInh", 16, &v), -EINVAL);
	assert_int_equal(procfs_status_u64(text, "CapAmb", 16, &v), -EINVAL);
	assert_int_equal(procfs_status_u64(text, "CapBnd", 16, &v), -EINVAL);
	assert_int_equal(procfs_status_u64(text, "Seccomp", 10, &v), -EINVAL);
	assert_int_equal(procfs_status_u64(text, "Foo", 10, &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void test_status_parse_strict_caps(void **state)
{
	static const char good[] = "Pid:\t5\nState:\tS (sleeping)\nUid:\t1\t1\t1\t1\n"
				   "Gid:\t2\t2\t2\t2\nCapPrm:\t0\nCapEff:\t0\nCapAmb:\t0\n"
				   "NoNewPrivs:\t0\n";
	static const char signed_cap[] = "Pid:\t5\nState:\tS\nUid:\t1\t1\t1\t1\n"
					 "Gid:\t2\t2\t2\t2\nCapPrm:\t-0\nCapEff:\t0\nCapAmb:\t0\n"
					 "NoNewPrivs:\t0\n";
	struct procfs_status p;

	assert_int_equal(procfs_status_parse(good, &p), 0);
	assert_int_equal(p.pid, 5);
	assert_int_equal(p.state, 'S');
	assert_false(p.no_new_privs);
	assert_int_equal(procfs_status_parse(signed_cap, &p), -EINVAL);
}

/* A pid that is no pid_t: the fuzzer found 2709551615 wrapping to a negative one. */
static void test_status_parse_pid_range(void **state)
{
	static const char *const bad[] = {"2709551615", "4294967301", "2147483648", "-1",
					  "0",		"+5",	      "5x",	    ""};
	static const char fmt[] = "Pid:\t%s\nState:\tS\nUid:\t1\t1\t1\t1\nGid:\t2\t2\t2\t2\n"
				  "CapPrm:\t0\nCapEff:\t0\nCapAmb:\t0\nNoNewPrivs:\t0\n";
	struct procfs_status p;
	char text[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), fmt, bad[i]);
		if (procfs_status_parse(text, &p) != -EINVAL)
			fail_msg("Pid: \"%s\" accepted", bad[i]);
	}
	snprintf(text, sizeof(text), fmt, "2147483647");
	assert_int_equal(procfs_status_parse(text, &p), 0);
	assert_int_equal(p.pid, 2147483647);
}

static void test_cgroup_split(void **state)
{
	char path[] = "/system.slice//bpfbroker.service/", dots[] = "/a/../b", dot[] = "/a/./b";
	char root[] = "/", *deep = malloc(2 * (PROCFS_CGROUP_MAX_DEPTH + 1) + 1);
	char *comp[PROCFS_CGROUP_MAX_DEPTH];
	size_t n = 99;

	assert_int_equal(procfs_cgroup_split(path, comp, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(comp[0], "system.slice");
	assert_string_equal(comp[1], "bpfbroker.service");
	assert_int_equal(procfs_cgroup_split(root, comp, &n), 0);
	assert_int_equal(n, 0);
	n = 99;
	assert_int_equal(procfs_cgroup_split(dots, comp, &n), -EINVAL);
	assert_int_equal(procfs_cgroup_split(dot, comp, &n), -EINVAL);
	assert_int_equal(n, 99);
	/* One component more than we look at. */
	assert_non_null(deep);
	for (size_t i = 0; i <= PROCFS_CGROUP_MAX_DEPTH; i++)
		memcpy(deep + 2 * i, "/d", 2);
	deep[2 * (PROCFS_CGROUP_MAX_DEPTH + 1)] = '\0';
	assert_int_equal(procfs_cgroup_split(deep, comp, &n), -EINVAL);
	free(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_status_u64),
		cmocka_unit_test(test_status_parse_strict_caps),
		cmocka_unit_test(test_status_parse_pid_range),
		cmocka_unit_test(test_cgroup_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
