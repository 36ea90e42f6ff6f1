// SPDX-License-Identifier: MIT
/*
 * Unit tests for objects/net/net_settings.c: systemd's network settings as its
 * documentation (systemd.resource-control(5)) and its parsers take them, and what they
 * refuse; each accepted value checked against the map entries it becomes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/macro.h"
#include "objects/net/net_settings.h"

/* A prefix as text, "ADDR/LEN", for comparing with the tables. */
static const char *prefix_str(const struct net_prefix *p)
{
	static char buf[4][INET6_ADDRSTRLEN + 8];
	static unsigned next;
	char *b = buf[next++ % 4], addr[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->addr, addr, sizeof(addr));
	snprintf(b, sizeof(buf[0]), "%s/%u", addr, p->prefixlen);
	return b;
}

static const struct {
	const char *word;
	const char *want[2]; /* NULL: refused */
} prefixes[] = {
	/* The symbolic names of the documentation's table 1. */
	{"any", {"0.0.0.0/0", "::/0"}},
	{"localhost", {"127.0.0.0/8", "::1/128"}},
	{"link-local", {"169.254.0.0/16", "fe80::/64"}},
	{"multicast", {"224.0.0.0/4", "ff00::/8"}},
	/* localhost as systemd's is_localhost() knows it: any case, RFC 6761 subdomains. */
	{"LocalHost", {"127.0.0.0/8", "::1/128"}},
	{"localhost.", {"127.0.0.0/8", "::1/128"}},
	{"localhost.localdomain", {"127.0.0.0/8", "::1/128"}},
	{"foo.localhost", {"127.0.0.0/8", "::1/128"}},
	{"foo.localhost.localdomain.", {"127.0.0.0/8", "::1/128"}},
	/* Addresses: without a length a host; with one, the host bits cleared. */
	{"127.0.0.2", {"127.0.0.2/32"}},
	{"10.1.2.3/8", {"10.0.0.0/8"}},
	{"192.168.7.255/23", {"192.168.6.0/23"}},
	{"192.168.0.1/0", {"0.0.0.0/0"}},
	{"10.0.0.1/032", {"10.0.0.1/32"}},
	{"::1", {"::1/128"}},
	{"2001:db8::1/32", {"2001:db8::/32"}},
	{"fe80::1234/10", {"fe80::/10"}},
	{"::ffff:127.0.0.1", {"::ffff:127.0.0.1/128"}},
	/* Refused. The names are case-sensitive but localhost; nothing a resolver would look up. */
	{"ANY", {NULL}},
	{"Multicast", {NULL}},
	{"localhost/8", {NULL}},
	{"example.com", {NULL}},
	{"", {NULL}},
	{"/8", {NULL}},
	{"10.0.0.0/", {NULL}},
	{"10.0.0.0/33", {NULL}},
	{"::/129", {NULL}},
	{"10.0.0.0/-1", {NULL}},
	{"10.0.0.0/+8", {NULL}},
	{"10.0.0.0/0x8", {NULL}},
	{"10.0.0.0/ 8", {NULL}},
	{"10.0.0.0/8/8", {NULL}},
	{"10.0.0", {NULL}},
	{"256.0.0.1", {NULL}},
	{"1.2.3.4.5", {NULL}},
	{"fe80::1%lo", {NULL}},
	{"[::1]", {NULL}},
	{"::1::2", {NULL}},
};

static void test_prefixes(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		struct net_prefix got[2];
		size_t n = 99, want_n = !!prefixes[i].want[0] + !!prefixes[i].want[1];
		char *error = NULL;
		int k = net_prefix_parse(prefixes[i].word, got, &n, &error);

		if (want_n == 0) {
			if (k != -EINVAL)
				fail_msg("\"%s\" taken", prefixes[i].word);
			assert_int_equal(n, 99);
			assert_non_null(error);
			free(error);
			continue;
		}
		if (k != 0)
			fail_msg("\"%s\" refused: %s", prefixes[i].word, error);
		assert_int_equal(n, want_n);
		for (size_t j = 0; j < n; j++)
			assert_string_equal(prefix_str(&got[j]), prefixes[i].want[j]);
	}
}

