/* SPDX-License-Identifier: MIT */
/*
 * Where a process's audit records go (daemon/shared/audit.c): decided once,
 * but not by a socket() that failed for the moment.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/shared/audit.h"

/*
 * In a child (the decision is per process): out of fds, each call tries
 * again and fails; with fds, one decides (journald or, without it, stderr).
 */
static int emfile_child(void)
{
	struct rlimit saved, none = {0, 0};

	if (getrlimit(RLIMIT_NOFILE, &saved) < 0)
		return 99;
	none.rlim_max = saved.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &none) < 0)
		return 98;
	if (audit_open() != -EMFILE)
		return 1;
	/* Not decided for good by the failure: the next call tries again. */
	if (audit_open() != -EMFILE)
		return 2;
	if (setrlimit(RLIMIT_NOFILE, &saved) < 0)
		return 97;
	if (audit_open() != 0)
		return 3;
	return 0;
}

static void test_emfile_decides_nothing(void **state)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(emfile_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emfile_decides_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
