// SPDX-License-Identifier: MIT
/*
 * Unit tests for common/bpffs.c's walk (bpffs_check_tree on ordinary
 * directories under /tmp): what counts as writable or reachable by someone
 * other than root, the bounds, failing closed, and the messages. Run as root
 * (they chown); as anyone else they are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmptree.h"

#include "common/bpffs.h"

#define USER 4601
#define GROUP 4610

static void make(const char *rel, mode_t mode, uid_t uid, gid_t gid)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", tmptree, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chown(p, uid, gid), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static struct bpffs_mount check_with(size_t entries, size_t depth)
{
	struct bpffs_budget b = {entries, depth};
	struct bpffs_mount m;

	bpffs_check_tree(tmptree, &b, &m);
	return m;
}

static struct bpffs_mount check(void)
{
	return check_with(BPFFS_WALK_MAX_ENTRIES, BPFFS_WALK_MAX_DEPTH);
}

static void expect_at(const struct bpffs_mount *m, enum bpffs_problem p, const char *rel)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s%s%s", tmptree, rel[0] ? "/" : "", rel);
	if (m->problem != p || strcmp(m->at, want) != 0)
		fail_msg("problem %d at %s, expected %d at %s", m->problem, m->at, p, want);
}

static void clear(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/* && chmod 0755 %s", tmptree, tmptree);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	return tmptree_setup("test-bpffs");
}

static void test_safe_trees(void **state)
{
	struct bpffs_mount m;
	char p[PATH_MAX];
	int fd;

	TMPTREE_NEED_ROOT();
	clear();
	m = check();
	assert_int_equal(m.problem, BPFFS_OK);
	assert_int_equal(m.mode, 0755);
	/* Behind a directory only root enters, anything goes: not reachable. */
	make("closed", 0700, 0, 0);
	make("closed/open", 0777, 0, 0);
	make("closed/users", 0755, USER, USER);
	/* Files (pins) are not where new pins are made. */
	snprintf(p, sizeof(p), "%s/pin", tmptree);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(p, 0666), 0);
	make("shared", 0755, 0, GROUP);
	make("shared/ro", 0750, 0, GROUP);
	m = check();
	assert_int_equal(m.problem, BPFFS_OK);
	/* Closed at the tmptree: nothing is walked at all. */
	assert_int_equal(chmod(tmptree, 0700), 0);
	make("x", 0777, 0, 0);
	m = check_with(0, 0);
	assert_int_equal(m.problem, BPFFS_OK);
}

static void test_writable(void **state)
{
	struct bpffs_mount m;
	char what[1200], fix[800];

	TMPTREE_NEED_ROOT();
	clear();
	/* The tmptree itself. */
	assert_int_equal(chmod(tmptree, 01777), 0);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "");
	bpffs_describe(&m, what, sizeof(what), fix, sizeof(fix));
	assert_non_null(strstr(what, "is writable by users other than root (mode 1777, owner 0)"));
	assert_non_null(strstr(fix, "mount -o remount,mode=0700"));
	clear();

	/* Group-only, with others shut out: a member of the group still pins there. */
	make("g", 0750, 0, GROUP);
	make("g/w", 0770, 0, GROUP);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "g/w");
	assert_int_equal(m.at_mode, 0770);
	assert_int_equal(m.at_gid, GROUP);
	bpffs_describe(&m, what, sizeof(what), fix, sizeof(fix));
	assert_non_null(strstr(what, "/g/w on the bpffs at"));
	assert_non_null(strstr(what, "(mode 0770, owner 0, group 4610)"));
	assert_non_null(strstr(fix, "chown root, chmod u+r,go-w"));
	clear();

	/* Group root is a group like any other. */
	make("r", 0775, 0, 0);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "r");
	clear();

	/* A user's directory is writable by the user, whatever its mode says. */
	make("u", 0500, USER, USER);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "u");
	clear();

	/* Traversable by the group only, no read: still walked (root reads it). */
	make("t", 0710, 0, GROUP);
	make("t/w", 0707, 0, 0);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "t/w");
}

