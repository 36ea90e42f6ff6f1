// SPDX-License-Identifier: MIT
/*
 * Attacks on `bpfctl net` and net_enforce as real unprivileged uids in delegated cgroups,
 * with the example policy's grant and the shipped network objects: traffic that tries to
 * pass an IPv4 deny as an IPv4-mapped IPv6 address, connected and ping sockets, binds that
 * try to pass a bind deny (mapped, dual-stack, port 0, SO_REUSEPORT); a cgroup's own
 * processes faking, weakening or undoing their rules; another user aiming at them; bpfctl
 * killed or its command daemonizing. Each test asserts the safe outcome.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "objects/net/net_enforce.h"
#include "objects/net/net_seal.h"
#include "tests/integration/harness.h"
#include "tests/integration/harness_client.h"
#include "tests/integration/netinstall.h"
#include "tests/integration/udp.h"

#define UID_A 4611 /* granted by the example policy */
#define UID_B 4612 /* granted too: hostile to A */
#define UID_M 4613 /* granted too, and maps of maps (by test_frozen_through_map_of_maps) */
/* The races' own users: each round's loads and attaches count against the user's
 * max_loads_per_minute, refused ones too, so neither may share A's budget. */
#define UID_R 4614 /* test_fds_before_protected */
#define UID_S 4615 /* test_swap_before_protected */
#define CG "bpfbroker-test-netattacks" /* the test's cgroups: CG-PID/... */
#define PORT 47201

static const struct user ua = {UID_A, UID_A}, ub = {UID_B, UID_B};
static const struct user ur = {UID_R, UID_R}, us = {UID_S, UID_S};
static char cg_parent[PATH_MAX], cg_a[PATH_MAX], cg_unit[PATH_MAX], cg_b[PATH_MAX];
static char cg_r[PATH_MAX], cg_s[PATH_MAX]; /* R's and S's units */

#define ctl harness_ctl
#define out harness_out

/* ---- applying from outside the cgroup, as net_enforce's callers do ---- */

struct apply {
	const char *cg;
	const char *const *settings; /* "Name=value", up to NULL */
	bool remove;
};

/* As the caller, outside a.cg: 0, or the errno net_enforce_apply()/remove() failed with. */
static int apply_fn(void *arg)
{
	const struct apply *a = arg;
	_cleanup_(net_settings_done) struct net_settings s = {};
	char tag[NET_ENFORCE_TAG_MAX + 1], *error = NULL;
	struct bpfbroker *b = NULL;
	int k;

	CHECK(net_enforce_cgroup_tag(a->cg, tag) == 0, "tag");
	for (const char *const *p = a->settings; p && *p; p++) {
		char name[64];
		const char *eq = strchr(*p, '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - *p), *p);
		CHECK(net_settings_set(&s, name, eq + 1, &error) == 0, "%s: %s", *p, error);
	}
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = a->remove ? net_enforce_remove(b, tag, &error)
		      : net_enforce_apply(b, tag, &s, a->cg, &error);
	if (k < 0)
		fprintf(stderr, "net_enforce: %s\n", error ?: strerror(-k));
	free(error);
	bpfbroker_close(b);
	return k < 0 ? -k : 0;
}

static int apply_as(const struct user *u, const char *cg, const char *const *settings)
{
	struct apply a = {cg, settings, false};

	return harness_as_user(u, apply_fn, &a);
}

static int remove_as(const struct user *u, const char *cg)
{
	struct apply a = {cg, NULL, true};

	return harness_as_user(u, apply_fn, &a);
}

/* harness_ctl(), with what bpfctl wrote to stderr (its error messages) in err as well. */
static int ctl_stderr(const struct user *u, char *err, size_t size, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int fd, saved, k;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/bpfctl-stderr", H.dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	va_start(ap, size);
	k = harness_bpfctl_va(u, out, sizeof(out), ap);
	va_end(ap);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, err, size - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	fprintf(stderr, "bpfctl said: %s", err);
	return k;
}

static void assert_nothing_left(const struct user *u)
{
	assert_int_equal(ctl(u, "-j", "list", NULL), 0);
	assert_null(strstr(out, "net-"));
}

/* ---- what a process in the cgroup tries ---- */

static int udp_socket(int family, bool v6only)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0), off = v6only;

	if (fd >= 0 && family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	return fd;
}

/* A TCP connect to addr:port within 500 ms: 0, or -errno (-ETIMEDOUT if nothing came). */
static int tcp_connect(int family, const char *addr, uint16_t port)
{
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	_cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int k, err = 0, off = 0;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -errno;
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		inet_pton(AF_INET6, addr, &a6.sin6_addr);
		k = connect(fd, (struct sockaddr *)&a6, sizeof(a6));
	} else {
		inet_pton(AF_INET, addr, &a4.sin_addr);
		k = connect(fd, (struct sockaddr *)&a4, sizeof(a4));
	}
	if (k == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	if (poll(&p, 1, 500) != 1)
		return -ETIMEDOUT;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	return -err;
}

/* An ICMP echo request over a ping socket: 0, -errno, or 1 if ping sockets are not ours. */
static int ping(const char *addr)
{
	struct icmphdr h = {.type = ICMP_ECHO};
	struct sockaddr_in a = {.sin_family = AF_INET};
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);

	if (fd < 0)
		return 1;
	inet_pton(AF_INET, addr, &a.sin_addr);
	return sendto(fd, &h, sizeof(h), 0, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno : 0;
}

