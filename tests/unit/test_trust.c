// SPDX-License-Identifier: MIT
/*
 * Unit tests for policy/trust.c: which files and directories count as root's
 * configuration, and what the refusals say. Run as root (they chown); as
 * anyone else they are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmptree.h"

#include "policy/trust.h"

#define USER 4501

static void path(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmptree, rel);
}

static void make_dir(const char *rel, mode_t mode, uid_t uid)
{
	char p[PATH_MAX];

	path(p, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chown(p, uid, 0), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void make_file(const char *rel, mode_t mode, uid_t uid)
{
	char p[PATH_MAX];
	int fd;

	path(p, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{}", 2), 2);
	close(fd);
	assert_int_equal(chown(p, uid, 0), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void make_link(const char *rel, const char *target, uid_t uid)
{
	char p[PATH_MAX];

	path(p, rel);
	assert_int_equal(symlink(target, p), 0);
	assert_int_equal(lchown(p, uid, 0), 0);
}

/* trust_open_file(tmptree/dir, name): the fd is closed; the error (or NULL) returned. */
static char *open_file(const char *dir, const char *name, int *ret)
{
	char p[PATH_MAX], *error = NULL;
	int fd;

	path(p, dir);
	fd = trust_open_file(p, name, &error);
	if (fd >= 0) {
		assert_null(error);
		close(fd);
		*ret = 0;
	} else {
		assert_non_null(error);
		*ret = fd;
	}
	return error;
}

static void expect_file_ok(const char *dir, const char *name)
{
	int k;
	char *e = open_file(dir, name, &k);

	if (k < 0)
		fail_msg("%s/%s refused: %s", dir, name, e);
}

/* Refused with errno err and a message containing each of the NULL-terminated parts. */
static void expect_file_refused(const char *dir, const char *name, int err, ...)
{
	va_list ap;
	const char *part;
	int k;
	char *e = open_file(dir, name, &k);

	if (k >= 0)
		fail_msg("%s/%s was accepted", dir, name);
	assert_int_equal(k, err);
	va_start(ap, err);
	while ((part = va_arg(ap, const char *)))
		if (!strstr(e, part))
			fail_msg("\"%s\" lacks \"%s\"", e, part);
	va_end(ap);
	free(e);
}

static int setup(void **state)
{
	return tmptree_setup("test-trust");
}

static void test_files(void **state)
{
	TMPTREE_NEED_ROOT();
	make_dir("d", 0755, 0);
	make_file("d/ok.json", 0644, 0);
	make_file("d/ro.json", 0400, 0);
	make_file("d/user.json", 0644, USER);
	make_file("d/o+w.json", 0646, 0);
	make_file("d/g+w.json", 0664, 0);
	make_file("d/all.json", 0666, 0);
	expect_file_ok("d", "ok.json");
	expect_file_ok("d", "ro.json");
	expect_file_refused("d", "user.json", -EPERM,
			    "user.json: owned by uid 4501, not root: the broker reads only root's "
			    "configuration",
			    NULL);
	expect_file_refused("d", "o+w.json", -EPERM, "o+w.json: writable by others (mode 0646)",
			    NULL);
	expect_file_refused("d", "g+w.json", -EPERM, "g+w.json: writable by group (mode 0664)",
			    NULL);
	expect_file_refused("d", "all.json", -EPERM,
			    "all.json: writable by group and others (mode 0666)", NULL);
	/* Not a regular file: refused before anything opens it for reading. */
	{
		char p[PATH_MAX];

		path(p, "d/fifo.json");
		assert_int_equal(mkfifo(p, 0644), 0);
		expect_file_refused("d", "fifo.json", -EINVAL, "fifo.json: not a regular file",
				    NULL);
		make_dir("d/dir.json", 0755, 0);
		expect_file_refused("d", "dir.json", -EINVAL, "dir.json: not a regular file", NULL);
	}
	expect_file_refused("d", "missing.json", -ENOENT, "missing.json: cannot open", NULL);
}

