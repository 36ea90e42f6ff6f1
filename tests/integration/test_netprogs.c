// SPDX-License-Identifier: MIT
/*
 * The network objects (objects/net) with real traffic, loaded directly with libbpf as root
 * and attached to a test cgroup, in a network namespace the test makes: loopback, and a veth
 * pair whose far end is in a second namespace. IPAddressDeny=any + IPAddressAllow= on both
 * directions, IPv4 and IPv6; the accounting's exact counts; RestrictNetworkInterfaces= both
 * ways; SocketBindAllow=/SocketBindDeny= with EPERM. Sockets the test process made before
 * forking keep its (root) cgroup, so one child in the test cgroup talks to peers outside it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "common/macro.h"
#include "objects/net/net_apply.h"
#include "tests/integration/harness.h"
#include "tests/integration/udp.h"

#define PORT 47001

static char cgroup[PATH_MAX];
static pid_t peer = -1; /* holds the second network namespace */
static int peer_ns = -EBADF, own_ns = -EBADF;

/* A loaded object, its programs attached to the test cgroup until net_unload(). */
struct loaded {
	struct bpf_object *obj;
	struct bpf_link *links[2];
};

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

static void net_unload(struct loaded *l)
{
	for (size_t i = 0; i < 2; i++)
		bpf_link__destroy(l->links[i]);
	bpf_object__close(l->obj);
	*l = (struct loaded){};
}

/* Load the network object NAME (ip-firewall.bpf.o, ...), fill its maps from the assignments, attach
 * to the cgroup. */
static void net_load(const char *name, const char *const *assignments, struct loaded *ret)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	_cleanup_close_ int cg = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct bpf_program *prog;
	char path[PATH_MAX], *error = NULL;
	size_t n = 0, unknown = 0;
	int k;

	for (; *assignments; assignments++)
		if (net_settings_assign(&s, *assignments, &error) < 0)
			fail_msg("%s: %s", *assignments, error);
	snprintf(path, sizeof(path), "%s/%s.bpf.o", getenv("BPFBROKER_NET_OBJECTS_DIR"), name);
	ret->obj = bpf_object__open_file(path, NULL);
	assert_non_null(ret->obj);
	assert_int_equal(bpf_object__load(ret->obj), 0);
	if (strcmp(name, "ip-firewall") == 0) {
		struct net_ip_map_fds fds = {
			.ipv4_allow = map_fd(ret->obj, NET_MAP_IPV4_ALLOW),
			.ipv4_deny = map_fd(ret->obj, NET_MAP_IPV4_DENY),
			.ipv6_allow = map_fd(ret->obj, NET_MAP_IPV6_ALLOW),
			.ipv6_deny = map_fd(ret->obj, NET_MAP_IPV6_DENY),
		};
		k = net_ip_fill(&s, &fds, &error);
	} else if (strcmp(name, "restrict-ifaces") == 0) {
		k = net_ifaces_fill(&s, map_fd(ret->obj, NET_MAP_IFACES),
				    map_fd(ret->obj, NET_MAP_IFACES_MODE), &unknown, &error);
		assert_int_equal(unknown, 0);
	} else {
		k = net_bind_fill(&s, map_fd(ret->obj, NET_MAP_BIND_ALLOW),
				  map_fd(ret->obj, NET_MAP_BIND_DENY), &error);
	}
	if (k < 0)
		fail_msg("filling %s: %s", name, error);
	assert_true(cg >= 0);
	bpf_object__for_each_program(prog, ret->obj)
	{
		assert_true(n < 2);
		ret->links[n] = bpf_program__attach_cgroup(prog, cg);
		assert_non_null(ret->links[n]);
		n++;
	}
	assert_int_equal(n, 2);
}

/* A UDP socket of the test process's namespace and cgroup bound to addr:port. */
static int udp_bound(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd;

	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, addr, &a->sin6_addr), 1);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, addr, &a->sin_addr), 1);
		len = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0) {
		fprintf(stderr, "udp socket on %s:%u: %m\n", addr, port);
		return -1;
	}
	return fd;
}

/* A UDP socket made in the peer namespace (it stays there), bound to addr:port. */
static int peer_udp(const char *addr, uint16_t port)
{
	int fd;

	assert_int_equal(setns(peer_ns, CLONE_NEWNET), 0);
	fd = udp_bound(addr, port);
	assert_int_equal(setns(own_ns, CLONE_NEWNET), 0);
	assert_true(fd >= 0);
	return fd;
}

