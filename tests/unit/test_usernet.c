// SPDX-License-Identifier: MIT
/*
 * Unit tests for usernet/: the network settings systemd's D-Bus API gives back (a(iayu)
 * prefixes, a(iiqq) bind rules, interface names), spelled as a unit file spells them, and
 * values systemd would never have stored refused rather than spelled wrong (assign.c); a
 * unit's settings combined with its parent slices' as systemd combines them (inherit.c), and
 * a union past the maps refused (apply.c); the watcher's socket closing silent connections
 * (request.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <poll.h>
#include <stdio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"
#include "objects/net/net_maps.h"
#include "objects/net/net_settings.h"
#include "usernet/apply.h"
#include "usernet/assign.h"
#include "usernet/inherit.h"
#include "usernet/request.h"

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

static void push_all(struct usernet_assignments *a, const char *const *v, const char *from)
{
	for (; *v; v++)
		assert_int_equal(usernet_assignments_push(a, *v, from), 0);
}

static void expect_list(const struct usernet_assignments *a, const char *const *v,
			const char *const *from)
{
	size_t i = 0;

	for (; v[i]; i++) {
		assert_true(i < a->n);
		assert_string_equal(a->v[i], v[i]);
		if (from[i])
			assert_string_equal(a->from[i], from[i]);
		else
			assert_null(a->from[i]);
	}
	assert_int_equal(a->n, i);
	assert_null(a->v[i]);
}

/* A slice keeps all but its IP lists, which are for its units (bpf_firewall_compile()). */
static void test_slice_split(void **state)
{
	static const char *const read[] = {"IPAccounting=yes",
					   "IPAddressDeny=0.0.0.0/0 ::/0",
					   "RestrictNetworkInterfaces=lo",
					   "IPAddressAllow=10.0.0.0/8",
					   "SocketBindDeny=any",
					   NULL};
	static const char *const kept[] = {"IPAccounting=yes", "RestrictNetworkInterfaces=lo",
					   "SocketBindDeny=any", NULL};
	static const char *const passed[] = {"IPAddressDeny=0.0.0.0/0 ::/0",
					     "IPAddressAllow=10.0.0.0/8", NULL};
	static const char *const none[5];
	struct usernet_assignments a = {}, p = {};

	push_all(&a, read, NULL);
	assert_int_equal(usernet_slice_split(&a, &p), 0);
	expect_list(&a, kept, none);
	expect_list(&p, passed, none);
	usernet_assignments_done(&a);
	usernet_assignments_done(&p);
	/* Only IP lists: nothing left for the slice itself. */
	push_all(&a, passed, NULL);
	assert_int_equal(usernet_slice_split(&a, &p), 0);
	assert_int_equal(a.n, 0);
	assert_int_equal(p.n, 2);
	usernet_assignments_done(&a);
	usernet_assignments_done(&p);
}

/*
 * A unit's lists are the union of its own and every parent slice's; the slices' other
 * settings are theirs (the kernel runs them for the unit too), not added again. The union
 * parses as one set of lists: a slice's IPAddressDeny=any with the unit's own
 * IPAddressAllow= is what systemd.resource-control(5) recommends.
 */
static void test_inherit(void **state)
{
	static const char *const own[] = {"IPAddressAllow=127.0.0.2/32", "SocketBindDeny=tcp:22",
					  NULL};
	static const char *const parent[] = {"IPAccounting=yes", "IPAddressDeny=0.0.0.0/0 ::/0",
					     "RestrictNetworkInterfaces=lo", NULL};
	static const char *const root[] = {"IPAddressDeny=10.0.0.0/8", "IPAddressAllow=::1/128",
					   NULL};
	static const char *const want[] = {
		"IPAddressAllow=127.0.0.2/32",	"SocketBindDeny=tcp:22",
		"IPAddressDeny=0.0.0.0/0 ::/0", "IPAddressDeny=10.0.0.0/8",
		"IPAddressAllow=::1/128",	NULL};
	static const char *const want_from[] = {NULL, NULL, "sandbox.slice", "-.slice", "-.slice"};
	struct usernet_assignments u = {}, p = {}, r = {};
	_cleanup_(net_settings_done) struct net_settings s = {};
	_cleanup_free_ char *error = NULL;

	push_all(&u, own, NULL);
	push_all(&p, parent, NULL);
	push_all(&r, root, NULL);
	assert_int_equal(usernet_inherit(&u, &p, "sandbox.slice"), 0);
	assert_int_equal(usernet_inherit(&u, &r, "-.slice"), 0);
	expect_list(&u, want, want_from);
	for (size_t i = 0; i < u.n; i++)
		assert_int_equal(net_settings_assign(&s, u.v[i], &error), 0);
	assert_int_equal(s.n_ip_allow, 2);
	assert_int_equal(s.n_ip_deny, 3);
	assert_false(s.ip_accounting);
	assert_int_equal(s.n_ifaces, 0);
	usernet_assignments_done(&u);
	usernet_assignments_done(&p);
	usernet_assignments_done(&r);
}

