// SPDX-License-Identifier: MIT
/*
 * bpfctl net end to end, as real unprivileged uids in delegated cgroups, through the broker
 * with the example policy's grant (examples/policy.d/70-user-network.json) and the shipped
 * network objects, with real traffic in a network namespace the test makes (lo, and a veth
 * pair): IPAddressDeny=any + IPAddressAllow= both ways, IPv4 and IPv6; accounting; interfaces;
 * bind rules; cgroups not the caller's, users not granted, the command's own attempts to undo
 * its rules, other users' attempts, quotas; and nothing left after the command. The command
 * bpfctl runs is this program again ("child ..."), with sockets the test made outside the
 * cgroup passed down as fds: they keep the test's cgroup, so they are the peers outside.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "objects/net/net_enforce.h"
#include "tests/integration/harness.h"
#include "tests/integration/netinstall.h"
#include "tests/integration/udp.h"

#define UID_A 4601 /* granted by the example policy */
#define UID_B 4602 /* granted too: another user */
#define UID_NONE 61001 /* outside the example's range: nothing granted */
#define PORT 47101
#define CG "bpfbroker-test-netjoin" /* the test's cgroups: CG-PID/... */

static const struct user ua = {UID_A, UID_A}, ub = {UID_B, UID_B}, unone = {UID_NONE, UID_NONE};
static char cg_a[PATH_MAX], cg_b[PATH_MAX], cg_none[PATH_MAX], cg_applied[PATH_MAX];
static char cg_parent[PATH_MAX], self_exe[PATH_MAX];

#define ctl harness_ctl
#define out harness_out

/* ---- sockets (udp.h), for the child and the test alike ---- */

static int udp_bound(const char *addr, uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	bool v6 = strchr(addr, ':');
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0); /* inherited by the child */

	if (fd < 0 ||
	    (v6 ? inet_pton(AF_INET6, addr, &a6.sin6_addr)
		: inet_pton(AF_INET, addr, &a4.sin_addr)) != 1 ||
	    (v6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
		: bind(fd, (struct sockaddr *)&a4, sizeof(a4))) < 0) {
		fprintf(stderr, "udp socket on %s:%u: %m\n", addr, port);
		return -1;
	}
	return fd;
}

/* ---- the command bpfctl net runs: this program as "child MODE ARGS" ---- */

#define CHILD_CHECK(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "child: check failed: %s: ", #cond);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* ip ALLOWED DENIED OUT_ALLOWED_FD OUT_DENIED_FD: egress to ALLOWED only, ingress from it only. */
static int child_ip(char **argv)
{
	const char *allowed = argv[0], *denied = argv[1];
	int out_allowed = atoi(argv[2]), out_denied = atoi(argv[3]);
	_cleanup_close_ int c = udp_bound(allowed, PORT + 1);
	_cleanup_close_ int any = udp_bound(strchr(allowed, ':') ? "::" : "0.0.0.0", 0);

	CHILD_CHECK(c >= 0 && any >= 0, "sockets");
	CHILD_CHECK(send_to(any, allowed, PORT) == 0, "send to %s: %m", allowed);
	CHILD_CHECK(send_to(any, denied, PORT) == -EPERM, "send to %s not refused", denied);
	/* Ingress, from the test's sockets outside the cgroup: the denied source first. */
	CHILD_CHECK(send_to(out_denied, allowed, PORT + 1) == 0, "send from %s", denied);
	CHILD_CHECK(send_to(out_allowed, allowed, PORT + 1) == 0, "send from %s", allowed);
	CHILD_CHECK(received(c, 300) == 1, "exactly the datagram from %s", allowed);
	return 0;
}

/* acct ALLOWED SENDER_FD: 7 datagrams out, one refused, 5 in. */
static int child_acct(char **argv)
{
	_cleanup_close_ int c = udp_bound(argv[0], PORT + 1);
	int sender = atoi(argv[1]);

	CHILD_CHECK(c >= 0, "socket");
	for (int i = 0; i < 7; i++)
		CHILD_CHECK(send_to(c, argv[0], PORT) == 0, "send: %m");
	CHILD_CHECK(send_to(c, "127.0.0.3", PORT) == -EPERM, "send not refused");
	for (int i = 0; i < 5; i++)
		CHILD_CHECK(send_to(sender, argv[0], PORT + 1) == 0, "send: %m");
	CHILD_CHECK(received(c, 300) == 5, "datagrams lost");
	return 0;
}