/* Deny any, allow 127.0.0.2: nothing reaches 127.0.0.3, however it is addressed. */
static int traffic_fn(void *arg)
{
	_cleanup_close_ int v6 = udp_socket(AF_INET6, false), v4 = udp_socket(AF_INET, false);
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int k;

	(void)arg;
	CHECK(v6 >= 0 && v4 >= 0, "sockets");
	/* IPv4-mapped: the packet is IPv4 on the wire, and checked as IPv4 (as systemd does). */
	k = send_to(v6, "::ffff:127.0.0.3", PORT);
	CHECK(k == -EPERM, "udp to ::ffff:127.0.0.3: %d", k);
	k = send_to(v6, "::ffff:127.0.0.2", PORT);
	CHECK(k == 0, "udp to ::ffff:127.0.0.2: %d", k);
	k = tcp_connect(AF_INET6, "::ffff:127.0.0.3", PORT);
	CHECK(k != 0, "tcp to ::ffff:127.0.0.3 connected");
	k = tcp_connect(AF_INET, "127.0.0.3", PORT);
	CHECK(k != 0, "tcp to 127.0.0.3 connected");
	k = tcp_connect(AF_INET6, "::ffff:127.0.0.2", PORT);
	CHECK(k == 0, "tcp to ::ffff:127.0.0.2: %d", k);
	/* Connected UDP: the connect sends nothing; the send is refused. */
	inet_pton(AF_INET, "127.0.0.3", &a4.sin_addr);
	CHECK(connect(v4, (struct sockaddr *)&a4, sizeof(a4)) == 0, "udp connect: %m");
	CHECK(send(v4, "x", 1, 0) < 0 && errno == EPERM, "connected udp send not refused");
	/* Ping sockets (the test's namespace lets every group have them). */
	k = ping("127.0.0.3");
	CHECK(k == -EPERM, "ping 127.0.0.3: %d", k);
	k = ping("127.0.0.2");
	CHECK(k == 0, "ping 127.0.0.2: %d", k);
	/* Packet sockets are not an unprivileged user's to open at all. */
	CHECK(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0) < 0, "a packet socket");
	CHECK(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP) < 0, "a raw socket");
	return 0;
}

static int bind_to(int family, const char *addr, uint16_t port, bool reuseport)
{
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	_cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int on = 1, off = 0, k;

	if (fd < 0)
		return -errno;
	if (reuseport)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		inet_pton(AF_INET6, addr, &a6.sin6_addr);
		k = bind(fd, (struct sockaddr *)&a6, sizeof(a6));
	} else {
		inet_pton(AF_INET, addr, &a4.sin_addr);
		k = bind(fd, (struct sockaddr *)&a4, sizeof(a4));
	}
	return k < 0 ? -errno : 0;
}

/* SocketBindDeny=tcp:8085 (no family): no way around it. */
static int bind_port_fn(void *arg)
{
	(void)arg;
	CHECK(bind_to(AF_INET, "127.0.0.1", 8085, false) == -EPERM, "ipv4");
	CHECK(bind_to(AF_INET6, "::ffff:127.0.0.1", 8085, false) == -EPERM, "ipv4-mapped");
	CHECK(bind_to(AF_INET6, "::", 8085, false) == -EPERM, "dual-stack ::");
	CHECK(bind_to(AF_INET, "127.0.0.1", 8085, true) == -EPERM, "SO_REUSEPORT");
	CHECK(bind_to(AF_INET, "127.0.0.1", 8086, false) == 0, "another port");
	return 0;
}

/* SocketBindDeny=ipv4:tcp:8085: the socket's family is what counts, as in systemd. */
static int bind_ipv4_fn(void *arg)
{
	(void)arg;
	CHECK(bind_to(AF_INET, "127.0.0.1", 8085, false) == -EPERM, "ipv4");
	/* An IPv6 socket's bind, mapped or dual-stack, is not an ipv4: rule's (README). */
	CHECK(bind_to(AF_INET6, "::ffff:127.0.0.1", 8085, false) == 0, "ipv4-mapped");
	return 0;
}

/* SocketBindDeny=any: port 0 (let the kernel choose) is a bind too, as in systemd. */
static int bind_any_fn(void *arg)
{
	(void)arg;
	CHECK(bind_to(AF_INET, "127.0.0.1", 0, false) == -EPERM, "ipv4 port 0");
	CHECK(bind_to(AF_INET6, "::", 0, false) == -EPERM, "ipv6 port 0");
	CHECK(bind_to(AF_INET6, "::ffff:127.0.0.1", 0, false) == -EPERM, "mapped port 0");
	return 0;
}

/* ---- the tests ---- */

static int listener(const char *addr)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, addr, &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0)
		return -1;
	return fd;
}

static void test_mapped_and_other_sockets(void **state)
{
	static const char *const s[] = {"IPAddressDeny=any", "IPAddressAllow=127.0.0.2", NULL};
	int l2 = listener("127.0.0.2"), l3 = listener("127.0.0.3");

	assert_true(l2 >= 0 && l3 >= 0);
	assert_int_equal(apply_as(&ua, cg_unit, s), 0);
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, traffic_fn, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	close(l2);
	close(l3);
	assert_nothing_left(&ua);
}

static void test_bind_bypass(void **state)
{
	static const char *const port[] = {"SocketBindDeny=tcp:8085", NULL};
	static const char *const any[] = {"SocketBindDeny=any", NULL};
	static const char *const ipv4[] = {"SocketBindDeny=ipv4:tcp:8085", NULL};

	assert_int_equal(apply_as(&ua, cg_unit, port), 0);
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, bind_port_fn, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	assert_int_equal(apply_as(&ua, cg_unit, any), 0);
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, bind_any_fn, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	assert_int_equal(apply_as(&ua, cg_unit, ipv4), 0);
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, bind_ipv4_fn, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	assert_nothing_left(&ua);
}