/* Run argv (an "ip" command) in the namespace nsfd, or the test's own if nsfd < 0. */
static int run_ip(int nsfd, const char *const *argv)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0)
			_exit(126);
		execvp("ip", (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "ip %s %s %s: failed\n", argv[1], argv[2], argv[3]);
		return -1;
	}
	return 0;
}
#define IP(ns, ...) run_ip(ns, (const char *const[]){"ip", __VA_ARGS__, NULL})

/*
 * The namespaces: ours with lo and nv0 (10.77.0.1/24, fd77::1/64), the peer's with nv1
 * (10.77.0.2/24, fd77::2/64), held by a child that waits for SIGKILL.
 */
static int start(void)
{
	_cleanup_close_ int ready_r = -EBADF, ready_w = -EBADF;
	pid_t parent = getpid();
	int ready[2];
	char c, ns[64];

	if (harness_init() < 0 ||
	    harness_cgroup_make_own("bpfbroker-test-netprogs", NULL, 0, cgroup, sizeof(cgroup)) < 0)
		return -1;
	harness_mark_kernel_objects();
	if (unshare(CLONE_NEWNET) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	ready_r = ready[0];
	ready_w = ready[1];
	own_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	peer = fork();
	if (peer == 0) {
		/* Gone with the test, however it ends; it may have ended before the prctl. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    unshare(CLONE_NEWNET) < 0 || write(ready_w, "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ready_w = safe_close(ready_w);
	if (peer < 0 || read(ready_r, &c, 1) != 1)
		return -1;
	snprintf(ns, sizeof(ns), "/proc/%d/ns/net", peer);
	peer_ns = open(ns, O_RDONLY | O_CLOEXEC);
	snprintf(ns, sizeof(ns), "%d", peer);
	if (own_ns < 0 || peer_ns < 0 || IP(-1, "link", "set", "lo", "up") < 0 ||
	    IP(-1, "link", "add", "nv0", "type", "veth", "peer", "name", "nv1", "netns", ns) < 0 ||
	    IP(-1, "addr", "add", "10.77.0.1/24", "dev", "nv0") < 0 ||
	    IP(-1, "addr", "add", "fd77::1/64", "dev", "nv0", "nodad") < 0 ||
	    IP(-1, "link", "set", "nv0", "up") < 0 || IP(peer_ns, "link", "set", "lo", "up") < 0 ||
	    IP(peer_ns, "addr", "add", "10.77.0.2/24", "dev", "nv1") < 0 ||
	    IP(peer_ns, "addr", "add", "fd77::2/64", "dev", "nv1", "nodad") < 0 ||
	    IP(peer_ns, "link", "set", "nv1", "up") < 0)
		return -1;
	return 0;
}

/* The peer ended and reaped, our fds closed: twice is once. */
static void peer_end(void)
{
	if (peer > 0) {
		kill(peer, SIGKILL);
		waitpid(peer, NULL, 0);
	}
	peer = -1;
	peer_ns = safe_close(peer_ns);
	own_ns = safe_close(own_ns);
}

static int setup(void **state)
{
	if (start() == 0)
		return 0;
	peer_end();
	return harness_setup_failed();
}

static int teardown(void **state)
{
	peer_end();
	/* The harness's directory too (harness_stop()), and its cgroups. */
	return harness_finish();
}

/* The addresses of one family: allowed, denied, and the bound sockets outside the cgroup. */
struct family_case {
	const char *allowed, *denied;
	int out_allowed, out_denied; /* receivers and senders, bound to each address */
};

/* In the test cgroup: egress to the allowed address only, ingress from it only. */
static int child_ip(void *arg)
{
	const struct family_case *f = arg;
	_cleanup_close_ int c = udp_bound(f->allowed, PORT + 1);
	_cleanup_close_ int any = udp_bound(strchr(f->allowed, ':') ? "::" : "0.0.0.0", 0);

	CHECK(c >= 0 && any >= 0, "sockets in the cgroup");
	/* Egress: the destination address decides. */
	CHECK(send_to(any, f->allowed, PORT) == 0, "send to %s: %m", f->allowed);
	CHECK(send_to(any, f->denied, PORT) == -EPERM, "send to %s not refused", f->denied);
	CHECK(received(f->out_allowed, 200) == 1, "%s received", f->allowed);
	CHECK(received(f->out_denied, 200) == 0, "%s received a refused datagram", f->denied);
	/* Ingress: the source address decides; the denied first, so it had its chance. */
	CHECK(send_to(f->out_denied, f->allowed, PORT + 1) == 0, "send from %s", f->denied);
	CHECK(send_to(f->out_allowed, f->allowed, PORT + 1) == 0, "send from %s", f->allowed);
	CHECK(received(c, 300) == 1, "exactly the datagram from %s received", f->allowed);
	return 0;
}

static void ip_case(const char *allowed, const char *denied)
{
	char allow[64];
	struct loaded l = {};
	struct family_case f = {allowed, denied, udp_bound(allowed, PORT), udp_bound(denied, PORT)};

	snprintf(allow, sizeof(allow), "IPAddressAllow=%s", allowed);
	assert_true(f.out_allowed >= 0 && f.out_denied >= 0);
	net_load("ip-firewall", (const char *const[]){"IPAddressDeny=any", allow, NULL}, &l);
	assert_int_equal(harness_in_cgroup(cgroup, child_ip, &f), 0);
	/* Outside the cgroup nothing is filtered: the programs act on their cgroup only. */
	assert_int_equal(send_to(f.out_allowed, denied, PORT), 0);
	assert_int_equal(received(f.out_denied, 300), 1);
	net_unload(&l);
	close(f.out_allowed);
	close(f.out_denied);
}

static void test_ipv4(void **state)
{
	ip_case("127.0.0.2", "127.0.0.3");
}

static void test_ipv6(void **state)
{
	ip_case("::1", "fd77::1");
}

struct acct_case {
	const char *allowed;
	int out, out_sender;
	unsigned sent, received; /* by the child */
};

static int child_acct(void *arg)
{
	struct acct_case *a = arg;
	_cleanup_close_ int c = udp_bound(a->allowed, PORT + 1);

	CHECK(c >= 0, "socket in the cgroup");
	for (unsigned i = 0; i < a->sent; i++)
		CHECK(send_to(c, a->allowed, PORT) == 0, "send: %m");
	/* Refused packets are not counted. */
	CHECK(send_to(c, strchr(a->allowed, ':') ? "fd77::2" : "127.0.0.3", PORT) == -EPERM,
	      "send not refused");
	for (unsigned i = 0; i < a->received; i++)
		CHECK(send_to(a->out_sender, a->allowed, PORT + 1) == 0, "send: %m");
	CHECK(received(c, 300) == (int)a->received, "datagrams lost");
	return 0;
}

static void acct_case(const char *allowed, unsigned header)
{
	char allow[64];
	struct loaded l = {};
	struct net_ip_acct in, out;
	struct acct_case a = {allowed, udp_bound(allowed, PORT), udp_bound(allowed, 0), 7, 5};

	snprintf(allow, sizeof(allow), "IPAddressAllow=%s", allowed);
	assert_true(a.out >= 0 && a.out_sender >= 0);
	net_load("ip-firewall",
		 (const char *const[]){"IPAccounting=yes", "IPAddressDeny=any", allow, NULL}, &l);
	assert_int_equal(harness_in_cgroup(cgroup, child_acct, &a), 0);
	assert_int_equal(net_ip_acct_read(map_fd(l.obj, NET_MAP_IP_ACCT), &in, &out), 0);
	assert_int_equal(out.packets, a.sent);
	assert_int_equal(out.bytes, a.sent * (PAYLOAD + header));
	assert_int_equal(in.packets, a.received);
	assert_int_equal(in.bytes, a.received * (PAYLOAD + header));
	net_unload(&l);
	close(a.out);
	close(a.out_sender);
}

static void test_accounting(void **state)
{
	acct_case("127.0.0.2", 20 + 8); /* IPv4 and UDP headers */
	acct_case("::1", 40 + 8);
}

struct iface_case {
	bool lo_allowed;
	int lo_out, veth_out, veth_sender; /* 127.0.0.1, the peer's 10.77.0.2, the peer's sender */
};

static int child_ifaces(void *arg)
{
	const struct iface_case *c = arg;
	_cleanup_close_ int s = udp_bound("0.0.0.0", 0);
	_cleanup_close_ int r = udp_bound("10.77.0.1", PORT + 1);
	int lo = send_to(s, "127.0.0.1", PORT), veth = send_to(s, "10.77.0.2", PORT);

	CHECK(s >= 0 && r >= 0, "sockets in the cgroup");
	CHECK(lo == (c->lo_allowed ? 0 : -EPERM), "lo: %s", strerror(-lo));
	CHECK(veth == (c->lo_allowed ? -EPERM : 0), "nv0: %s", strerror(-veth));
	CHECK(received(c->lo_out, 200) == c->lo_allowed, "over lo");
	CHECK(received(c->veth_out, 1000) == !c->lo_allowed, "over nv0");
	/* Ingress over nv0, from the peer's namespace. */
	CHECK(send_to(c->veth_sender, "10.77.0.1", PORT + 1) == 0, "peer's send: %m");
	CHECK(received(r, 1000) == !c->lo_allowed, "from nv0");
	/* Ingress over lo: the same socket, from 127.0.0.1 outside the cgroup. */
	return 0;
}

static void iface_case(const char *setting, const char *setting2, bool lo_allowed)
{
	struct loaded l = {};
	struct iface_case c = {lo_allowed, udp_bound("127.0.0.1", PORT),
			       peer_udp("10.77.0.2", PORT), peer_udp("10.77.0.2", 0)};

	assert_true(c.lo_out >= 0);
	net_load("restrict-ifaces", (const char *const[]){setting, setting2, NULL}, &l);
	assert_int_equal(harness_in_cgroup(cgroup, child_ifaces, &c), 0);
	net_unload(&l);
	close(c.lo_out);
	close(c.veth_out);
	close(c.veth_sender);
}

static void test_ifaces(void **state)
{
	/* The deny list first: the veth's neighbours are then resolved for the allow list. */
	iface_case("RestrictNetworkInterfaces=~lo", NULL, false);
	iface_case("RestrictNetworkInterfaces=lo", NULL, true);
	/* Both kinds, systemd's way: the first decides, the second takes a name out again. */
	iface_case("RestrictNetworkInterfaces=nv0 lo", "RestrictNetworkInterfaces=~nv0", true);
	iface_case("RestrictNetworkInterfaces=~lo nv0", "RestrictNetworkInterfaces=nv0", false);
}

static int child_bind_allow(void *arg)
{
	/* SocketBindAllow=ipv6:udp:5000, SocketBindAllow=7000-7001, SocketBindDeny=any */
	CHECK(try_bind(AF_INET6, SOCK_DGRAM, 5000) == 0, "ipv6 udp 5000");
	CHECK(try_bind(AF_INET, SOCK_DGRAM, 5000) == -EPERM, "ipv4 udp 5000");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 5000) == -EPERM, "ipv6 tcp 5000");
	CHECK(try_bind(AF_INET, SOCK_STREAM, 7000) == 0, "ipv4 tcp 7000");
	CHECK(try_bind(AF_INET6, SOCK_DGRAM, 7001) == 0, "ipv6 udp 7001");
	CHECK(try_bind(AF_INET, SOCK_STREAM, 7002) == -EPERM, "ipv4 tcp 7002");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 6999) == -EPERM, "ipv6 tcp 6999");
	/* "any" covers port 0 too, as systemd's programs match it. */
	CHECK(try_bind(AF_INET, SOCK_DGRAM, 0) == -EPERM, "ipv4 udp 0");
	return 0;
}

