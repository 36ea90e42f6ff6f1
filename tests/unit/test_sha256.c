// SPDX-License-Identifier: MIT
/*
 * Unit tests for common/sha256.c: FIPS 180-4 test vectors, no data at all, a multi-megabyte
 * buffer at every start alignment, and tails around the 64-byte block and its padding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sha256.h"

static void assert_sha(const void *data, size_t size, const char *want)
{
	char hex[SHA256_HEX_SIZE];

	assert_int_equal(sha256_hex(data, size, hex), 0);
	assert_string_equal(hex, want);
}

static void test_vectors(void **state)
{
	char *million = malloc(1000000);

	assert_non_null(million);
	assert_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', 1000000);
	assert_sha(million, 1000000,
		   "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

static void test_empty(void **state)
{
	static const char want[] =
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

	/* No data: with a pointer or none. */
	assert_sha("", 0, want);
	assert_sha(NULL, 0, want);
}

static void test_digest_bytes(void **state)
{
	uint8_t d[SHA256_DIGEST_SIZE];

	assert_int_equal(sha256("abc", 3, d), 0);
	assert_int_equal(d[0], 0xba);
	assert_int_equal(d[31], 0xad);
}

/* 3 MiB + 7 bytes of (i * 131 + 7) & 255, from every alignment of the start (python hashlib). */
static void test_multi_megabyte(void **state)
{
	const size_t size = 3 * 1024 * 1024 + 7;
	uint8_t *buf = malloc(size + 8);

	assert_non_null(buf);
	for (size_t align = 0; align < 8; align++) {
		for (size_t i = 0; i < size; i++)
			buf[align + i] = (uint8_t)(i * 131 + 7);
		assert_sha(buf + align, size,
			   "2009e30f47178899000866cf8e04a409ffa5acbc87cf4a20f89be208471f403b");
	}
	free(buf);
}

/* Lengths around one block and the padding's edge (55, 56: the length no longer fits). */
static void test_block_edges(void **state)
{
	static const struct {
		size_t size;
		const char *sha;
	} cases[] = {
		{55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
		{56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
		{63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
		{64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
		{65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
	};
	char a[65];

	memset(a, 'a', sizeof(a));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_sha(a, cases[i].size, cases[i].sha);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),	     cmocka_unit_test(test_empty),
		cmocka_unit_test(test_digest_bytes), cmocka_unit_test(test_multi_megabyte),
		cmocka_unit_test(test_block_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