static const struct {
	const char *value;
	int family, protocol, port_min, port_max; /* family -1: refused */
} bind_rules[] = {
	/* The documentation's examples. */
	{"ipv6:10000-65535", AF_INET6, 0, 10000, 65535},
	{"any", AF_UNSPEC, 0, 0, 65535},
	{"1234", AF_UNSPEC, 0, 1234, 1234},
	{"ipv6", AF_INET6, 0, 0, 65535},
	{"tcp", AF_UNSPEC, IPPROTO_TCP, 0, 65535},
	{"ipv6:tcp", AF_INET6, IPPROTO_TCP, 0, 65535},
	{"ipv4:udp:10000-65535", AF_INET, IPPROTO_UDP, 10000, 65535},
	/* Each part may go, in order; "any" for the ports. */
	{"ipv4", AF_INET, 0, 0, 65535},
	{"udp", AF_UNSPEC, IPPROTO_UDP, 0, 65535},
	{"ipv4:any", AF_INET, 0, 0, 65535},
	{"tcp:any", AF_UNSPEC, IPPROTO_TCP, 0, 65535},
	{"ipv6:udp:any", AF_INET6, IPPROTO_UDP, 0, 65535},
	{"ipv4:6666", AF_INET, 0, 6666, 6666},
	{"udp:6666-6667", AF_UNSPEC, IPPROTO_UDP, 6666, 6667},
	{"1", AF_UNSPEC, 0, 1, 1},
	{"65535", AF_UNSPEC, 0, 65535, 65535},
	{"1-65535", AF_UNSPEC, 0, 1, 65535},
	{"80-80", AF_UNSPEC, 0, 80, 80},
	/* Refused: port 0 and out of range, reversed ranges, parts out of order or twice, empty
	 * parts, anything after the ports, other protocols and spellings. */
	{"", -1},
	{"0", -1},
	{"0-10", -1},
	{"65536", -1},
	{"100-99", -1},
	{"-80", -1},
	{"80-", -1},
	{"1-2-3", -1},
	{"ipv4:", -1},
	{":80", -1},
	{":", -1},
	{"ipv4::80", -1},
	{"tcp:ipv4", -1},
	{"80:tcp", -1},
	{"any:tcp", -1},
	{"ipv4:ipv6", -1},
	{"tcp:udp", -1},
	{"ipv4:tcp:80:", -1},
	{"ipv4:tcp:80:90", -1},
	{"ipv5", -1},
	{"IPV4", -1},
	{"TCP", -1},
	{"sctp", -1},
	{"tcp6", -1},
	{"ANY", -1},
	{" 80", -1},
	{"80 ", -1},
	{"80 443", -1},
	{"0x50", -1},
	{"+80", -1},
};

static void test_bind_rules(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(bind_rules); i++) {
		struct net_bind_rule r = {.pad = 0x5a};
		char *error = NULL;
		int k = net_bind_rule_parse(bind_rules[i].value, &r, &error);

		if (bind_rules[i].family < 0) {
			if (k != -EINVAL)
				fail_msg("\"%s\" taken", bind_rules[i].value);
			assert_int_equal(r.pad, 0x5a);
			assert_non_null(error);
			free(error);
			continue;
		}
		if (k != 0)
			fail_msg("\"%s\" refused: %s", bind_rules[i].value, error);
		assert_int_equal(r.used, 1);
		assert_int_equal(r.family, bind_rules[i].family);
		assert_int_equal(r.protocol, bind_rules[i].protocol);
		assert_int_equal(r.pad, 0);
		assert_int_equal(r.port_min, bind_rules[i].port_min);
		assert_int_equal(r.port_max, bind_rules[i].port_max);
	}
}

static void test_ifnames(void **state)
{
	char longest[NET_IFNAME_MAX], too_long[NET_IFNAME_MAX + 1];
	static const char *const valid[] = {"lo", "eth0", "veth-a.b_c", "wlp0s20f3", "x1", "a"};
	static const char *const invalid[] = {"",    ".",      "..",	      "1",
					      "007", "eth0:1", "a/b",	      "eth%d",
					      "a b", "a\tb",   "\xc3\xa9th0", "a\x7f"};

	for (size_t i = 0; i < ARRAY_SIZE(valid); i++)
		assert_true(net_ifname_is_valid(valid[i]));
	for (size_t i = 0; i < ARRAY_SIZE(invalid); i++)
		if (net_ifname_is_valid(invalid[i]))
			fail_msg("\"%s\" taken", invalid[i]);
	/* Alternative names are longer than IFNAMSIZ. */
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_true(net_ifname_is_valid(longest));
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_false(net_ifname_is_valid(too_long));
}

/* Apply the assignments in turn; each must succeed. */
static void assign_all(struct net_settings *s, const char *const *assignments)
{
	for (; *assignments; assignments++) {
		char *error = NULL;

		if (net_settings_assign(s, *assignments, &error) != 0)
			fail_msg("\"%s\" refused: %s", *assignments, error);
	}
}