/* ifaces LO_OK NV0_OK: sends over lo and over nv0, each allowed (1) or refused (0). */
static int child_ifaces(char **argv)
{
	_cleanup_close_ int s = udp_bound("0.0.0.0", 0);
	int lo = send_to(s, "127.0.0.1", PORT), nv = send_to(s, "10.78.0.2", PORT);

	CHILD_CHECK(lo == (atoi(argv[0]) ? 0 : -EPERM), "lo: %s", strerror(-lo));
	CHILD_CHECK(nv == (atoi(argv[1]) ? 0 : -EPERM), "nv0: %s", strerror(-nv));
	return 0;
}

/* bind: SocketBindAllow=7000-7001, SocketBindDeny=ipv4:tcp:8085 and ipv6 (any port). */
static int child_bind(char **argv)
{
	CHILD_CHECK(try_bind(AF_INET, SOCK_STREAM, 8085) == -EPERM, "ipv4 tcp 8085");
	CHILD_CHECK(try_bind(AF_INET, SOCK_STREAM, 8086) == 0, "ipv4 tcp 8086");
	CHILD_CHECK(try_bind(AF_INET, SOCK_DGRAM, 8085) == 0, "ipv4 udp 8085");
	CHILD_CHECK(try_bind(AF_INET6, SOCK_DGRAM, 9000) == -EPERM, "ipv6 udp 9000");
	CHILD_CHECK(try_bind(AF_INET6, SOCK_STREAM, 7001) == 0, "ipv6 tcp 7001 (allowed)");
	return 0;
}

/*
 * undo SOCKET: the command's own process, inside the cgroup its rules are attached to,
 * tries to take them away through the broker: all refused, and still enforced.
 */
static int child_undo(char **argv)
{
	char own[PATH_MAX], line[PATH_MAX - 64], tag[NET_ENFORCE_TAG_MAX + 1], name[80],
		*error = NULL;
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker *b;
	FILE *f = fopen("/proc/self/cgroup", "re");
	uint8_t key[8] = {0, 0, 0, 0}, one = 1;
	_cleanup_close_ int s = udp_bound("0.0.0.0", 0);
	int k;

	/* The cgroup v2 line, "0::/PATH" (on a hybrid layout not the first). */
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "0::", 3) != 0)
		;
	CHILD_CHECK(f && strncmp(line, "0::", 3) == 0, "/proc/self/cgroup");
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	CHILD_CHECK(harness_cgroup_root(own, sizeof(own) - sizeof(line)) == 0, "cgroup root");
	strcat(own, line + 3);
	CHILD_CHECK(net_enforce_cgroup_tag(own, tag) == 0, "tag of %s", own);
	snprintf(name, sizeof(name), "net-%s-ip", tag);
	CHILD_CHECK(bpfbroker_connect(argv[0], &b) == 0, "connect");
	k = bpfbroker_unload(b, name, &e);
	CHILD_CHECK(k == -EPERM && e && strcmp(e->code, "policy-denied") == 0, "unload: %d", k);
	bpfbroker_error_free(e);
	e = NULL;
	k = bpfbroker_detach(b, name, "ip_egress", 0, NULL, NULL, &e);
	CHILD_CHECK(k == -EPERM, "detach: %d", k);
	bpfbroker_error_free(e);
	e = NULL;
	CHILD_CHECK(net_enforce_remove(b, tag, &error) == -EPERM, "net_enforce_remove: %s",
		    error ?: "done");
	free(error);
	/* Its maps: fds without write, and no write through the broker either. */
	CHILD_CHECK(bpfbroker_fds(b, name, &r, &e) == 0, "fds");
	CHILD_CHECK(bpfbroker_result_map(r, "ipv4_allow")->fd_access == BPFBROKER_ACCESS_RO,
		    "ipv4_allow fd writable");
	bpfbroker_result_free(r);
	CHILD_CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	CHILD_CHECK(bpfbroker_map_open(b, name, "ipv4_allow", &h, &e) == 0, "map open");
	key[0] = 0; /* prefix length 0: "any" */
	k = bpfbroker_map_update_elem(h, key, &one, 0, &e);
	CHILD_CHECK(k == -EPERM, "map update through the broker: %d", k);
	bpfbroker_error_free(e);
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	CHILD_CHECK(send_to(s, "127.0.0.3", PORT) == -EPERM, "no longer enforced");
	return 0;
}

