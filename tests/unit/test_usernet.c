// SPDX-License-Identifier: MIT
/*
 * Unit tests for usernet/assign.c: the network settings systemd's D-Bus API gives back
 * (a(iayu) prefixes, a(iiqq) bind rules, interface names), spelled as a unit file spells
 * them, and values systemd would never have stored refused rather than spelled wrong.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/macro.h"
#include "usernet/assign.h"

static void test_prefixes(void **state)
{
	static const uint8_t any4[4], any6[16], host4[4] = {127, 0, 0, 2}, net6[16] = {0xfe, 0x80};
	_cleanup_free_ char *buf = NULL;

	assert_int_equal(usernet_append_prefix(&buf, AF_INET, any4, 4, 0), 0);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET6, any6, 16, 0), 0);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET, host4, 4, 32), 0);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET6, net6, 16, 64), 0);
	assert_string_equal(buf, "0.0.0.0/0 ::/0 127.0.0.2/32 fe80::/64");
}

static void test_prefixes_refused(void **state)
{
	static const uint8_t addr[16];
	char *buf = NULL;

	/* Wrong size for the family, prefix past the address, unknown family: buf untouched. */
	assert_int_equal(usernet_append_prefix(&buf, AF_INET, addr, 16, 8), -EINVAL);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET6, addr, 4, 8), -EINVAL);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET, addr, 4, 33), -EINVAL);
	assert_int_equal(usernet_append_prefix(&buf, AF_INET6, addr, 16, 129), -EINVAL);
	assert_int_equal(usernet_append_prefix(&buf, AF_UNIX, addr, 4, 0), -EINVAL);
	assert_null(buf);
}

static void expect_rule(int32_t family, int32_t protocol, uint16_t nr, uint16_t min,
			const char *want)
{
	char *s = NULL;

	assert_int_equal(usernet_format_bind_rule(family, protocol, nr, min, &s),
			 want ? 0 : -EINVAL);
	if (want)
		assert_string_equal(s, want);
	else
		assert_null(s);
	free(s);
}

static void test_bind_rules(void **state)
{
	expect_rule(AF_UNSPEC, 0, 0, 0, "any");
	expect_rule(AF_INET, 0, 0, 0, "ipv4:any");
	expect_rule(AF_INET6, IPPROTO_UDP, 0, 0, "ipv6:udp:any");
	expect_rule(AF_UNSPEC, IPPROTO_TCP, 1, 22, "tcp:22");
	expect_rule(AF_INET, IPPROTO_TCP, 1025, 1024, "ipv4:tcp:1024-2048");
	expect_rule(AF_UNSPEC, 0, 1, 65535, "65535");
	expect_rule(AF_UNSPEC, 0, 65535, 1, "1-65535");
	/* Past 65535, a family or a protocol systemd does not store. */
	expect_rule(AF_UNSPEC, 0, 2, 65535, NULL);
	expect_rule(AF_UNIX, 0, 0, 0, NULL);
	expect_rule(AF_INET, IPPROTO_SCTP, 0, 0, NULL);
}

static void test_assignments(void **state)
{
	struct usernet_assignments a = {};
	_cleanup_free_ char *ifaces = NULL;

	assert_int_equal(usernet_append_word(&ifaces, "lo"), 0);
	assert_int_equal(usernet_append_word(&ifaces, "veth0"), 0);
	assert_int_equal(usernet_assignments_add(&a, "IPAccounting", "yes"), 0);
	assert_int_equal(usernet_assignments_add(&a, "RestrictNetworkInterfaces", ifaces), 0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0], "IPAccounting=yes");
	assert_string_equal(a.v[1], "RestrictNetworkInterfaces=lo veth0");
	assert_null(a.v[2]);
	usernet_assignments_done(&a);
	assert_null(a.v);
	assert_int_equal(a.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_prefixes_refused),
		cmocka_unit_test(test_bind_rules),
		cmocka_unit_test(test_assignments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
