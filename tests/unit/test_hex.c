// SPDX-License-Identifier: MIT
/* Unit tests for common/hex.c: round trips, either case in, and what is not hex. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/hex.h"
#include "common/macro.h"

static void test_encode(void **state)
{
	static const uint8_t bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	_cleanup_free_ char *s = hex_encode(bytes, sizeof(bytes));
	_cleanup_free_ char *empty = hex_encode("", 0);
	char buf[2 * sizeof(bytes) + 1];

	assert_non_null(s);
	assert_string_equal(s, "00017f80abff");
	assert_non_null(empty);
	assert_string_equal(empty, "");
	hex_encode_to(bytes, sizeof(bytes), buf);
	assert_string_equal(buf, "00017f80abff");
}

static void test_decode(void **state)
{
	_cleanup_free_ uint8_t *b = NULL, *e = NULL;
	size_t n = 99;

	/* Either case; only the first len characters count. */
	assert_int_equal(hex_decode("00aB7fFFzz", 8, &b, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(b, ((const uint8_t[]){0x00, 0xab, 0x7f, 0xff}), 4);
	/* Nothing: a buffer (never NULL on success) of no bytes. */
	assert_int_equal(hex_decode("", 0, &e, &n), 0);
	assert_non_null(e);
	assert_int_equal(n, 0);
}

static void test_decode_rejects(void **state)
{
	static const char *const bad[] = {"0",	 "abc", "0g", "g0",	  "0x00", " 00",
					  "00 ", "-1",	"+1", "\xff\xff", "0:"};
	uint8_t *b = (uint8_t *)"untouched";
	size_t n = 7;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(hex_decode(bad[i], strlen(bad[i]), &b, &n), -EINVAL);
		assert_string_equal((const char *)b, "untouched");
		assert_int_equal(n, 7);
	}
	/* A NUL inside the length is no digit. */
	assert_int_equal(hex_decode("0\0", 2, &b, &n), -EINVAL);
}

static void test_round_trip(void **state)
{
	uint8_t all[256];
	_cleanup_free_ char *s = NULL;
	_cleanup_free_ uint8_t *back = NULL;
	size_t n;

	for (size_t i = 0; i < sizeof(all); i++)
		all[i] = (uint8_t)i;
	s = hex_encode(all, sizeof(all));
	assert_non_null(s);
	assert_int_equal(strlen(s), 2 * sizeof(all));
	assert_int_equal(hex_decode(s, strlen(s), &back, &n), 0);
	assert_int_equal(n, sizeof(all));
	assert_memory_equal(back, all, sizeof(all));
}

static void test_digit_value(void **state)
{
	for (int c = 0; c < 256; c++) {
		const char *digits = "0123456789abcdef", *DIGITS = "0123456789ABCDEF";
		const char *p = c ? strchr(digits, c) : NULL, *q = c ? strchr(DIGITS, c) : NULL;
		int want = p ? (int)(p - digits) : q ? (int)(q - DIGITS) : -1;

		assert_int_equal(hex_digit_value((char)c), want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),	       cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_rejects), cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_digit_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