static void expect_ifaces(const char *const *assignments, bool allow_list, const char *want)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	char got[256] = "";

	assign_all(&s, assignments);
	for (size_t i = 0; i < s.n_ifaces; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
			 s.ifaces[i]);
	assert_string_equal(got, want);
	if (s.n_ifaces > 0)
		assert_int_equal(s.ifaces_allow_list, allow_list);
	assert_int_equal(net_settings_want_ifaces(&s), s.n_ifaces > 0);
}

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_ifaces(void **state)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	char *error = NULL;

	/* The documentation's examples: merged lists, '~' for a deny list. */
	expect_ifaces(A("RestrictNetworkInterfaces=eth1", "RestrictNetworkInterfaces=eth2"), true,
		      "eth1 eth2");
	expect_ifaces(A("RestrictNetworkInterfaces=~eth1", "RestrictNetworkInterfaces=~eth2"),
		      false, "eth1 eth2");
	/* The first kind decides; the other kind removes names. */
	expect_ifaces(A("RestrictNetworkInterfaces=eth1 eth2", "RestrictNetworkInterfaces=~eth1"),
		      true, "eth2");
	expect_ifaces(A("RestrictNetworkInterfaces=~eth1 eth2", "RestrictNetworkInterfaces=eth2",
			"RestrictNetworkInterfaces=eth3"),
		      false, "eth1");
	/* An empty assignment resets, the kind too. */
	expect_ifaces(A("RestrictNetworkInterfaces=eth1",
			"RestrictNetworkInterfaces=", "RestrictNetworkInterfaces=~lo"),
		      false, "lo");
	expect_ifaces(A("RestrictNetworkInterfaces=~", "RestrictNetworkInterfaces=lo"), true, "lo");
	/* Duplicates once; quotes removed; spaces and tabs separate. */
	expect_ifaces(A("RestrictNetworkInterfaces=lo lo\t\"veth0\" 'a'b"), true, "lo veth0 ab");
	expect_ifaces(A("RestrictNetworkInterfaces=~ eth0"), false, "eth0");

	/* Refused, and nothing changes: one bad name refuses the assignment. */
	assign_all(&s, A("RestrictNetworkInterfaces=lo"));
	static const char *const bad[] = {"eth0 1", "eth0:1", "a/b",  "~.",
					  "\"eth0", "eth0\\", "eth%d"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (net_settings_set(&s, "RestrictNetworkInterfaces", bad[i], &error) != -EINVAL)
			fail_msg("\"%s\" taken", bad[i]);
		assert_int_equal(s.n_ifaces, 1);
		assert_string_equal(s.ifaces[0], "lo");
	}
	free(error);
}

static void test_ip_lists(void **state)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	char *error = NULL;

	/* The example: IPAddressDeny=any, IPAddressAllow=127.0.0.2 and an IPv6 host. */
	assign_all(&s, A("IPAddressDeny=any", "IPAddressAllow=127.0.0.2 ::1",
			 "IPAddressAllow=\tlocalhost  10.0.0.0/8 "));
	assert_int_equal(s.n_ip_deny, 2);
	assert_string_equal(prefix_str(&s.ip_deny[0]), "0.0.0.0/0");
	assert_string_equal(prefix_str(&s.ip_deny[1]), "::/0");
	assert_int_equal(s.n_ip_allow, 5);
	assert_string_equal(prefix_str(&s.ip_allow[0]), "127.0.0.2/32");
	assert_string_equal(prefix_str(&s.ip_allow[1]), "::1/128");
	assert_string_equal(prefix_str(&s.ip_allow[4]), "10.0.0.0/8");
	assert_true(net_settings_want_ip(&s));

	/* One bad word refuses the assignment, and the list stays as it was. */
	assert_int_equal(net_settings_assign(&s, "IPAddressAllow=10.0.0.1 bogus", &error), -EINVAL);
	assert_non_null(strstr(error, "bogus"));
	assert_int_equal(s.n_ip_allow, 5);
	/* Whitespace alone adds nothing; only the empty string resets. */
	assign_all(&s, A("IPAddressAllow= "));
	assert_int_equal(s.n_ip_allow, 5);
	assign_all(&s, A("IPAddressAllow="));
	assert_int_equal(s.n_ip_allow, 0);
	assert_null(s.ip_allow);
	assign_all(&s, A("IPAddressDeny="));
	assert_false(net_settings_want_ip(&s));
	free(error);
}