static void test_deep(void **state)
{
	char rel[PATH_MAX] = "d";
	struct bpffs_mount m;

	TMPTREE_NEED_ROOT();
	clear();
	/* Well past any old depth cut-off. */
	make(rel, 0755, 0, 0);
	for (int i = 0; i < 20; i++) {
		strcat(rel, "/d");
		make(rel, 0755, 0, 0);
	}
	strcat(rel, "/w");
	make(rel, 0777, 0, 0);
	m = check();
	expect_at(&m, BPFFS_WRITABLE, rel);
	/* Deeper than the walk may go: unsafe, not safe. */
	m = check_with(BPFFS_WALK_MAX_ENTRIES, 10);
	expect_at(&m, BPFFS_TOO_LARGE, "");
}

static void test_budget(void **state)
{
	char rel[32], what[1200], fix[800];
	struct bpffs_budget b = {12, 4};
	struct bpffs_mount m;

	TMPTREE_NEED_ROOT();
	clear();
	for (int i = 0; i < 10; i++) {
		snprintf(rel, sizeof(rel), "%d", i);
		make(rel, 0700, 0, 0);
	}
	m = check_with(10, 4);
	assert_int_equal(m.problem, BPFFS_OK);
	m = check_with(9, 4);
	expect_at(&m, BPFFS_TOO_LARGE, "");
	bpffs_describe(&m, what, sizeof(what), fix, sizeof(fix));
	assert_non_null(strstr(what, "more than 8192 entries"));
	/* One budget for every tree checked with it. */
	bpffs_check_tree(tmptree, &b, &m);
	assert_int_equal(m.problem, BPFFS_OK);
	assert_int_equal(b.entries, 2);
	assert_int_equal(b.depth, 4);
	bpffs_check_tree(tmptree, &b, &m);
	expect_at(&m, BPFFS_TOO_LARGE, "");
}

/* In a child without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, as the daemon's workers run. */
static int check_without_dac(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {};
	struct bpffs_budget b = {BPFFS_WALK_MAX_ENTRIES, BPFFS_WALK_MAX_DEPTH};
	struct bpffs_mount m;

	if (syscall(SYS_capget, &h, d) < 0)
		return 100;
	d[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
	if (syscall(SYS_capset, &h, d) < 0)
		return 101;
	bpffs_check_tree(tmptree, &b, &m);
	if (m.problem != BPFFS_UNREADABLE || !strstr(m.at, "/x") || m.at_errno != EACCES)
		return 1;
	return 0;
}

static void test_unreadable(void **state)
{
	struct bpffs_mount m;
	char what[1200], fix[800];
	int status;
	pid_t pid;

	TMPTREE_NEED_ROOT();
	clear();
	/* Others pass through x; root without DAC capabilities cannot list it. */
	make("x", 0311, 0, 0);
	make("x/w", 0777, 0, 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(check_without_dac());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* With them (as here), the walk sees through it. */
	m = check();
	expect_at(&m, BPFFS_WRITABLE, "x/w");

	/* Gone: unsafe. */
	m = (struct bpffs_mount){.problem = BPFFS_UNREADABLE, .at_errno = EACCES};
	snprintf(m.path, sizeof(m.path), "/b");
	snprintf(m.at, sizeof(m.at), "/b/x");
	bpffs_describe(&m, what, sizeof(what), fix, sizeof(fix));
	assert_string_equal(what, "the directory /b/x on the bpffs at /b, which users other than "
				  "root can enter, cannot be read (Permission denied), so nobody "
				  "can tell whether they could pin there");
	{
		struct bpffs_budget b = {10, 10};
		char gone[PATH_MAX];

		snprintf(gone, sizeof(gone), "%s/nothing", tmptree);
		bpffs_check_tree(gone, &b, &m);
		assert_int_equal(m.problem, BPFFS_HIDDEN);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_trees), cmocka_unit_test(test_writable),
		cmocka_unit_test(test_deep),	   cmocka_unit_test(test_budget),
		cmocka_unit_test(test_unreadable),
	};

	return cmocka_run_group_tests(tests, setup, tmptree_teardown);
}
