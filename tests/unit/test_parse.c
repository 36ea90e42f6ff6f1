// SPDX-License-Identifier: MIT
/*
 * Unit tests for common/parse.c: numbers, users and groups as a hostile client
 * or a careless administrator writes them, and lookups that leave libc's
 * static entries alone; and common/fdinfo.c's numbers read from /proc.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fdinfo.h"
#include "common/parse.h"

#define UNTOUCHED 12345u

static void expect_u64(const char *s, uint64_t max, int want_r, uint64_t want)
{
	uint64_t v = UNTOUCHED;

	assert_int_equal(parse_u64(s, max, &v), want_r);
	assert_int_equal(v, want_r == 0 ? want : UNTOUCHED);
}

static void test_u64(void **state)
{
	expect_u64("0", UINT64_MAX, 0, 0);
	expect_u64("42", UINT64_MAX, 0, 42);
	expect_u64("007", UINT64_MAX, 0, 7);
	expect_u64("00000000000000000000000000000001", UINT64_MAX, 0, 1);
	expect_u64("18446744073709551615", UINT64_MAX, 0, UINT64_MAX);
	expect_u64("9", 9, 0, 9);
	/* Numbers, too large. */
	expect_u64("10", 9, -ERANGE, 0);
	expect_u64("18446744073709551616", UINT64_MAX, -ERANGE, 0);
	expect_u64("99999999999999999999999999999999", UINT64_MAX, -ERANGE, 0);
	/* Not numbers: what strtoull would have taken. */
	expect_u64(NULL, UINT64_MAX, -EINVAL, 0);
	expect_u64("", UINT64_MAX, -EINVAL, 0);
	expect_u64("-1", UINT64_MAX, -EINVAL, 0);
	expect_u64("+1", UINT64_MAX, -EINVAL, 0);
	expect_u64(" 5", UINT64_MAX, -EINVAL, 0);
	expect_u64("5 ", UINT64_MAX, -EINVAL, 0);
	expect_u64("\t5", UINT64_MAX, -EINVAL, 0);
	expect_u64("5\n", UINT64_MAX, -EINVAL, 0);
	expect_u64("0x10", UINT64_MAX, -EINVAL, 0);
	expect_u64("010x", UINT64_MAX, -EINVAL, 0);
	expect_u64("1e3", UINT64_MAX, -EINVAL, 0);
	expect_u64("1.0", UINT64_MAX, -EINVAL, 0);
	expect_u64("1_000", UINT64_MAX, -EINVAL, 0);
	/* Past an overflow a stray character still makes it no number at all. */
	expect_u64("99999999999999999999999999x", UINT64_MAX, -EINVAL, 0);
	/* Fullwidth digit one (U+FF11). */
	expect_u64("\xef\xbc\x91", UINT64_MAX, -EINVAL, 0);
}

static void expect_uid(const char *s, int want_r, uid_t want)
{
	uid_t v = UNTOUCHED;

	assert_int_equal(parse_uid(s, &v), want_r);
	assert_int_equal(v, want_r == 0 ? want : UNTOUCHED);
}

static void expect_gid(const char *s, int want_r, gid_t want)
{
	gid_t v = UNTOUCHED;

	assert_int_equal(parse_gid(s, &v), want_r);
	assert_int_equal(v, want_r == 0 ? want : UNTOUCHED);
}

static void test_uid_numbers(void **state)
{
	expect_uid("0", 0, 0);
	expect_uid("1000", 0, 1000);
	expect_uid("0001000", 0, 1000);
	expect_uid("4294967294", 0, 4294967294u);
	/* (uid_t)-1 means "no uid" to the kernel: never a uid. */
	expect_uid("4294967295", -ERANGE, 0);
	expect_uid("4294967296", -ERANGE, 0);
	expect_uid("18446744073709551615", -ERANGE, 0); /* -1 as a 64-bit number */
	expect_uid("99999999999999999999999", -ERANGE, 0);
	expect_gid("4294967294", 0, 4294967294u);
	expect_gid("4294967295", -ERANGE, 0);
}

static void test_uid_not_numbers(void **state)
{
	char name[PARSE_NAME_MAX + 2];

	/* Signs, spaces and hex are no numbers, and no names either. */
	expect_uid(NULL, -EINVAL, 0);
	expect_uid("", -EINVAL, 0);
	expect_uid("-1", -EINVAL, 0);
	expect_uid("-0", -EINVAL, 0);
	expect_uid("+5", -EINVAL, 0);
	expect_uid("+", -EINVAL, 0);
	expect_uid("+root", -EINVAL, 0); /* a NIS compat entry in /etc/passwd */
	expect_uid("-root", -EINVAL, 0);
	expect_uid(" 5", -EINVAL, 0);
	expect_uid("5 ", -EINVAL, 0);
	expect_uid(" root", -EINVAL, 0);
	expect_uid("root ", -EINVAL, 0);
	expect_uid("root\n", -EINVAL, 0);
	expect_uid("ro\tot", -EINVAL, 0);
	expect_uid("root:x:0:0", -EINVAL, 0);
	expect_uid("../root", -EINVAL, 0);
	expect_uid(".", -EINVAL, 0);
	expect_uid("..", -EINVAL, 0);
	expect_uid("r\x7foot", -EINVAL, 0);
	expect_gid("-1", -EINVAL, 0);
	expect_gid(" 0", -EINVAL, 0);
	expect_gid("root:x", -EINVAL, 0);
	/* Looks like hex, reads as a name: there is no such user, and certainly not uid 16. */
	expect_uid("0x10", -ENOENT, 0);
	expect_gid("0x10", -ENOENT, 0);
	expect_uid("1e3", -ENOENT, 0);

	/* The longest name is looked up; one byte more is not. */
	memset(name, 'a', sizeof(name));
	name[PARSE_NAME_MAX] = '\0';
	expect_uid(name, -ENOENT, 0);
	expect_gid(name, -ENOENT, 0);
	name[PARSE_NAME_MAX] = 'a';
	name[PARSE_NAME_MAX + 1] = '\0';
	expect_uid(name, -EINVAL, 0);
	expect_gid(name, -EINVAL, 0);
}