/* A process in the cgroup makes "net-TAG-ip" before the rules are applied: by kind. */
struct fake {
	const char *how; /* "system", "mapsonly", "attached" */
};

static int fake_fn(void *arg)
{
	const struct fake *f = arg;
	char tag[NET_ENFORCE_TAG_MAX + 1], name[80], prog[128];
	int k;

	CHECK(net_enforce_cgroup_tag(cg_unit, tag) == 0, "tag");
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	if (strcmp(f->how, "mapsonly") == 0) {
		k = ctl(&ua, "load", harness_object("mapsonly"), "--name", name, NULL);
		/* Refused is safe too; loaded, the apply from outside must not take it. */
		return k == 0 ? 0 : 3;
	}
	CHECK(ctl(&ua, "load", "--system", "ip-firewall", "--name", name, NULL) == 0, "load");
	if (strcmp(f->how, "attached") != 0)
		return 0;
	/* Attached pinned from inside: protect is refused here, so unprotected. */
	snprintf(prog, sizeof(prog), "%s/ip_egress", name);
	k = ctl(&ua, "attach", prog, "cgroup", cg_unit, "--pin", "--protect", NULL);
	CHECK(k != 0, "a protected attach from inside the cgroup");
	CHECK(ctl(&ua, "attach", prog, "cgroup", cg_unit, "--pin", NULL) == 0, "attach: %s", out);
	snprintf(prog, sizeof(prog), "%s/ip_ingress", name);
	CHECK(ctl(&ua, "attach", prog, "cgroup", cg_unit, "--pin", NULL) == 0, "attach: %s", out);
	return 0;
}

static void test_fake_applied(void **state)
{
	static const char *const s[] = {"IPAddressDeny=any", NULL};
	static const char *const hows[] = {"system", "attached", "mapsonly"};
	char tag[NET_ENFORCE_TAG_MAX + 1], name[80];

	assert_int_equal(net_enforce_cgroup_tag(cg_unit, tag), 0);
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	for (size_t i = 0; i < ARRAY_SIZE(hows); i++) {
		struct fake f = {hows[i]};
		int k = harness_in_cgroup(cg_unit, fake_fn, &f);

		fprintf(stderr, "fake %s: made %s\n", hows[i], k == 0 ? "it" : "nothing");
		assert_true(k == 0 || k == 3);
		/* The apply from outside must not take the fake for the rules. */
		if (k == 0)
			assert_int_equal(apply_as(&ua, cg_unit, s), EEXIST);
		assert_int_equal(ctl(&ua, "unload", name, NULL), k == 0 ? 0 : 3);
	}
	assert_nothing_left(&ua);
}

/* Inside, with rules applied: the same tag again with nothing in it changes nothing. */
static int weaken_fn(void *arg)
{
	static const char *const weaker[] = {"IPAddressAllow=any", NULL};
	struct apply a = {cg_unit, weaker, false};
	_cleanup_close_ int s = udp_socket(AF_INET, false);

	(void)arg;
	(void)apply_fn(&a); /* whatever it says */
	CHECK(send_to(s, "127.0.0.3", PORT) == -EPERM, "weakened from inside");
	a.remove = true;
	CHECK(apply_fn(&a) == EPERM, "removed from inside");
	CHECK(ctl(&ua, "net", "remove", "--cgroup", cg_unit, NULL) != 0, "bpfctl net remove");
	CHECK(send_to(s, "127.0.0.3", PORT) == -EPERM, "removed from inside");
	return 0;
}

static void test_weaken_from_inside(void **state)
{
	static const char *const s[] = {"IPAddressDeny=any", NULL};

	assert_int_equal(apply_as(&ua, cg_unit, s), 0);
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, weaken_fn, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	assert_nothing_left(&ua);
}

/*
 * A process in the cgroup races the apply from outside: it asks for the object's map fds
 * from the moment the object exists until it is protected (fds handed out before are not
 * taken back), then writes "allow any" (a /0 key) into ipv4_allow with what it got, before
 * and after the apply. The rules must hold, or the apply fail.
 */
static int racer_fn(void *arg)
{
	const char *done = arg;
	char tag[NET_ENFORCE_TAG_MAX + 1], name[80];
	uint8_t key[8] = {0}, one = 1;
	struct bpfbroker *b = NULL;
	_cleanup_close_ int allow = -EBADF, s = udp_socket(AF_INET, false);
	int wrote = 0;

	if (net_enforce_cgroup_tag(cg_r, tag) < 0 || bpfbroker_connect(H.socket, &b) < 0)
		return 2;
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	while (allow < 0 && access(done, F_OK) < 0) {
		struct bpfbroker_result *r = NULL;
		struct bpfbroker_error *e = NULL;
		const struct bpfbroker_map *m;

		if (bpfbroker_fds(b, name, &r, &e) < 0) {
			bpfbroker_error_free(e);
			continue;
		}
		m = bpfbroker_result_map(r, "ipv4_allow");
		if (m && m->fd_access == BPFBROKER_ACCESS_RW)
			allow = fcntl(m->fd, F_DUPFD_CLOEXEC, 3);
		bpfbroker_result_free(r);
		if (allow >= 0)
			wrote += bpf_map_update_elem(allow, key, &one, BPF_ANY) == 0;
	}
	while (access(done, F_OK) < 0)
		usleep(1000);
	if (allow >= 0)
		wrote += bpf_map_update_elem(allow, key, &one, BPF_ANY) == 0;
	bpfbroker_close(b);
	fprintf(stderr, "racer: %s a writable fd, %d write(s) done\n",
		allow >= 0 ? "got" : "did not get", wrote);
	/* 0: refused (the rules hold, or none were applied: the parent knows which). */
	return send_to(s, "127.0.0.3", PORT) == -EPERM ? 0 : 7;
}