/* n IPv4 /32 prefixes from 10.0.0.0 as one assignment's value. */
static char *prefixes(unsigned n, unsigned first)
{
	char *buf = NULL;

	for (unsigned i = first; i < first + n; i++) {
		uint8_t a[4] = {10, 0, (uint8_t)(i >> 8), (uint8_t)i};

		assert_int_equal(usernet_append_prefix(&buf, AF_INET, a, 4, 32), 0);
	}
	return buf;
}

/* The union of a unit's and its slices' lists must fit the tries: refused if not. */
static void test_inherit_too_many(void **state)
{
	struct usernet_target t = {"x.service", "0123456789abcdef0123456789abcdef",
				   "/sys/fs/cgroup/nonexistent"};
	_cleanup_free_ char *mine = prefixes(NET_IP_PREFIXES_MAX - 10, 0),
			    *theirs = prefixes(10, 2000), *more = prefixes(1, 3000);
	struct usernet_assignments u = {}, p = {};

	/* No broker is asked: the parse comes first (else it would fail to connect). */
	assert_int_equal(setenv("BPFBROKER_SOCKET", "/nonexistent/bpfbroker.sock", 1), 0);
	assert_int_equal(usernet_assignments_add(&u, "IPAddressDeny", mine), 0);
	assert_int_equal(usernet_assignments_add(&p, "IPAddressDeny", theirs), 0);
	assert_int_equal(usernet_inherit(&u, &p, "sandbox.slice"), 0);
	/* Exactly full: parsed, then it goes on to the (absent) broker. */
	assert_int_not_equal(usernet_apply(&t, &u), -E2BIG);
	usernet_assignments_done(&p);
	assert_int_equal(usernet_assignments_add(&p, "IPAddressDeny", more), 0);
	assert_int_equal(usernet_inherit(&u, &p, "-.slice"), 0);
	assert_int_equal(usernet_apply(&t, &u), -E2BIG);
	usernet_assignments_done(&u);
	usernet_assignments_done(&p);
}

static int answer_ok(pid_t pid, const char *invocation_id, char **ret_message, void *userdata)
{
	*ret_message = strdup("ok");
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Run e until fd is readable (an answer, or the end); the time it took. */
static uint64_t run_until_readable(sd_event *e, int fd, uint64_t limit_usec)
{
	uint64_t start = now_usec();

	while (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 0) == 0) {
		assert_true(now_usec() - start < limit_usec);
		assert_true(sd_event_run(e, 10000) >= 0);
	}
	return now_usec() - start;
}

/*
 * A connection that sends nothing is closed after the deadline; meanwhile another one is
 * answered at once; with every slot taken by silent ones, the next request waits for the
 * deadline, no longer.
 */
/*
 * What the request tests hold, released by request_teardown() even when an assert fails
 * half-way: the temp dir and its socket, the event loop, open fds, a lowered fd limit.
 */
struct request_fixture {
	char dir[32];
	char *path;
	sd_event *e;
	sd_event_source *listener;
	int fds[4096 + USERNET_REQUEST_CONNECTIONS_MAX + 1];
	int n_fds;
	struct rlimit old;
	bool limited;
};

static struct request_fixture rf;

static int request_setup(void **state)
{
	rf = (struct request_fixture){.dir = "/tmp/test-usernet-XXXXXX"};
	if (!mkdtemp(rf.dir) || setenv("XDG_RUNTIME_DIR", rf.dir, 1) < 0 ||
	    usernet_request_socket_path(&rf.path) < 0 || sd_event_new(&rf.e) < 0)
		return -1;
	*state = &rf;
	return 0;
}

