// SPDX-License-Identifier: MIT
/* Unit tests for common/escape.c: what the daemon's logs and audit records make of any text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/escape.h"

static void expect(const char *in, unsigned flags, size_t size, const char *want)
{
	char buf[256];

	assert_true(size <= sizeof(buf));
	memset(buf, 'Z', sizeof(buf));
	assert_ptr_equal(escape_text(buf, size, in, flags), buf);
	assert_string_equal(buf, want);
}

static void test_plain(void **state)
{
	expect("count_egress", 0, 64, "count_egress");
	expect("a b=c/d:e,f", 0, 64, "a b=c/d:e,f");
	expect("", 0, 64, "");
	expect(NULL, 0, 64, "");
	/* Quotes stay quotes, unless the text goes between quotes. */
	expect("say \"hi\"", 0, 64, "say \"hi\"");
	expect("say \"hi\"", ESCAPE_QUOTES, 64, "say \\\"hi\\\"");
}

static void test_lines_and_records(void **state)
{
	/* The forged record of issue 17: one line, the newline visible. */
	expect("x\n<6>audit: event=unload decision=allow uid=0", 0, 128,
	       "x\\x0a<6>audit: event=unload decision=allow uid=0");
	expect("a\rb\tc\vd\fe", 0, 64, "a\\x0db\\x09c\\x0bd\\x0ce");
	/* Terminal escapes and DEL. */
	expect("\x1b[2K\x7f", 0, 64, "\\x1b[2K\\x7f");
	/* Every byte above ASCII: C1 controls (NEL), line and paragraph separators. */
	expect("\xc2\x85|\xe2\x80\xa8|\xe2\x80\xa9|\xff", 0, 64,
	       "\\xc2\\x85|\\xe2\\x80\\xa8|\\xe2\\x80\\xa9|\\xff");
	/* Backslashes are doubled, so a literal "\x0a" is not mistaken for an escape. */
	expect("\\x0a", 0, 64, "\\\\x0a");
}

static void test_truncation(void **state)
{
	/* Fits exactly (9 bytes and the NUL). */
	expect("abcdefghi", 0, 10, "abcdefghi");
	/* Does not: cut visibly, never inside an escape. */
	expect("abcdefghij", 0, 10, "abcdef...");
	expect("abcde\nfghij", 0, 12, "abcde...");
	expect("abcde\nfghij", 0, 13, "abcde\\x0a...");
	expect("abc", 0, 1, "");
	expect("abc", 0, 3, "");
	expect("abcdef", 0, 4, "...");
}

static void test_bare(void **state)
{
	assert_true(escape_is_bare("count_egress:cgroup_skb,x:y"));
	assert_true(escape_is_bare("a=b"));
	assert_false(escape_is_bare(""));
	assert_false(escape_is_bare(NULL));
	assert_false(escape_is_bare("a b"));
	assert_false(escape_is_bare("a\"b"));
	assert_false(escape_is_bare("a\\b"));
	assert_false(escape_is_bare("a\nb"));
	assert_false(escape_is_bare("\xc3\xa9"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_lines_and_records),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_bare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