static void test_fds_before_protected(void **state)
{
	static const char *const s[] = {"IPAddressDeny=any", NULL};
	char done[PATH_MAX];

	snprintf(done, sizeof(done), "%s/race-done", H.dir);
	for (int round = 0; round < 12; round++) {
		pid_t racer;
		int status, k;

		unlink(done);
		racer = fork();
		if (racer == 0)
			_exit(harness_in_cgroup_as(cg_r, &ur, racer_fn, done));
		assert_true(racer > 0);
		usleep(20000 + 3000 * round);
		k = apply_as(&ur, cg_r, s);
		assert_int_equal(harness_write_file(done, "1"), 0);
		assert_int_equal(waitpid(racer, &status, 0), racer);
		assert_true(WIFEXITED(status));
		fprintf(stderr, "round %d: apply %d, racer %d\n", round, k, WEXITSTATUS(status));
		/* Applied and holding; or refused as written by another (then nothing stays). */
		if (k == 0)
			assert_int_equal(WEXITSTATUS(status), 0);
		else
			assert_true(k == EEXIST || k == EBUSY);
		assert_int_equal(remove_as(&ur, cg_r), 0);
	}
	unlink(done);
	assert_nothing_left(&ur);
}

/*
 * A process in the cgroup (the user's uid) swaps the object between the apply's load and
 * its first protected attach: it unloads net-TAG-ip as soon as it exists and loads its own
 * ip-firewall (empty maps: nothing denied) under the name, again and again (up to
 * SWAPS_MAX loads a round: each counts against S's max_loads_per_minute, refused or not).
 * The apply must be refused, or attach its own programs: 127.0.0.3 unreachable from the
 * cgroup.
 */
#define SWAPS_MAX 6
static int swapper_fn(void *arg)
{
	const char *done = arg;
	char tag[NET_ENFORCE_TAG_MAX + 1], name[80];
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = name};
	struct bpfbroker *b = NULL;
	int swapped = 0, tries = 0;

	if (net_enforce_cgroup_tag(cg_s, tag) < 0 || bpfbroker_connect(H.socket, &b) < 0)
		return 2;
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	while (tries < SWAPS_MAX && access(done, F_OK) < 0) {
		struct bpfbroker_result *r = NULL;
		struct bpfbroker_error *e = NULL;

		if (bpfbroker_unload(b, name, &e) < 0) {
			bpfbroker_error_free(e);
			continue;
		}
		tries++;
		if (bpfbroker_load_system(b, "ip-firewall", &o, &r, &e) == 0)
			swapped++;
		bpfbroker_error_free(e);
		bpfbroker_result_free(r);
	}
	while (access(done, F_OK) < 0)
		usleep(1000);
	bpfbroker_close(b);
	fprintf(stderr, "swapper: %d object(s) of its own loaded as %s\n", swapped, name);
	return 0;
}

static int denied_fn(void *arg)
{
	_cleanup_close_ int s = udp_socket(AF_INET, false);

	(void)arg;
	return send_to(s, "127.0.0.3", PORT) == -EPERM ? 0 : 7;
}

static void test_swap_before_protected(void **state)
{
	static const char *const s[] = {"IPAddressDeny=any", NULL};
	char done[PATH_MAX];
	int applied = 0;

	snprintf(done, sizeof(done), "%s/swap-done", H.dir);
	/* Few rounds: loads and attaches count against S's max_loads_per_minute (120 in the
	 * example policy): 8 rounds of an apply's and up to SWAPS_MAX of the swapper's. */
	for (int round = 0; round < 8; round++) {
		pid_t racer;
		int status, k;

		unlink(done);
		racer = fork();
		if (racer == 0)
			_exit(harness_in_cgroup_as(cg_s, &us, swapper_fn, done));
		assert_true(racer > 0);
		usleep(10000 + 4000 * round);
		k = apply_as(&us, cg_s, s);
		assert_int_equal(harness_write_file(done, "1"), 0);
		assert_int_equal(waitpid(racer, &status, 0), racer);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		fprintf(stderr, "round %d: apply %d\n", round, k);
		/* Applied: its rules, from our programs; or refused (the name not ours). */
		if (k == 0) {
			applied++;
			assert_int_equal(harness_in_cgroup_as(cg_s, &us, denied_fn, NULL), 0);
		} else
			assert_true(k == EEXIST || k == ENOENT);
		assert_int_equal(remove_as(&us, cg_s), 0);
	}
	fprintf(stderr, "%d of 8 applies went through\n", applied);
	unlink(done);
	assert_nothing_left(&us);
}