static int child_main(int argc, char **argv)
{
	static const struct {
		const char *mode;
		int (*fn)(char **argv);
		int n_args;
	} modes[] = {
		{"ip", child_ip, 4},	 {"acct", child_acct, 2}, {"ifaces", child_ifaces, 2},
		{"bind", child_bind, 0}, {"undo", child_undo, 1},
	};

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (argc == 3 + modes[i].n_args && strcmp(argv[2], modes[i].mode) == 0)
			return modes[i].fn(argv + 3);
	fprintf(stderr, "child: bad arguments\n");
	return 2;
}

/* ---- bpfctl net as a user in a cgroup, its stderr kept ---- */

struct net_call {
	const struct user *u;
	const char *const *args;
	int err_fd;
};

static int net_call_fn(void *arg)
{
	const struct net_call *c = arg;

	dup2(c->err_fd, STDERR_FILENO);
	return harness_bpfctl(c->u, out, sizeof(out), c->args);
}

static char err_text[8192];

/* bpfctl ARGS... (up to NULL) as u, from inside cgroup cg; its stderr in err_text. */
static int net_in(const char *cg, const struct user *u, ...)
{
	const char *args[32];
	struct net_call c = {.u = u, .args = args};
	int p[2], k;
	size_t n = 0;
	ssize_t got;
	va_list ap;

	va_start(ap, u);
	while (n < 31 && (args[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	c.err_fd = p[1];
	k = harness_in_cgroup(cg, net_call_fn, &c);
	close(p[1]);
	n = 0;
	while (n + 1 < sizeof(err_text) &&
	       (got = read(p[0], err_text + n, sizeof(err_text) - 1 - n)) > 0)
		n += (size_t)got;
	err_text[n] = '\0';
	close(p[0]);
	fprintf(stderr, "%s", err_text); /* for the log */
	return k;
}

/* Nothing of u's left: no named objects, no pins but the empty by-name directory, no
 * sub-cgroup of bpfctl net in cg. */
static void assert_nothing_left(const struct user *u, const char *cg)
{
	char dir[512];

	assert_int_equal(ctl(u, "-j", "list", NULL), 0);
	assert_null(strstr(out, "net-"));
	snprintf(dir, sizeof(dir), "%s/%u", H.pin_root, u->uid);
	assert_true(harness_count_entries(dir, "", NULL, 0) <= 1);
	assert_int_equal(harness_count_entries(cg, "bpfctl-net-", NULL, 0), 0);
}

/* The integer at o.key.sub (sub NULL: o.key), or -1. */
static int64_t json_int(json_object *o, const char *key, const char *sub)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    (sub && !json_object_object_get_ex(v, sub, &v)) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	return json_object_get_int64(v);
}

/* ---- the tests ---- */

static void ip_case(const char *allowed, const char *denied)
{
	int out_allowed = udp_bound(allowed, PORT), out_denied = udp_bound(denied, PORT);
	char fa[16], fd[16];

	assert_true(out_allowed >= 0 && out_denied >= 0);
	snprintf(fa, sizeof(fa), "%d", out_allowed);
	snprintf(fd, sizeof(fd), "%d", out_denied);
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "any", "--allow", allowed, "--",
				self_exe, "child", "ip", allowed, denied, fa, fd, NULL),
			 0);
	assert_int_equal(received(out_allowed, 300), 1);
	assert_int_equal(received(out_denied, 300), 0);
	close(out_allowed);
	close(out_denied);
	assert_nothing_left(&ua, cg_a);
}

static void test_ipv4(void **state)
{
	ip_case("127.0.0.2", "127.0.0.3");
}

static void test_ipv6(void **state)
{
	ip_case("::1", "fd78::1");
}

static void test_exit_status(void **state)
{
	/* CMD's status is bpfctl's; a command that cannot run is 127, as in a shell. */
	assert_int_equal(
		net_in(cg_a, &ua, "net", "--deny", "any", "--", "/bin/sh", "-c", "exit 7", NULL),
		7);
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "any", "--", "/nonexistent", NULL),
			 127);
	/* The form is exact: CMD after --, settings checked as systemd checks them. */
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "any", "/bin/true", NULL), 2);
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "10.0.0.300", "--", "/bin/true", NULL),
			 2);
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "", "--", "/bin/true", NULL), 2);
	assert_nothing_left(&ua, cg_a);
	/* A child cgroup CMD made in its own: removed with it, and so the objects go too. */
	assert_int_equal(
		net_in(cg_a, &ua, "net", "--deny", "any", "--", "/bin/sh", "-c",
		       "m=$(awk '$9 == \"cgroup2\" { print $5; exit }' /proc/self/mountinfo) "
		       "&& mkdir \"$m$(sed -n 's/^0:://p' /proc/self/cgroup)/nested\"",
		       NULL),
		0);
	assert_nothing_left(&ua, cg_a);
}