static void test_accounting_and_names(void **state)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	static const char *const yes[] = {"1", "yes", "y", "true", "t", "on", "YES", "On"};
	static const char *const no[] = {"0", "no", "n", "false", "f", "off", "", "OFF"};
	static const char *const bad[] = {"maybe", "2", " yes", "yes ", "enabled"};
	static const char *const refused[] = {"noequals",	    "=any",
					      "IPAddressdeny=any",  "ipaddressdeny=any",
					      "IPAddressDeny =any", "PrivateNetwork=yes",
					      "SocketBindAllow"};
	char *error = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		s.ip_accounting = false;
		assert_int_equal(net_settings_set(&s, "IPAccounting", yes[i], NULL), 0);
		assert_true(s.ip_accounting);
		assert_true(net_settings_want_ip(&s));
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++) {
		s.ip_accounting = true;
		assert_int_equal(net_settings_set(&s, "IPAccounting", no[i], NULL), 0);
		assert_false(s.ip_accounting);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		s.ip_accounting = true;
		assert_int_equal(net_settings_set(&s, "IPAccounting", bad[i], &error), -EINVAL);
		assert_true(s.ip_accounting);
	}
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (net_settings_assign(&s, refused[i], &error) != -EINVAL)
			fail_msg("\"%s\" taken", refused[i]);
	free(error);
}

static void test_bind_lists(void **state)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	char *error = NULL, value[16];

	assign_all(&s, A("SocketBindAllow=ipv6:10000-65535", "SocketBindDeny=any",
			 "SocketBindAllow=tcp"));
	assert_int_equal(s.n_bind_allow, 2);
	assert_int_equal(s.n_bind_deny, 1);
	assert_true(net_settings_want_bind(&s));
	assert_int_equal(net_settings_assign(&s, "SocketBindAllow=80 443", &error), -EINVAL);
	assert_int_equal(s.n_bind_allow, 2);
	assign_all(&s, A("SocketBindAllow=", "SocketBindDeny="));
	assert_false(net_settings_want_bind(&s));

	/* systemd's bound: 128 rules a list. */
	for (int i = 1; i <= NET_BIND_RULES_MAX; i++) {
		snprintf(value, sizeof(value), "%d", i);
		assert_int_equal(net_settings_set(&s, "SocketBindDeny", value, NULL), 0);
	}
	assert_int_equal(net_settings_set(&s, "SocketBindDeny", "200", &error), -E2BIG);
	assert_int_equal(s.n_bind_deny, NET_BIND_RULES_MAX);
	free(error);
}

static void test_bounds(void **state)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	char buf[32];
	char *error = NULL;

	for (int i = 0; i < NET_IP_PREFIXES_MAX; i++) {
		snprintf(buf, sizeof(buf), "10.0.%d.%d", i / 256, i % 256);
		assert_int_equal(net_settings_set(&s, "IPAddressAllow", buf, NULL), 0);
	}
	/* The IPv4 trie is full; "any" adds to both. */
	assert_int_equal(net_settings_set(&s, "IPAddressAllow", "10.9.9.9", &error), -E2BIG);
	assert_int_equal(net_settings_set(&s, "IPAddressAllow", "any", &error), -E2BIG);
	assert_int_equal(net_settings_set(&s, "IPAddressAllow", "::2", NULL), 0);
	assert_int_equal(s.n_ip_allow, NET_IP_PREFIXES_MAX + 1);

	for (int i = 0; i < NET_IFACES_MAX; i++) {
		snprintf(buf, sizeof(buf), "~if%d", i);
		assert_int_equal(net_settings_set(&s, "RestrictNetworkInterfaces", buf, NULL), 0);
	}
	assert_int_equal(net_settings_set(&s, "RestrictNetworkInterfaces", "~one_more", &error),
			 -E2BIG);
	/* Removing is always possible. */
	assert_int_equal(net_settings_set(&s, "RestrictNetworkInterfaces", "if0", NULL), 0);
	assert_int_equal(s.n_ifaces, NET_IFACES_MAX - 1);
	free(error);
}

static void test_keys(void **state)
{
	struct net_prefix p[2];
	struct net_ipv4_key k4;
	struct net_ipv6_key k6;
	size_t n;

	assert_int_equal(net_prefix_parse("192.168.1.0/24", p, &n, NULL), 0);
	net_prefix_to_ipv4_key(&p[0], &k4);
	assert_int_equal(k4.prefixlen, 24);
	assert_memory_equal(k4.addr, ((uint8_t[]){192, 168, 1, 0}), 4);
	assert_int_equal(net_prefix_parse("localhost", p, &n, NULL), 0);
	net_prefix_to_ipv6_key(&p[1], &k6);
	assert_int_equal(k6.prefixlen, 128);
	assert_int_equal(k6.addr[15], 1);
	assert_int_equal(sizeof(struct net_ipv4_key), 8);
	assert_int_equal(sizeof(struct net_ipv6_key), 20);
	assert_int_equal(sizeof(struct net_bind_rule), 8);
	assert_int_equal(sizeof(struct net_ip_acct), 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefixes),   cmocka_unit_test(test_bind_rules),
		cmocka_unit_test(test_ifnames),	   cmocka_unit_test(test_ifaces),
		cmocka_unit_test(test_ip_lists),   cmocka_unit_test(test_accounting_and_names),
		cmocka_unit_test(test_bind_lists), cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