/* The broker's check itself: an attach naming the program id of an object since replaced. */
static int replaced_fn(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "swap-ip"};
	struct bpfbroker_result *r = NULL, *theirs = NULL;
	struct bpfbroker_error *e = NULL;
	_cleanup_close_ int cg = open(cg_b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct bpfbroker_attach_opts a = {.sz = sizeof(a),
					  .object = "swap-ip",
					  .program = "ip_egress",
					  .target_type = "cgroup",
					  .cgroup_fd = cg,
					  .pin = true,
					  .protect = true};
	struct bpfbroker *b = NULL;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_load_system(b, "ip-firewall", &o, &r, &e) == 0, "load");
	a.program_id = bpfbroker_result_program(r, "ip_egress")->id;
	/* What a process of the cgroup may do before the first protected link. */
	CHECK(bpfbroker_unload(b, "swap-ip", &e) == 0, "unload");
	CHECK(bpfbroker_load_system(b, "ip-firewall", &o, &theirs, &e) == 0, "load again");
	k = bpfbroker_attach(b, &a, NULL, NULL, &e);
	CHECK(k == -EEXIST && e && strcmp(e->code, "exists") == 0, "attach of the other: %d %s", k,
	      e ? e->message : "");
	fprintf(stderr, "refused: %s\n", e->message);
	bpfbroker_error_free(e);
	e = NULL;
	/* Its own id: attached. */
	a.program_id = bpfbroker_result_program(theirs, "ip_egress")->id;
	CHECK(bpfbroker_attach(b, &a, NULL, NULL, &e) == 0, "attach of its own");
	CHECK(bpfbroker_unload(b, "swap-ip", &e) == 0, "unload");
	bpfbroker_result_free(r);
	bpfbroker_result_free(theirs);
	bpfbroker_close(b);
	return 0;
}

static void test_attach_replaced(void **state)
{
	/* B, on its own cgroup: A's quota is for the races above. */
	assert_int_equal(harness_as_user(&ub, replaced_fn, NULL), 0);
	assert_int_equal(ctl(&ub, "list", NULL), 0);
	assert_null(strstr(out, "swap-"));
}

/*
 * The seal itself: a trie, an array of rules, an interface list written by another holder
 * of their fds before the freeze are found (the race above is rarely won before it).
 */
static int seal_fn(void *arg)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "seal-ip"};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct net_ip_map_fds fds;
	struct net_bind_rule extra = {.used = 1, .port_min = 1, .port_max = 65535};
	uint8_t any[8] = {0}, one = 1;
	__u32 zero = 0, lo = 1;
	char *error = NULL;
	struct bpfbroker *b = NULL;
	int k;

	(void)arg;
	CHECK(net_settings_set(&s, "IPAddressDeny", "any", &error) == 0, "settings");
	CHECK(net_settings_set(&s, "SocketBindDeny", "tcp:22", &error) == 0, "settings");
	CHECK(net_settings_set(&s, "RestrictNetworkInterfaces", "~lo", &error) == 0, "settings");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_load_system(b, "ip-firewall", &o, &r, &e) == 0, "load");
	fds = (struct net_ip_map_fds){bpfbroker_result_map(r, NET_MAP_IPV4_ALLOW)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV4_DENY)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV6_ALLOW)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV6_DENY)->fd};
	CHECK(net_ip_fill(&s, &fds, &error) == 0, "fill");
	CHECK(bpf_map_update_elem(fds.ipv4_allow, any, &one, BPF_ANY) == 0, "the extra key");
	k = net_ip_seal(&s, &fds, &error);
	CHECK(k == -EEXIST, "ip seal: %d %s", k, error ?: "");
	free(TAKE_PTR(error));
	CHECK(bpf_map_update_elem(fds.ipv4_allow, any, &one, BPF_ANY) < 0 && errno == EPERM,
	      "written after the freeze");
	bpfbroker_result_free(r);
	o.name = "seal-bind";
	CHECK(bpfbroker_load_system(b, "socket-bind", &o, &r, &e) == 0, "load");
	CHECK(net_bind_fill(&s, bpfbroker_result_map(r, NET_MAP_BIND_ALLOW)->fd,
			    bpfbroker_result_map(r, NET_MAP_BIND_DENY)->fd, &error) == 0,
	      "fill");
	CHECK(bpf_map_update_elem(bpfbroker_result_map(r, NET_MAP_BIND_ALLOW)->fd, &zero, &extra,
				  BPF_ANY) == 0,
	      "the extra rule");
	k = net_bind_seal(&s, bpfbroker_result_map(r, NET_MAP_BIND_ALLOW)->fd,
			  bpfbroker_result_map(r, NET_MAP_BIND_DENY)->fd, &error);
	CHECK(k == -EEXIST, "bind seal: %d %s", k, error ?: "");
	free(TAKE_PTR(error));
	bpfbroker_result_free(r);
	o.name = "seal-ifaces";
	CHECK(bpfbroker_load_system(b, "restrict-ifaces", &o, &r, &e) == 0, "load");
	CHECK(net_ifaces_fill(&s, bpfbroker_result_map(r, NET_MAP_IFACES)->fd,
			      bpfbroker_result_map(r, NET_MAP_IFACES_MODE)->fd, NULL, &error) == 0,
	      "fill");
	/* A deny list made shorter: lo's entry taken out. */
	CHECK(bpf_map_delete_elem(bpfbroker_result_map(r, NET_MAP_IFACES)->fd, &lo) == 0, "delete");
	k = net_ifaces_seal(&s, bpfbroker_result_map(r, NET_MAP_IFACES)->fd,
			    bpfbroker_result_map(r, NET_MAP_IFACES_MODE)->fd, &error);
	CHECK(k == -EEXIST, "ifaces seal: %d %s", k, error ?: "");
	free(error);
	bpfbroker_result_free(r);
	for (size_t i = 0; i < 3; i++)
		(void)bpfbroker_unload(
			b, (const char *[]){"seal-ip", "seal-bind", "seal-ifaces"}[i], NULL);
	bpfbroker_close(b);
	return 0;
}

static void test_seal(void **state)
{
	assert_int_equal(harness_as_user(&ua, seal_fn, NULL), 0);
	assert_int_equal(ctl(&ua, "list", NULL), 0);
	assert_null(strstr(out, "seal-"));
}

/*
 * The read back is exact: an interface listed under two names (lo and an altname of it, in a
 * network namespace of the test's own) is one key, so one key more is not ours; a trie key
 * covered by a shorter one of ours, taken out, is found missing (a lookup in an LPM trie
 * would match the shorter one).
 */