static void test_accounting(void **state)
{
	int rx = udp_bound("127.0.0.2", PORT), sender = udp_bound("127.0.0.2", 0);
	char fs[16];

	assert_true(rx >= 0 && sender >= 0);
	snprintf(fs, sizeof(fs), "%d", sender);
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "any", "--allow", "127.0.0.2",
				"--accounting", "--", self_exe, "child", "acct", "127.0.0.2", fs,
				NULL),
			 0);
	/* UDP over IPv4: 28 bytes of headers a datagram; refused ones are not counted. */
	assert_non_null(strstr(err_text, "IP traffic received: 640 bytes, 5 packets"));
	assert_non_null(strstr(err_text, "IP traffic sent: 896 bytes, 7 packets"));
	close(rx);
	close(sender);
	assert_nothing_left(&ua, cg_a);
}

static void test_ifaces(void **state)
{
	assert_int_equal(net_in(cg_a, &ua, "net", "--restrict-ifaces", "lo", "--", self_exe,
				"child", "ifaces", "1", "0", NULL),
			 0);
	assert_int_equal(net_in(cg_a, &ua, "net", "--restrict-ifaces", "~lo", "--", self_exe,
				"child", "ifaces", "0", "1", NULL),
			 0);
	assert_nothing_left(&ua, cg_a);
}

static void test_bind(void **state)
{
	assert_int_equal(net_in(cg_a, &ua, "net", "--bind-allow", "7000-7001", "--bind-deny",
				"ipv4:tcp:8085", "--bind-deny", "ipv6", "--", self_exe, "child",
				"bind", NULL),
			 0);
	assert_nothing_left(&ua, cg_a);
}

static void test_confined(void **state)
{
	/* The command's own process cannot undo its rules through the broker. */
	assert_int_equal(net_in(cg_a, &ua, "net", "--deny", "any", "--allow", "127.0.0.2", "--",
				self_exe, "child", "undo", H.socket, NULL),
			 0);
	assert_nothing_left(&ua, cg_a);
}

static void test_not_owned(void **state)
{
	/* --cgroup on the parent (root's) and on another user's: refused, nothing loaded. */
	assert_int_equal(ctl(&ua, "net", "--deny", "any", "--cgroup", cg_parent, NULL), 1);
	assert_int_equal(ctl(&ua, "net", "--deny", "any", "--cgroup", cg_b, NULL), 1);
	/* Run from a cgroup that is not the caller's: no sub-cgroup made there. */
	assert_int_equal(net_in(cg_b, &ua, "net", "--deny", "any", "--", "/bin/true", NULL), 1);
	assert_int_equal(harness_count_entries(cg_b, "bpfctl-net-", NULL, 0), 0);
	assert_nothing_left(&ua, cg_a);
}

static void test_not_granted(void **state)
{
	assert_int_equal(net_in(cg_none, &unone, "net", "--deny", "any", "--", "/bin/true", NULL),
			 1);
	assert_non_null(strstr(err_text, "ip-firewall"));
	assert_nothing_left(&unone, cg_none);
}