static void test_directories(void **state)
{
	char p[PATH_MAX], *error = NULL;
	int fd;

	TMPTREE_NEED_ROOT();
	/* The policy directory itself. */
	make_dir("pol", 0755, 0);
	path(p, "pol");
	fd = trust_open_dir(p, &error);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(p, 0775), 0);
	assert_int_equal(trust_open_dir(p, &error), -EPERM);
	assert_non_null(strstr(error, "pol: writable by group (mode 0775)"));
	free(error);
	error = NULL;
	/* Sticky is no excuse for the policy directory: it is read whole. */
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(trust_open_dir(p, &error), -EPERM);
	assert_non_null(strstr(error, "writable by group and others (mode 1777)"));
	free(error);
	error = NULL;
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(chown(p, USER, 0), 0);
	assert_int_equal(trust_open_dir(p, &error), -EPERM);
	assert_non_null(strstr(error, "owned by uid 4501, not root"));
	free(error);
	error = NULL;
	assert_int_equal(chown(p, 0, 0), 0);

	/* A directory above it, and a file below it, name the directory. */
	make_dir("up", 0775, 0);
	make_dir("up/pol", 0755, 0);
	make_file("up/pol/a.json", 0644, 0);
	path(p, "up/pol");
	assert_int_equal(trust_open_dir(p, &error), -EPERM);
	path(p, "up");
	assert_non_null(strstr(error, p));
	assert_non_null(strstr(error, "(a directory on its way) is writable by group (mode 0775)"));
	free(error);
	error = NULL;
	expect_file_refused("up/pol", "a.json", -EPERM, p, "a directory on its way", NULL);

	/* Sticky on the way is fine when our entry is root's (tmptree is in /tmp, 1777). */
	make_dir("sticky", 01777, 0);
	make_dir("sticky/root", 0755, 0);
	make_file("sticky/root/a.json", 0644, 0);
	expect_file_ok("sticky/root", "a.json");
	/* ... and not when it is someone else's: they could rename it at will. */
	make_dir("sticky/user", 0755, USER);
	make_file("sticky/user/a.json", 0644, 0);
	expect_file_refused("sticky/user", "a.json", -EPERM, "owned by uid 4501, not root", NULL);
	/* Group-writable and sticky is sticky too (the Nix store is 1775). */
	make_dir("gsticky", 01775, 0);
	make_dir("gsticky/root", 0755, 0);
	make_file("gsticky/root/a.json", 0644, 0);
	expect_file_ok("gsticky/root", "a.json");

	/* Missing: -ENOENT, which the loader turns into "allows nothing". */
	path(p, "nope/pol");
	assert_int_equal(trust_open_dir(p, &error), -ENOENT);
	free(error);
	error = NULL;
	/* Not a directory. */
	path(p, "up/pol/a.json");
	assert_int_equal(trust_open_dir(p, &error), -EPERM); /* up is checked first */
	free(error);
	error = NULL;
	path(p, "pol");
	make_file("pol/f", 0644, 0);
	path(p, "pol/f");
	assert_int_equal(trust_open_dir(p, &error), -ENOTDIR);
	free(error);
}

static void test_links(void **state)
{
	char p[PATH_MAX];

	TMPTREE_NEED_ROOT();
	make_dir("l", 0755, 0);
	make_dir("safe", 0755, 0);
	make_file("safe/a.json", 0644, 0);
	make_dir("home", 0755, USER);
	make_file("home/evil.json", 0644, USER);
	make_file("home/root.json", 0644, 0);
	make_dir("deep", 0755, 0);
	make_dir("deep/er", 0755, 0);

	/* Root's file through root's directories: followed, absolute or relative. */
	path(p, "safe/a.json");
	make_link("l/abs.json", p, 0);
	expect_file_ok("l", "abs.json");
	make_link("l/rel.json", "../safe/./a.json", 0);
	expect_file_ok("l", "rel.json");
	make_link("l/dotdot.json", "../deep/er/../../safe/a.json", 0);
	expect_file_ok("l", "dotdot.json");
	/* A link to a link. */
	make_link("l/chain.json", "abs.json", 0);
	expect_file_ok("l", "chain.json");

	/* The user's file: refused for the user's directory first. */
	path(p, "home");
	make_link("l/evil.json", "../home/evil.json", 0);
	expect_file_refused("l", "evil.json", -EPERM, "evil.json: ", p,
			    "(a directory on its way) is owned by uid 4501, not root", NULL);
	/* Root's file in the user's directory: the user can swap it. */
	make_link("l/root.json", "../home/root.json", 0);
	expect_file_refused("l", "root.json", -EPERM, p, "owned by uid 4501", NULL);
	/* Root's own directory, but a link on the way through the user's: the user can re-point it.
	 */
	path(p, "safe");
	make_link("home/to-safe", p, USER);
	make_link("l/via.json", "../home/to-safe/a.json", 0);
	expect_file_refused("l", "via.json", -EPERM, "owned by uid 4501", NULL);
	/* A link of the user's (in root's directory, made before it was closed). */
	path(p, "safe/a.json");
	make_link("l/users-link.json", p, USER);
	expect_file_refused("l", "users-link.json", -EPERM,
			    "(a symbolic link on its way) is owned by uid 4501", NULL);
	/* Root's link to a 0666 file of root's. */
	make_file("safe/open.json", 0666, 0);
	make_link("l/open.json", "../safe/open.json", 0);
	expect_file_refused("l", "open.json", -EPERM,
			    "(the file it links to) is writable by group and others (mode 0666)",
			    NULL);
	/* Loops and dangling links. */
	make_link("l/loop.json", "loop.json", 0);
	expect_file_refused("l", "loop.json", -ELOOP, "more than 40 symbolic links", NULL);
	make_link("l/dangling.json", "../safe/nothing.json", 0);
	expect_file_refused("l", "dangling.json", -ENOENT, "cannot open", "nothing.json", NULL);
	/* A link to a directory is not a file. */
	make_link("l/dir.json", "../safe", 0);
	expect_file_refused("l", "dir.json", -EINVAL, "not a regular file", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_directories),
		cmocka_unit_test(test_links),
	};

	return cmocka_run_group_tests(tests, setup, tmptree_teardown);
}