static int seal_exact_fn(void *arg)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "seal-ifaces"};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct net_ip_map_fds fds;
	struct net_ipv4_key ten_one = {.prefixlen = 16, .addr = {10, 1}};
	__u32 other = 4242;
	__u8 listed = NET_IFACE_LISTED;
	char *error = NULL;
	struct bpfbroker *b = NULL;
	int k;

	(void)arg;
	CHECK(net_settings_set(&s, "RestrictNetworkInterfaces", "~lo bbseal-alt", &error) == 0,
	      "settings");
	CHECK(net_settings_set(&s, "IPAddressDeny", "10.0.0.0/8 10.1.0.0/16", &error) == 0,
	      "settings");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_load_system(b, "restrict-ifaces", &o, &r, &e) == 0, "load");
	CHECK(net_ifaces_fill(&s, bpfbroker_result_map(r, NET_MAP_IFACES)->fd,
			      bpfbroker_result_map(r, NET_MAP_IFACES_MODE)->fd, NULL, &error) == 0,
	      "fill");
	CHECK(bpf_map_update_elem(bpfbroker_result_map(r, NET_MAP_IFACES)->fd, &other, &listed,
				  BPF_ANY) == 0,
	      "the extra interface");
	k = net_ifaces_seal(&s, bpfbroker_result_map(r, NET_MAP_IFACES)->fd,
			    bpfbroker_result_map(r, NET_MAP_IFACES_MODE)->fd, &error);
	CHECK(k == -EEXIST, "ifaces seal: %d %s", k, error ?: "");
	free(TAKE_PTR(error));
	bpfbroker_result_free(r);
	o.name = "seal-ip";
	CHECK(bpfbroker_load_system(b, "ip-firewall", &o, &r, &e) == 0, "load");
	fds = (struct net_ip_map_fds){bpfbroker_result_map(r, NET_MAP_IPV4_ALLOW)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV4_DENY)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV6_ALLOW)->fd,
				      bpfbroker_result_map(r, NET_MAP_IPV6_DENY)->fd};
	CHECK(net_ip_fill(&s, &fds, &error) == 0, "fill");
	CHECK(bpf_map_delete_elem(fds.ipv4_deny, &ten_one) == 0, "delete");
	k = net_ip_seal(&s, &fds, &error);
	CHECK(k == -EEXIST, "ip seal: %d %s", k, error ?: "");
	free(error);
	bpfbroker_result_free(r);
	(void)bpfbroker_unload(b, "seal-ifaces", NULL);
	(void)bpfbroker_unload(b, "seal-ip", NULL);
	bpfbroker_close(b);
	return 0;
}

static void test_seal_exact(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		/* lo of a network namespace of our own gets the altname, not the host's. */
		if (unshare(CLONE_NEWNET) < 0 ||
		    system("ip link property add dev lo altname bbseal-alt") != 0)
			_exit(3);
		_exit(harness_as_user(&ua, seal_exact_fn, NULL));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(ctl(&ua, "list", NULL), 0);
	assert_null(strstr(out, "seal-"));
}

/*
 * A frozen map is frozen to bpf() only: a holder of a writable fd to it (one from before the
 * link was protected) puts it in a map of maps of its own before the freeze (the broker
 * refuses a frozen map's insert) and writes it from its program after. The
 * maps the programs only read are BPF_F_RDONLY_PROG: the insert is refused (the template's
 * flags differ), and a template with the flag has its writing program refused.
 */
static int mim_fn(void *arg)
{
	_cleanup_(net_settings_done) struct net_settings s = {};
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "mim-bind"};
	struct bpfbroker_result *r = NULL, *mim = NULL;
	struct bpfbroker_error *e = NULL;
	static const uint8_t packet[64];
	struct bpfbroker_test_run_opts tr = {.sz = sizeof(tr),
					     .object = "mim",
					     .program = "write_rule",
					     .data_in = packet,
					     .data_in_size = sizeof(packet)};
	struct bpfbroker_test_run_result *trr = NULL;
	struct net_bind_rule got, none = {};
	char *error = NULL;
	struct bpfbroker *b = NULL;
	__u32 zero = 0;
	int allow, k;

	(void)arg;
	CHECK(net_settings_set(&s, "SocketBindDeny", "tcp:22", &error) == 0, "settings");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_load_system(b, "socket-bind", &o, &r, &e) == 0, "load");
	allow = bpfbroker_result_map(r, NET_MAP_BIND_ALLOW)->fd;
	CHECK(net_bind_fill(&s, allow, bpfbroker_result_map(r, NET_MAP_BIND_DENY)->fd, &error) == 0,
	      "fill");
	o.name = "mim-ro";
	k = harness_load("bindmim_ro", &o, &mim, &e);
	CHECK(k < 0 && e && strcmp(e->code, "load-failed") == 0, "bindmim_ro loaded: %d %s", k,
	      e ? e->message : "");
	bpfbroker_error_free(e);
	e = NULL;
	o.name = "mim";
	k = harness_load("bindmim", &o, &mim, &e);
	CHECK(k == 0, "load bindmim: %s", e ? e->message : strerror(-k));
	bpfbroker_result_free(mim);
	k = bpfbroker_map_insert(b, "mim", "outer", &zero, sizeof(zero), allow, &e);
	fprintf(stderr, "insert: %d %s\n", k, e ? e->message : "");
	bpfbroker_error_free(e);
	e = NULL;
	/* Frozen now (the broker refuses a frozen map's insert): but it went in before. */
	CHECK(net_bind_seal(&s, allow, bpfbroker_result_map(r, NET_MAP_BIND_DENY)->fd, &error) == 0,
	      "seal: %s", error ?: "");
	if (k == 0) {
		CHECK(bpfbroker_test_run(b, &tr, &trr, &e) == 0, "test run");
		bpfbroker_test_run_result_free(trr);
	}
	CHECK(bpf_map_lookup_elem(allow, &zero, &got) == 0, "read back");
	CHECK(memcmp(&got, &none, sizeof(got)) == 0, "the frozen bind_allow was written: %u %u-%u",
	      got.used, got.port_min, got.port_max);
	CHECK(k != 0, "our map went into the other's map of maps");
	bpfbroker_result_free(r);
	(void)bpfbroker_unload(b, "mim", NULL);
	(void)bpfbroker_unload(b, "mim-bind", NULL);
	bpfbroker_close(b);
	return 0;
}

