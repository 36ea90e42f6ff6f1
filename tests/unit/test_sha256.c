// SPDX-License-Identifier: MIT
/*
 * Unit tests for common/sha256.c: FIPS 180-4 test vectors, and the
 * accelerated (SHA-NI) path against the portable one over every tail length
 * and alignment, so a wrong lane order in the fast path cannot go unnoticed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sha256.h"

static void hex_of(const char *data, size_t size, char hex[SHA256_HEX_SIZE])
{
	sha256_hex(data, size, hex);
}

static void check_vectors(void)
{
	char hex[SHA256_HEX_SIZE];
	char *million = malloc(1000000);

	assert_non_null(million);
	hex_of("", 0, hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	assert_string_equal(hex,
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex,
			    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', 1000000);
	hex_of(million, 1000000, hex);
	assert_string_equal(hex,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void test_vectors_best(void **state)
{
	sha256_portable_only(false);
	check_vectors();
}

static void test_vectors_portable(void **state)
{
	sha256_portable_only(true);
	check_vectors();
	sha256_portable_only(false);
}

static void test_fast_matches_portable(void **state)
{
	uint8_t buf[1024 + 8];
	char fast[SHA256_HEX_SIZE], slow[SHA256_HEX_SIZE];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t len = 0; len <= 1024; len++) {
		size_t align = len % 8;

		sha256_portable_only(false);
		sha256_hex(buf + align, len, fast);
		sha256_portable_only(true);
		sha256_hex(buf + align, len, slow);
		assert_string_equal(fast, slow);
	}
	sha256_portable_only(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_best),
		cmocka_unit_test(test_vectors_portable),
		cmocka_unit_test(test_fast_matches_portable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