static void test_names(void **state)
{
	struct passwd *pw;

	expect_uid("root", 0, 0);
	expect_gid("root", 0, 0);
	expect_uid("no-such-user-zz9", -ENOENT, 0);
	expect_gid("no-such-group-zz9", -ENOENT, 0);
	/* A name as sssd writes it is a name, looked up (and not found here). */
	expect_uid("alice@example.com", -ENOENT, 0);
	expect_uid("EXAMPLE\\alice smith", -ENOENT, 0);

	assert_true(parse_name_is_valid("root"));
	assert_true(parse_name_is_valid("_apt"));
	assert_true(parse_name_is_valid("a1"));
	assert_true(parse_name_is_valid("1a"));
	assert_false(parse_name_is_valid("1"));
	assert_false(parse_name_is_valid("0123456789"));

	/* Reentrant: libc's static entry, if a caller has one, is left as it was. */
	pw = getpwnam("root");
	assert_non_null(pw);
	expect_uid("nobody", 0, 65534);
	expect_gid("root", 0, 0);
	assert_string_equal(pw->pw_name, "root");
	assert_int_equal(pw->pw_uid, 0);
}

static void test_uid_to_name(void **state)
{
	char *name = (char *)"untouched";
	gid_t gid = UNTOUCHED;

	assert_int_equal(uid_to_name(0, &name), 0);
	assert_string_equal(name, "root");
	free(name);

	name = (char *)"untouched";
	assert_int_equal(uid_to_user(0, &name, &gid), 0);
	assert_string_equal(name, "root");
	assert_int_equal(gid, 0);
	free(name);
	assert_int_equal(uid_to_user(0, NULL, NULL), 0);

	name = (char *)"untouched";
	gid = UNTOUCHED;
	assert_int_equal(uid_to_name((uid_t)-1, &name), -ENOENT);
	assert_int_equal(uid_to_user(4000000000u, &name, &gid), -ENOENT);
	assert_string_equal(name, "untouched");
	assert_int_equal(gid, UNTOUCHED);
}

/* fdinfo lines of any fd: the first, one further on, a key that is a prefix, none, no fd. */
static void test_fdinfo(void **state)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), ep = epoll_create1(EPOLL_CLOEXEC);
	uint64_t v = 7;

	(void)state;
	assert_true(fd >= 0 && ep >= 0);
	assert_int_equal(fdinfo_get_u64(fd, "pos", &v), 0);
	assert_int_equal(v, 0);
	/* "flags" is octal with a leading 0: O_RDONLY | O_CLOEXEC, then large-file mode. */
	assert_int_equal(fdinfo_get_u64(fd, "flags", &v), 0);
	assert_true(v & O_CLOEXEC);
	v = 0;
	assert_int_equal(fdinfo_get_u64(fd, "mnt_id", &v), 0);
	assert_true(v > 0);
	assert_int_equal(fdinfo_get_u64(fd, "mnt", &v), -ENODATA);
	assert_int_equal(fdinfo_get_u64(fd, "no_such_key", &v), -ENODATA);
	assert_int_equal(fdinfo_get_u64(-EBADF, "pos", &v), -EBADF);
	assert_int_equal(fdinfo_get_u64(100000, "pos", &v), -ENOENT);
	/* An epoll fd watching 100 eventfds: fdinfo of several kilobytes, read in chunks. */
	for (int i = 0; i < 100; i++) {
		struct epoll_event e = {.events = EPOLLIN};
		int d = eventfd(0, EFD_CLOEXEC);

		assert_true(d >= 0);
		assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, d, &e), 0);
	}
	assert_int_equal(fdinfo_get_u64(ep, "pos", &v), 0);
	assert_int_equal(fdinfo_get_u64(ep, "no_such_key", &v), -ENODATA);
	/* "tfd:" lines have more than a number after the colon. */
	assert_int_equal(fdinfo_get_u64(ep, "tfd", &v), -EINVAL);
	close(ep);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),	    cmocka_unit_test(test_fdinfo),
		cmocka_unit_test(test_uid_numbers), cmocka_unit_test(test_uid_not_numbers),
		cmocka_unit_test(test_names),	    cmocka_unit_test(test_uid_to_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