static void test_cgroup_mode(void **state)
{
	char tag[NET_ENFORCE_TAG_MAX + 1], ref[128], map[160];

	assert_int_equal(net_enforce_cgroup_tag(cg_applied, tag), 0);
	/* An object of the name loaded but not attached there is no enforcement: refused. */
	{
		char name[80];

		snprintf(name, sizeof(name), "net-%s-ip", tag);
		assert_int_equal(ctl(&ua, "load", "--system", "ip-firewall", "--name", name, NULL),
				 0);
		assert_int_equal(ctl(&ua, "net", "--deny", "any", "--cgroup", cg_applied, NULL), 2);
		assert_int_equal(ctl(&ua, "unload", name, NULL), 0);
	}
	assert_int_equal(ctl(&ua, "net", "--deny", "any", "--accounting", "--restrict-ifaces", "lo",
			     "--bind-deny", "any", "--cgroup", cg_applied, NULL),
			 0);
	assert_non_null(strstr(out, "bpfctl net remove --cgroup"));
	/* Idempotent: applied again, nothing new. */
	assert_int_equal(ctl(&ua, "net", "--deny", "any", "--cgroup", cg_applied, NULL), 0);
	/* Quotas count the objects: three named objects, six programs, six links. */
	assert_int_equal(ctl(&ua, "-j", "policy", NULL), 0);
	assert_non_null(strstr(out, "\"named_objects\": 3"));
	assert_non_null(strstr(out, "\"loaded_programs\": 6"));
	assert_int_equal(ctl(&ua, "net", "show", "--cgroup", cg_applied, NULL), 0);
	assert_non_null(strstr(out, "IP traffic received: 0 bytes, 0 packets"));
	assert_int_equal(ctl(&ua, "-j", "net", "show", tag, NULL), 0);
	{
		json_object *o = json_tokener_parse(out);

		assert_non_null(o);
		assert_int_equal(json_int(o, "egress", "bytes"), 0);
		assert_int_equal(json_int(o, "egress", "packets"), 0);
		json_object_put(o);
	}
	/* Another user can neither unload them nor write their maps. */
	snprintf(ref, sizeof(ref), "%u/net-%s-ip", UID_A, tag);
	assert_int_not_equal(ctl(&ub, "unload", ref, NULL), 0);
	snprintf(map, sizeof(map), "%s/ipv4_allow", ref);
	assert_int_not_equal(ctl(&ub, "map", "update", map, "00 00 00 00 00 00 00 00", "01", NULL),
			     0);
	assert_int_not_equal(ctl(&ub, "map", "lookup", map, "00 00 00 00 00 00 00 00", NULL), 0);
	assert_int_equal(ctl(&ub, "net", "remove", tag, NULL), 0); /* B's own: none */
	assert_int_equal(ctl(&ua, "net", "show", tag, NULL), 0);
	/* From inside the cgroup: refused. From outside, by its owner: removed. */
	assert_int_equal(net_in(cg_applied, &ua, "net", "remove", NULL), 1);
	assert_int_equal(ctl(&ua, "net", "remove", "--cgroup", cg_applied, NULL), 0);
	assert_int_not_equal(ctl(&ua, "net", "show", tag, NULL), 0);
	assert_nothing_left(&ua, cg_a);
}

/* Three datagrams to 127.0.0.2:PORT, from a process the harness put in cg_applied. */
static int send_three(void *arg)
{
	_cleanup_close_ int s = udp_bound("127.0.0.2", 0);

	for (int i = 0; i < 3; i++)
		if (s < 0 || send_to(s, "127.0.0.2", PORT) < 0)
			return 1;
	return 0;
}

