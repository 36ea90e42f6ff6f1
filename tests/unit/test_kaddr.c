/* SPDX-License-Identifier: MIT */
/* Kernel addresses taken out of verifier logs: every spelling, and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/worker/kaddr.h"

static void expect(const char *in, const char *out)
{
	size_t len = 0;
	char *s = kaddr_scrub(in, strlen(in), &len);

	assert_non_null(s);
	assert_string_equal(s, out);
	assert_int_equal(len, strlen(out));
	free(s);
}

static void test_spellings(void **state)
{
	/* A 64-bit load of a kernel symbol, as the verifier prints it. */
	expect("0: (18) r1 = 0xffffffff8e6d1a40\n", "0: (18) r1 = <kernel address>\n");
	expect("R1_w=0xFFFFFFFF8E6D1A40", "R1_w=<kernel address>");
	/*
	 * Scalars are printed signed and unsigned. A negative 32-bit value
	 * sign-extends to exactly what a kernel text address is, so it goes too.
	 */
	expect("R1=-1905452480 R2=-128849018880", "R1=<kernel address> R2=<kernel address>");
	expect("umin=18446744071562067968,smin=-2147483648",
	       "umin=<kernel address>,smin=<kernel address>");
	expect("var_off=(0xffff888100000000; 0xff)", "var_off=(<kernel address>; 0xff)");
	/* The direct map, vmalloc, modules. */
	expect("0xffff888004c1d000 0xffffc90000123000 0xffffffffc0a00000",
	       "<kernel address> <kernel address> <kernel address>");
}

static void test_left_alone(void **state)
{
	/* errno values and small negatives, user addresses, bounds, words. */
	expect("R0=-22 R1=-4096 R2=-1 smin=-9223372036854775808",
	       "R0=-22 R1=-4096 R2=-1 smin=-9223372036854775808");
	expect("umax=18446744073709551615 umax=18446744073709547520",
	       "umax=18446744073709551615 umax=18446744073709547520");
	expect("0x7ffd12345678 0x0 0xffffffff 4294967295",
	       "0x7ffd12345678 0x0 0xffffffff 4294967295");
	expect("func#0 @0 abc0xffffffff8e6d1a40 x18446744071562067968y",
	       "func#0 @0 abc0xffffffff8e6d1a40 x18446744071562067968y");
	/* Too long to be 64 bits. */
	expect("0x1ffffffff8e6d1a40 999999999999999999999999",
	       "0x1ffffffff8e6d1a40 999999999999999999999999");
	expect("", "");
	expect("-", "-");
	expect("0x", "0x");
}

static void test_not_terminated(void **state)
{
	const char in[] = {'r', '=', '-', '1', '2', '8', '8', '4',
			   '9', '0', '1', '8', '8', '8', '0'};
	size_t len = 0;
	char *s = kaddr_scrub(in, sizeof(in), &len);

	assert_string_equal(s, "r=<kernel address>");
	free(s);
	s = kaddr_scrub(in, 5, &len);
	assert_string_equal(s, "r=-12");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_left_alone),
		cmocka_unit_test(test_not_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