static int request_teardown(void **state)
{
	(void)state;
	if (rf.limited)
		(void)setrlimit(RLIMIT_NOFILE, &rf.old);
	while (rf.n_fds > 0)
		safe_close(rf.fds[--rf.n_fds]);
	sd_event_source_unref(rf.listener);
	sd_event_unref(rf.e);
	if (rf.path)
		(void)unlink(rf.path);
	free(rf.path);
	(void)rmdir(rf.dir);
	rf = (struct request_fixture){};
	return 0;
}

/* fd, kept in rf to be closed by the teardown. */
static int request_keep(int fd)
{
	assert_true(fd >= 0);
	assert_true(rf.n_fds < (int)ARRAY_SIZE(rf.fds));
	rf.fds[rf.n_fds++] = fd;
	return fd;
}

static void test_request_deadline(void **state)
{
	/* Long enough that the connects below take well under half of it, under sanitizers too. */
	const uint64_t deadline = 2000000;
	char buf[64];
	int silent[USERNET_REQUEST_CONNECTIONS_MAX], asker;
	uint64_t took;

	assert_int_equal(usernet_request_listen(rf.e, answer_ok, NULL, deadline, &rf.listener), 0);

	silent[0] = request_keep(connect_to(rf.path));
	asker = request_keep(connect_to(rf.path));
	assert_true(send(asker, "apply x", 7, 0) == 7);
	took = run_until_readable(rf.e, asker, 5 * deadline);
	assert_true(took < deadline);
	assert_int_equal(recv(asker, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "0 ok", 4);
	shutdown(asker, SHUT_RDWR);
	/* The silent one: still open, then closed (end of file) at its deadline. */
	assert_int_equal(recv(silent[0], buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	took = run_until_readable(rf.e, silent[0], 10 * deadline);
	assert_int_equal(recv(silent[0], buf, sizeof(buf), 0), 0);
	shutdown(silent[0], SHUT_RDWR);

	/* Every slot silent: the next one is answered when they are closed. */
	for (size_t i = 0; i < ARRAY_SIZE(silent); i++) {
		silent[i] = request_keep(connect_to(rf.path));
		/* Accepted one by one, so that each has its own deadline running. */
		assert_true(sd_event_run(rf.e, 0) >= 0);
	}
	asker = request_keep(connect_to(rf.path));
	assert_true(send(asker, "apply x", 7, 0) == 7);
	took = run_until_readable(rf.e, asker, 10 * deadline);
	assert_true(took > deadline / 2);
	assert_int_equal(recv(asker, buf, sizeof(buf), 0), 4);
}

/*
 * Out of fds, the listener (level-triggered) must not spin on a connection it cannot accept:
 * it rests, and takes the connection once fds are free again.
 */
static void test_request_out_of_fds(void **state)
{
	char buf[64];
	int asker, dispatched = 0, held;

	assert_int_equal(usernet_request_listen(rf.e, answer_ok, NULL, 5000000, &rf.listener), 0);
	asker = request_keep(connect_to(rf.path));
	assert_true(send(asker, "apply x", 7, 0) == 7);
	/* Every fd taken (under a low soft limit, so that this is quick). */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rf.old), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &(struct rlimit){256, rf.old.rlim_max}), 0);
	rf.limited = true;
	held = rf.n_fds;
	while (rf.n_fds < (int)ARRAY_SIZE(rf.fds) && (rf.fds[rf.n_fds] = dup(asker)) >= 0)
		rf.n_fds++;
	assert_int_equal(errno, EMFILE);
	for (int i = 0; i < 20; i++) {
		int r = sd_event_run(rf.e, 0);

		assert_true(r >= 0);
		dispatched += r;
	}
	/* The first try at accept, then rest (a spin dispatches every time). */
	assert_true(dispatched <= 2);
	while (rf.n_fds > held)
		close(rf.fds[--rf.n_fds]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rf.old), 0);
	rf.limited = false;
	run_until_readable(rf.e, asker, 5000000);
	assert_int_equal(recv(asker, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "0 ok", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefixes),
		cmocka_unit_test(test_prefixes_refused),
		cmocka_unit_test(test_bind_rules),
		cmocka_unit_test(test_assignments),
		cmocka_unit_test(test_slice_split),
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_inherit_too_many),
		cmocka_unit_test_setup_teardown(test_request_deadline, request_setup,
						request_teardown),
		cmocka_unit_test_setup_teardown(test_request_out_of_fds, request_setup,
						request_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