/* net show -j's object of tag (net list -j's element), checked: egress counted, ip and bind. */
static void assert_tag_json(json_object *t, const char *tag)
{
	json_object *v;

	assert_true(json_object_object_get_ex(t, "tag", &v));
	assert_string_equal(json_object_get_string(v), tag);
	/* Not a unit's tag: no unit, and null rather than absent. */
	assert_true(json_object_object_get_ex(t, "unit", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(t, "objects", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "[\"ip\",\"bind\"]");
	/* Egress only: the receiving socket is outside the cgroup. IP and UDP headers too. */
	assert_int_equal(json_int(t, "egress", "packets"), 3);
	assert_int_equal(json_int(t, "egress", "bytes"), 3 * (20 + 8 + PAYLOAD));
	assert_int_equal(json_int(t, "ingress", "packets"), 0);
	assert_int_equal(json_int(t, "ingress", "bytes"), 0);
}

static void test_list_show(void **state)
{
	_cleanup_close_ int rx = udp_bound("127.0.0.2", PORT);
	char tag[NET_ENFORCE_TAG_MAX + 1];
	json_object *o, *tags, *mine = NULL;

	assert_true(rx >= 0);
	assert_int_equal(net_enforce_cgroup_tag(cg_applied, tag), 0);
	/* Nothing applied: not listed; show says so with its own status, 3. */
	assert_int_equal(ctl(&ua, "net", "list", NULL), 0);
	assert_null(strstr(out, tag));
	assert_int_equal(ctl(&ua, "net", "show", tag, NULL), 3);
	assert_int_equal(
		ctl(&ua, "net", "--accounting", "--bind-deny", "1", "--cgroup", cg_applied, NULL),
		0);
	assert_int_equal(harness_in_cgroup_as(cg_applied, &ua, send_three, NULL), 0);
	assert_int_equal(received(rx, 300), 3);

	assert_int_equal(ctl(&ua, "-j", "net", "list", NULL), 0);
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "tags", &tags));
	for (size_t i = 0; i < json_object_array_length(tags); i++) {
		json_object *t = json_object_array_get_idx(tags, i), *v;

		if (json_object_object_get_ex(t, "tag", &v) &&
		    strcmp(json_object_get_string(v), tag) == 0)
			mine = t;
	}
	assert_non_null(mine);
	assert_tag_json(mine, tag);
	json_object_put(o);
	assert_int_equal(ctl(&ua, "net", "list", NULL), 0);
	fprintf(stderr, "%s", out); /* for the log */
	assert_non_null(strstr(out, tag));
	assert_non_null(strstr(out, "ip,bind"));

	assert_int_equal(ctl(&ua, "-j", "net", "show", "--cgroup", cg_applied, NULL), 0);
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_tag_json(o, tag);
	json_object_put(o);
	assert_int_equal(ctl(&ua, "net", "show", tag, NULL), 0);
	fprintf(stderr, "%s", out);
	assert_non_null(strstr(out, "IP traffic sent: 384 bytes, 3 packets"));

	/* Another user sees none of A's tags, and cannot show A's. */
	assert_int_equal(ctl(&ub, "-j", "net", "list", NULL), 0);
	assert_null(strstr(out, tag));
	assert_int_equal(ctl(&ub, "net", "show", tag, NULL), 3);
	/* --unit without a service manager to ask: an error (2), not "no such unit" (3). */
	assert_int_equal(ctl(&ua, "net", "show", "--unit", "nosuch.service", NULL), 2);

	assert_int_equal(ctl(&ua, "net", "remove", "--cgroup", cg_applied, NULL), 0);
	assert_int_equal(ctl(&ua, "net", "list", NULL), 0);
	assert_null(strstr(out, tag));
	assert_nothing_left(&ua, cg_a);
}

/* ---- setup ---- */

static int start(void)
{
	char arg[400];
	ssize_t n;

	if (harness_init() < 0)
		return -1;
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n < 0)
		return -1;
	self_exe[n] = '\0';
	if (netinstall_objects_and_policy(arg, sizeof(arg)) < 0)
		return -1;
	if (harness_cgroup_make_own(CG, NULL, 0, cg_parent, sizeof(cg_parent)) < 0 ||
	    harness_cgroup_make_own(CG, "a", UID_A, cg_a, sizeof(cg_a)) < 0 ||
	    harness_cgroup_make_own(CG, "a/applied", UID_A, cg_applied, sizeof(cg_applied)) < 0 ||
	    harness_cgroup_make_own(CG, "b", UID_B, cg_b, sizeof(cg_b)) < 0 ||
	    harness_cgroup_make_own(CG, "none", UID_NONE, cg_none, sizeof(cg_none)) < 0)
		return -1;
	/* Our own network namespace: lo, and nv0 (10.78.0.1/24, fd78::1/64) with its peer. */
	if (unshare(CLONE_NEWNET) < 0 || IP("link", "set", "lo", "up") < 0 ||
	    IP("link", "add", "nv0", "type", "veth", "peer", "name", "nv1") < 0 ||
	    IP("addr", "add", "10.78.0.1/24", "dev", "nv0") < 0 ||
	    IP("addr", "add", "fd78::1/64", "dev", "nv0", "nodad") < 0 ||
	    IP("link", "set", "nv0", "up") < 0 || IP("link", "set", "nv1", "up") < 0)
		return -1;
	harness_mark_kernel_objects();
	return harness_start(arg);
}

static int setup(void **state)
{
	return start() < 0 ? harness_setup_failed() : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),	    cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_exit_status), cmocka_unit_test(test_accounting),
		cmocka_unit_test(test_ifaces),	    cmocka_unit_test(test_bind),
		cmocka_unit_test(test_confined),    cmocka_unit_test(test_not_owned),
		cmocka_unit_test(test_not_granted), cmocka_unit_test(test_cgroup_mode),
		cmocka_unit_test(test_list_show),
	};

	if (argc >= 3 && strcmp(argv[1], "child") == 0)
		return child_main(argc, argv);
	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