static void test_frozen_through_map_of_maps(void **state)
{
	const struct user um = {UID_M, UID_M};
	char policy[512];

	snprintf(policy, sizeof(policy),
		 "{\"rules\": [{\"match\": {\"uids\": [\"%d\"]},"
		 " \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps_of_maps\": true, \"maps\": [{\"name\": \"*\", "
		 "\"access\": \"rw\"}]}}]}",
		 UID_M);
	assert_int_equal(harness_write_policy("60-mim.json", policy), 0);
	assert_int_equal(harness_reload(), 0);
	assert_int_equal(harness_as_user(&um, mim_fn, NULL), 0);
	assert_int_equal(ctl(&um, "list", NULL), 0);
	assert_null(strstr(out, "mim"));
}

static int still_denied_fn(void *arg);

static void test_other_user(void **state)
{
	static const char *const deny[] = {"IPAddressDeny=any", NULL};
	static const char *const allow[] = {"IPAddressAllow=any", NULL};
	char tag[NET_ENFORCE_TAG_MAX + 1], name[80], link[PATH_MAX], viaproc[PATH_MAX + 64];
	char err[1024];

	assert_int_equal(net_enforce_cgroup_tag(cg_unit, tag), 0);
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	/* B, straight to the broker (no bpfctl check in the way), by every path to A's cgroup. */
	snprintf(link, sizeof(link), "%s/cg-link", H.dir);
	assert_int_equal(symlink(cg_unit, link), 0);
	snprintf(viaproc, sizeof(viaproc), "/proc/self/root%s", cg_unit);
	assert_int_equal(apply_as(&ub, cg_unit, deny), EPERM);
	assert_int_equal(apply_as(&ub, link, deny), EPERM);
	assert_int_equal(apply_as(&ub, viaproc, deny), EPERM);
	assert_int_equal(
		ctl_stderr(&ub, err, sizeof(err), "net", "--deny", "any", "--cgroup", link, NULL),
		1);
	assert_non_null(strstr(err, "you do not own cgroup"));
	unlink(link);
	assert_nothing_left(&ub);
	/* B's objects of A's tag are B's own: A applies as if they were not there. */
	assert_int_equal(ctl(&ub, "load", "--system", "ip-firewall", "--name", name, NULL), 0);
	assert_int_equal(apply_as(&ua, cg_unit, deny), 0);
	assert_int_equal(ctl(&ub, "net", "remove", tag, NULL), 0); /* B's, not A's */
	assert_int_equal(apply_as(&ua, cg_unit, allow), 0); /* A's stay as they were */
	assert_int_equal(harness_in_cgroup_as(cg_unit, &ua, still_denied_fn, NULL), 0);
	assert_int_equal(ctl(&ua, "show", name, NULL), 0);
	assert_int_not_equal(ctl(&ub, "net", "show", tag, NULL), 0);
	assert_int_equal(remove_as(&ua, cg_unit), 0);
	assert_nothing_left(&ua);
	assert_nothing_left(&ub);
}

/* ---- bpfctl net -- CMD: killed, daemonizing ---- */

static int bpfctl_sleep_fn(void *arg)
{
	char buf[256];

	(void)arg;
	return harness_bpfctl(
		&ua, buf, sizeof(buf),
		(const char *const[]){"net", "--deny", "any", "--", "/bin/sleep", "30", NULL});
}

#define SUB_MAX (PATH_MAX + 300)

/* bpfctl net -- sleep 30 in cg_a, in the background; its sub-cgroup once applied. */
static pid_t start_sleeper(char sub[SUB_MAX])
{
	pid_t pid = fork();
	char name[256];

	if (pid == 0)
		_exit(harness_in_cgroup(cg_a, bpfctl_sleep_fn, NULL));
	for (int i = 0; i < 500; i++) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		if (harness_count_entries(cg_a, "bpfctl-net-", name, sizeof(name)) == 1 &&
		    ctl(&ua, "list", NULL) == 0 && strstr(out, "net-cg")) {
			char procs[SUB_MAX + 16], text[64] = "";
			int fd;

			/* Applied, and the command in: the go byte has been sent. */
			snprintf(sub, SUB_MAX, "%s/%s", cg_a, name);
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
			fd = open(procs, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && read(fd, text, sizeof(text) - 1) > 0) {
				close(fd);
				nanosleep(&ts, NULL);
				return pid;
			}
			if (fd >= 0)
				close(fd);
		}
		nanosleep(&ts, NULL);
	}
	return -1;
}

static int still_denied_fn(void *arg)
{
	_cleanup_close_ int s = udp_socket(AF_INET, false);

	(void)arg;
	CHECK(send_to(s, "127.0.0.3", PORT) == -EPERM, "not refused");
	return 0;
}