static int child_bind_deny(void *arg)
{
	/* SocketBindDeny=ipv6:tcp:8080-8090 */
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 8085) == -EPERM, "ipv6 tcp 8085");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 8080) == -EPERM, "ipv6 tcp 8080");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 8090) == -EPERM, "ipv6 tcp 8090");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 8091) == 0, "ipv6 tcp 8091");
	CHECK(try_bind(AF_INET, SOCK_STREAM, 8085) == 0, "ipv4 tcp 8085");
	CHECK(try_bind(AF_INET6, SOCK_DGRAM, 8085) == 0, "ipv6 udp 8085");
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 0) == 0, "ipv6 tcp 0");
	return 0;
}

static int child_bind_free(void *arg)
{
	CHECK(try_bind(AF_INET6, SOCK_STREAM, 8085) == 0, "ipv6 tcp 8085");
	CHECK(try_bind(AF_INET, SOCK_DGRAM, 7002) == 0, "ipv4 udp 7002");
	return 0;
}

static void test_bind(void **state)
{
	struct loaded l = {};

	net_load("socket-bind",
		 (const char *const[]){"SocketBindAllow=ipv6:udp:5000", "SocketBindAllow=7000-7001",
				       "SocketBindDeny=any", NULL},
		 &l);
	assert_int_equal(harness_in_cgroup(cgroup, child_bind_allow, NULL), 0);
	/* Outside the cgroup, nothing is refused. */
	assert_int_equal(try_bind(AF_INET, SOCK_DGRAM, 5000), 0);
	net_unload(&l);
	net_load("socket-bind", (const char *const[]){"SocketBindDeny=ipv6:tcp:8080-8090", NULL},
		 &l);
	assert_int_equal(harness_in_cgroup(cgroup, child_bind_deny, NULL), 0);
	net_unload(&l);
	/* Detached: everything binds again. */
	assert_int_equal(harness_in_cgroup(cgroup, child_bind_free, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),	   cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_accounting), cmocka_unit_test(test_ifaces),
		cmocka_unit_test(test_bind),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