static void test_bpfctl_killed(void **state)
{
	char sub[SUB_MAX], tag[NET_ENFORCE_TAG_MAX + 1], kill_file[SUB_MAX + 16];
	const char *base;
	pid_t pid = start_sleeper(sub), bpfctl;
	int status;

	assert_true(pid > 0);
	base = strrchr(sub, '/') + strlen("/bpfctl-net-");
	bpfctl = (pid_t)atoi(base);
	assert_true(bpfctl > 0);
	assert_int_equal(kill(bpfctl, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* What is left: the command, confined still, and its objects; removable from outside. */
	assert_int_equal(harness_in_cgroup_as(sub, &ua, still_denied_fn, NULL), 0);
	assert_int_equal(net_enforce_cgroup_tag(sub, tag), 0);
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", sub);
	assert_int_equal(harness_write_file(kill_file, "1"), 0);
	for (int i = 0; i < 200 && rmdir(sub) < 0; i++)
		usleep(10000);
	assert_int_equal(ctl(&ua, "net", "remove", tag, NULL), 0);
	assert_nothing_left(&ua);
}

static void test_bpfctl_terminated(void **state)
{
	char sub[SUB_MAX];
	pid_t pid = start_sleeper(sub), bpfctl;
	int status;

	assert_true(pid > 0);
	bpfctl = (pid_t)atoi(strrchr(sub, '/') + strlen("/bpfctl-net-"));
	/* SIGTERM goes on to the command; bpfctl then cleans up and exits with its status. */
	assert_int_equal(kill(bpfctl, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	assert_int_equal(harness_count_entries(cg_a, "bpfctl-net-", NULL, 0), 0);
	assert_nothing_left(&ua);
}

static int daemonize_fn(void *arg)
{
	char buf[256];

	(void)arg;
	/* The command leaves a daemon behind (setsid, double fork) and exits at once. */
	return harness_bpfctl(
		&ua, buf, sizeof(buf),
		(const char *const[]){"net", "--deny", "any", "--", "/bin/sh", "-c",
				      "setsid /bin/sh -c '/bin/sleep 60 & echo $! > \"$0\"' \"$0\"",
				      (const char *)arg, NULL});
}

static void test_daemonizing_command(void **state)
{
	char pidfile[PATH_MAX], text[32] = "";
	pid_t daemon;
	int fd;

	snprintf(pidfile, sizeof(pidfile), "%s/daemon.pid", H.dir);
	fd = open(pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, UID_A, UID_A), 0);
	close(fd);
	assert_int_equal(harness_in_cgroup(cg_a, daemonize_fn, pidfile), 0);
	fd = open(pidfile, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && read(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	daemon = (pid_t)atoi(text);
	assert_true(daemon > 0);
	/* Killed with the sub-cgroup: nothing runs unfiltered once the objects go. */
	{
		char stat[64], st[256] = "";
		int sfd;

		snprintf(stat, sizeof(stat), "/proc/%d/stat", (int)daemon);
		sfd = open(stat, O_RDONLY | O_CLOEXEC);
		if (sfd >= 0) {
			assert_true(read(sfd, st, sizeof(st) - 1) > 0);
			close(sfd);
			/* Gone, or a zombie waiting for its reaper. */
			assert_non_null(strstr(st, ") Z "));
		}
	}
	assert_int_equal(harness_count_entries(cg_a, "bpfctl-net-", NULL, 0), 0);
	assert_nothing_left(&ua);
}

/* ---- setup ---- */

static int start(void)
{
	char arg[400];

	if (harness_init() < 0 || netinstall_objects_and_policy(arg, sizeof(arg)) < 0)
		return -1;
	if (harness_cgroup_make_own(CG, NULL, 0, cg_parent, sizeof(cg_parent)) < 0 ||
	    harness_cgroup_make_own(CG, "a", UID_A, cg_a, sizeof(cg_a)) < 0 ||
	    harness_cgroup_make_own(CG, "a/unit", UID_A, cg_unit, sizeof(cg_unit)) < 0 ||
	    harness_cgroup_make_own(CG, "b", UID_B, cg_b, sizeof(cg_b)) < 0 ||
	    harness_cgroup_make_own(CG, "r", UID_R, NULL, 0) < 0 ||
	    harness_cgroup_make_own(CG, "r/unit", UID_R, cg_r, sizeof(cg_r)) < 0 ||
	    harness_cgroup_make_own(CG, "s", UID_S, NULL, 0) < 0 ||
	    harness_cgroup_make_own(CG, "s/unit", UID_S, cg_s, sizeof(cg_s)) < 0)
		return -1;
	/* Our own network namespace, where every group may have ping sockets. */
	if (unshare(CLONE_NEWNET) < 0 || IP("link", "set", "lo", "up") < 0 ||
	    harness_write_file("/proc/sys/net/ipv4/ping_group_range", "0 2147483647") < 0)
		return -1;
	harness_mark_kernel_objects();
	return harness_start(arg);
}

static int setup(void **state)
{
	return start() < 0 ? harness_setup_failed() : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapped_and_other_sockets),
		cmocka_unit_test(test_bind_bypass),
		cmocka_unit_test(test_fake_applied),
		cmocka_unit_test(test_weaken_from_inside),
		cmocka_unit_test(test_fds_before_protected),
		cmocka_unit_test(test_swap_before_protected),
		cmocka_unit_test(test_attach_replaced),
		cmocka_unit_test(test_seal),
		cmocka_unit_test(test_seal_exact),
		cmocka_unit_test(test_frozen_through_map_of_maps),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_bpfctl_killed),
		cmocka_unit_test(test_bpfctl_terminated),
		cmocka_unit_test(test_daemonizing_command),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
