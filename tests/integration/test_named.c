/* SPDX-License-Identifier: MIT */
/*
 * Named objects, brokered attach, test runs, sharing, quotas and restart
 * safety, end to end: the real daemon as root, clients as real unprivileged
 * uids, the real kernel and real cgroups.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"

#define UID_OWNER 65534 /* nobody: loads, attaches to its delegated cgroup */
#define UID_OTHER 4301 /* same rights as nobody, but none over nobody's objects */
#define UID_MEMBER 4302 /* in the group root shares with */
#define UID_NONMEMBER 4303
#define UID_TRACER 4304 /* tracing types, fds withheld, listed tracepoints only */
#define UID_TESTER 4305 /* raw_tracepoint for test runs only */
#define UID_QUOTA 4306 /* small quotas */
#define UID_QUOTA_MEM 4307 /* little map memory */
#define UID_QUOTA_PROGS 4308 /* one loaded program */
#define UID_NESTER 4309 /* granted maps of maps */
#define UID_UNMATCHED 4310 /* no rule matches */
#define UID_QUOTA_RACE 4311 /* three loaded programs, loads at once */
#define DEFAULT_LOADS_PER_MINUTE 120 /* policy.h's POLICY_DEFAULT_MAX_LOADS_PER_MINUTE */

static gid_t share_gid;
static const char *share_group;
static const struct user owner = {UID_OWNER, UID_OWNER};
static const struct user other = {UID_OTHER, UID_OTHER};
static struct user member = {UID_MEMBER, UID_MEMBER};
static const struct user nonmember = {UID_NONMEMBER, UID_NONMEMBER};
static const struct user tracer = {UID_TRACER, UID_TRACER};
static const struct user tester = {UID_TESTER, UID_TESTER};
static const struct user quota = {UID_QUOTA, UID_QUOTA};
static const struct user quota_mem = {UID_QUOTA_MEM, UID_QUOTA_MEM};
static const struct user quota_progs = {UID_QUOTA_PROGS, UID_QUOTA_PROGS};
static const struct user nester = {UID_NESTER, UID_NESTER};
static const struct user unmatched = {UID_UNMATCHED, UID_UNMATCHED};
static const struct user quota_race = {UID_QUOTA_RACE, UID_QUOTA_RACE};
static const struct user root = {0, 0};

static char cg_base[256], cg_owned[300], cg_root_owned[300];

#define OUT_SIZE sizeof(harness_out)

/* bpfctl as u; the exit status, with stdout in out. */
#define ctl harness_ctl
#define out harness_out

static int connect_broker(struct bpfbroker **b)
{
	return bpfbroker_connect(H.socket, b);
}

/* ---- cgroups: a delegated one (owned by nobody) and one that isn't ---- */

static int cgroups_create(void)
{
	char root_dir[128];

	if (harness_cgroup_root(root_dir, sizeof(root_dir)) < 0)
		return -ENOENT;
	snprintf(cg_base, sizeof(cg_base), "%s/bpfbroker-test-%d", root_dir, (int)getpid());
	snprintf(cg_owned, sizeof(cg_owned), "%s/owned", cg_base);
	snprintf(cg_root_owned, sizeof(cg_root_owned), "%s/root-owned", cg_base);
	if (mkdir(cg_base, 0755) < 0 || mkdir(cg_owned, 0755) < 0 || mkdir(cg_root_owned, 0755) < 0)
		return -errno;
	return harness_chown_cgroup(cg_owned, UID_OWNER);
}

static int cgroups_remove(void)
{
	int k = 0;

	if (!cg_base[0])
		return 0;
	/* The processes the tests put there have exited and were reaped. */
	if (rmdir(cg_owned) < 0 && errno != ENOENT)
		k = -errno;
	if (rmdir(cg_root_owned) < 0 && errno != ENOENT)
		k = -errno;
	if (rmdir(cg_base) < 0 && errno != ENOENT)
		k = -errno;
	return k;
}

/* ---- library helpers, run inside clients ---- */

static int lib_load(const char *object, const char *name, const struct bpfbroker_share *shares,
		    size_t n_shares, struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker_load_opts opts = {
		.sz = sizeof(opts),
		.name = name,
		.shares = shares,
		.n_shares = n_shares,
	};

	return harness_load(object, &opts, res, err);
}

/* The broker's error code of a failed call, for CHECKs. */
static const char *code_of(const struct bpfbroker_error *e)
{
	return e && e->code ? e->code : "(no error reply)";
}

static uint64_t map_read_u64(int fd)
{
	uint32_t key = 0;
	uint64_t v = UINT64_MAX;

	if (bpf_map_lookup_elem(fd, &key, &v) < 0)
		return UINT64_MAX;
	return v;
}

/* ---- lifecycle through bpfctl: load, list, show, run, unload ---- */

static void test_lifecycle(void **state)
{
	char dir[512];
	struct stat st;

	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "eg", NULL), 0);
	assert_non_null(strstr(out, "count_egress"));
	/* The same name again is refused, clearly. */
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "eg", NULL), 2);

	assert_int_equal(ctl(&owner, "list", NULL), 0);
	assert_non_null(strstr(out, "eg"));
	assert_non_null(strstr(out, "count_egress"));
	assert_non_null(strstr(out, "cgroup_skb"));
	assert_int_equal(ctl(&owner, "-j", "list", NULL), 0);
	assert_non_null(strstr(out, "\"name\""));
	assert_non_null(strstr(out, "\"access\""));
	assert_non_null(strstr(out, "\"loaded_at\""));
	assert_int_equal(ctl(&owner, "show", "eg", NULL), 0);
	assert_non_null(strstr(out, "counts"));

	/* The pins are the broker's: root-owned, closed to users. */
	snprintf(dir, sizeof(dir), "%s/%u/eg", H.pin_root, UID_OWNER);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(dir, sizeof(dir), "%s/%u", H.pin_root, UID_OWNER);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	/* run --name: the fds of the loaded object, named as bpfctl run OBJ names them. */
	assert_int_equal(ctl(&owner, "run", "--name", "eg", "--", "/bin/sh", "-c",
			     "echo \"fds=$LISTEN_FDS names=$LISTEN_FDNAMES\"", NULL),
			 0);
	assert_non_null(strstr(out, "map/counts"));
	assert_non_null(strstr(out, "map/config"));
	/* cgroup_skb fds are the right to attach anywhere: withheld. */
	assert_null(strstr(out, "prog/count_egress"));

	assert_int_equal(ctl(&owner, "unload", "eg", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/%u/eg", H.pin_root, UID_OWNER);
	assert_int_equal(access(dir, F_OK), -1);
	snprintf(dir, sizeof(dir), "%s/%u", H.pin_root, UID_OWNER);
	/* Only the by-name pin directory may remain, and empty. */
	assert_true(harness_count_entries(dir, "", NULL, 0) <= 1);
	assert_int_equal(ctl(&owner, "list", NULL), 0);
	assert_null(strstr(out, "count_egress"));
	assert_int_not_equal(ctl(&owner, "unload", "eg", NULL), 0);
	assert_int_not_equal(ctl(&owner, "show", "eg", NULL), 0);
}

/* ---- cgroup_skb egress counting on the caller's delegated cgroup ---- */

static int send_packets(void *arg)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9)};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(s >= 0, "socket: %m");
	for (int i = 0; i < 5; i++)
		CHECK(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1, "sendto: %m");
	close(s);
	return 0;
}

static int client_counts_ro(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	uint32_t key = 0;
	uint64_t v = 0;
	int k = harness_fds("eg", &res, &err);

	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	m = bpfbroker_result_map(res, "counts");
	CHECK(m && m->fd >= 0 && m->access == BPFBROKER_ACCESS_RO, "counts not ro");
	v = map_read_u64(m->fd);
	CHECK(v >= 5 && v != UINT64_MAX, "counted %llu packets, expected at least 5",
	      (unsigned long long)v);
	CHECK(bpf_map_update_elem(m->fd, &key, &v, BPF_ANY) < 0 && errno == EPERM,
	      "ro update not refused: %m");
	bpfbroker_result_free(res);
	return 0;
}

static void test_cgroup_skb_egress(void **state)
{
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "eg", NULL), 0);
	/* Without --pin, bpfctl must be given a command to hold the link. */
	assert_int_not_equal(ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned, NULL), 0);
	assert_int_equal(
		ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned, "--pin", NULL), 0);
	assert_non_null(strstr(out, "link"));
	assert_int_equal(harness_in_cgroup(cg_owned, send_packets, NULL), 0);
	/* Only the attach types the policy names ("cgroups": true is skb and device). */
	assert_int_equal(ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned,
			     "--attach-type", "cgroup_inet4_connect", "--pin", NULL),
			 1);

	assert_int_equal(harness_as_user(&owner, client_counts_ro, NULL), 0);
	assert_int_equal(ctl(&owner, "map", "dump", "eg/counts", NULL), 0);
	assert_int_equal(ctl(&owner, "-j", "map", "dump", "eg/counts", NULL), 0);
	assert_non_null(strstr(out, "\"key\""));
	assert_int_equal(ctl(&owner, "map", "lookup", "eg/counts", "00000000", NULL), 0);
	/* ro: refused by bpfctl with a clear message, and by the kernel. */
	assert_int_not_equal(
		ctl(&owner, "map", "update", "eg/counts", "00000000", "0000000000000000", NULL), 0);
	/* rw map: update and read back. */
	assert_int_equal(
		ctl(&owner, "map", "update", "eg/config", "00000000", "0700000000000000", NULL), 0);
	assert_int_equal(ctl(&owner, "map", "lookup", "eg/config", "00000000", NULL), 0);
	assert_non_null(strstr(out, "value: 7"));
	/* Keys of the wrong size are refused before the kernel sees them. */
	assert_int_not_equal(ctl(&owner, "map", "lookup", "eg/config", "00", NULL), 0);

	assert_int_equal(ctl(&owner, "-j", "show", "eg", NULL), 0);
	assert_non_null(strstr(out, "\"pinned\": true"));
	assert_int_equal(ctl(&owner, "detach", "eg/count_egress", NULL), 0);
	assert_int_equal(ctl(&owner, "-j", "show", "eg", NULL), 0);
	assert_null(strstr(out, "\"pinned\": true"));
	assert_int_equal(ctl(&owner, "unload", "eg", NULL), 0);
}

/* ---- the container runtime scenario: a device program on a delegated cgroup ---- */

/* arg non-NULL: the device program is attached, so /dev/zero must be refused. */
static int open_devices(void *arg)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "/dev/null refused: %m");
	close(fd);
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (arg)
		CHECK(fd < 0 && errno == EPERM, "/dev/zero was not refused (fd %d)", fd);
	else
		CHECK(fd >= 0, "/dev/zero refused without a device program: %m");
	close(fd);
	return 0;
}

static int client_attach_device(void *arg)
{
	const char *target = arg;
	struct bpfbroker *b;
	struct bpfbroker_error *err = NULL;
	uint32_t id = 0;
	int link_fd = -1, k, cg = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct bpfbroker_attach_opts opts = {
		.sz = sizeof(opts),
		.object = "dev",
		.program = "allow_null",
		.target_type = "cgroup",
		.cgroup_fd = cg,
		.pin = true,
	};

	CHECK(cg >= 0, "open %s: %m", target);
	CHECK(connect_broker(&b) == 0, "connect");
	k = bpfbroker_attach(b, &opts, &id, &link_fd, &err);
	bpfbroker_close(b);
	close(cg);
	if (strcmp(target, cg_owned) != 0) {
		CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0,
		      "attach to a cgroup the caller doesn't own: %d %s", k, code_of(err));
		CHECK(strstr(err->message, "do not own"), "message: %s", err->message);
		/* Delegation is the system's: no policy key gives others' cgroups. */
		CHECK(harness_denial_has_key(err, ""), "no key for a cgroup not owned");
		bpfbroker_error_free(err);
		return 0;
	}
	CHECK(k == 0, "attach: %s", err ? err->message : strerror(-k));
	CHECK(id > 0 && link_fd < 0, "pinned attach: id %u fd %d", id, link_fd);
	return 0;
}

/*
 * Delegation means the whole of it: a directory the caller owns whose
 * cgroup.procs is still root's (a half-done chown) is not theirs to attach to.
 */
static void test_partial_delegation_denied(void **state)
{
	char dir[400], procs[420];

	snprintf(dir, sizeof(dir), "%s/half", cg_base);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, UID_OWNER, UID_OWNER), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "half", NULL), 0);
	assert_int_equal(ctl(&owner, "attach", "half/count_egress", "cgroup", dir, "--pin", NULL),
			 1);
	/* With cgroup.procs handed over too, it is delegated. */
	assert_int_equal(chown(procs, UID_OWNER, UID_OWNER), 0);
	assert_int_equal(harness_chown_cgroup(dir, UID_OWNER), 0);
	assert_int_equal(ctl(&owner, "attach", "half/count_egress", "cgroup", dir, "--pin", NULL),
			 0);
	assert_int_equal(ctl(&owner, "unload", "half", NULL), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_container_device(void **state)
{
	assert_int_equal(ctl(&owner, "load", harness_object("device"), "--name", "dev", NULL), 0);
	/* Someone else's cgroup: denied. */
	assert_int_equal(harness_as_user(&owner, client_attach_device, cg_root_owned), 0);
	assert_int_equal(harness_as_user(&owner, client_attach_device, cg_owned), 0);
	assert_int_equal(harness_in_cgroup(cg_owned, open_devices, "attached"), 0);
	/* Unload detaches: the same cgroup allows /dev/zero again. */
	assert_int_equal(ctl(&owner, "unload", "dev", NULL), 0);
	assert_int_equal(harness_in_cgroup(cg_owned, open_devices, NULL), 0);
}

/*
 * ---- xdp and tc, on interfaces of the caller's network namespace ----
 *
 * Root makes it (harness_in_new_netns_as), so it is not the caller's own:
 * the policy's host_interfaces grants lo there. (test_shares.c has a
 * namespace of the caller's own, and the host's.)
 */

static int attach_netdev(const char *type, const char *ifname, const char *direction,
			 const char *program, struct bpfbroker_error **err)
{
	struct bpfbroker *b;
	uint32_t id = 0;
	int fd = -1, k;
	struct bpfbroker_attach_opts opts = {
		.sz = sizeof(opts),
		.object = "net",
		.program = program,
		.target_type = type,
		.name = ifname,
		.attach_type = direction,
		.pin = true,
	};

	k = connect_broker(&b);
	if (k < 0)
		return k;
	*err = NULL;
	k = bpfbroker_attach(b, &opts, &id, &fd, err);
	bpfbroker_close(b);
	return k;
}

static int client_netns(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	uint32_t key;
	uint64_t xdp = 0, tc = 0;
	int k = lib_load("netcount", "net", NULL, 0, &res, &err);

	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	k = attach_netdev("xdp", "lo", NULL, "xdp_count", &err);
	CHECK(k == 0, "xdp attach: %s", err ? err->message : strerror(-k));
	k = attach_netdev("tc", "lo", "ingress", "tc_count", &err);
	CHECK(k == 0, "tc attach: %s", err ? err->message : strerror(-k));
	/* No policy grants a name that is no interface's: no key, an invalid request. */
	k = attach_netdev("xdp", "a_name_over_15_chars", NULL, "xdp_count", &err);
	CHECK(k < 0 && err && strcmp(err->code, "invalid-request") == 0, "long name: %s",
	      err ? err->message : "attached");
	bpfbroker_error_free(err);
	err = NULL;
	/* Interfaces the policy doesn't list, or this namespace doesn't have. */
	k = attach_netdev("xdp", "eth9", NULL, "xdp_count", &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "eth9: %s", code_of(err));
	/* Not the caller's namespace: host_interfaces is the key. */
	CHECK(harness_denial_has_key(err, "attach.host_interfaces: eth9"), "eth9's key");
	bpfbroker_error_free(err);
	k = attach_netdev("xdp", "lo", NULL, "tc_count", &err);
	CHECK(k < 0 && err && strstr(err->message, "not an xdp program"), "wrong type: %s",
	      code_of(err));
	bpfbroker_error_free(err);

	CHECK(send_packets(NULL) == 0, "sending");
	k = harness_fds("net", &res, &err);
	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	m = bpfbroker_result_map(res, "pkts");
	CHECK(m && m->fd >= 0, "no pkts fd");
	key = 0;
	CHECK(bpf_map_lookup_elem(m->fd, &key, &xdp) == 0, "lookup: %m");
	key = 1;
	CHECK(bpf_map_lookup_elem(m->fd, &key, &tc) == 0, "lookup: %m");
	CHECK(xdp >= 5 && tc >= 5, "xdp saw %llu, tc %llu packets", (unsigned long long)xdp,
	      (unsigned long long)tc);
	bpfbroker_result_free(res);
	return 0;
}

static void test_netdev_attach(void **state)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	assert_int_equal(harness_in_new_netns_as(&owner, client_netns, NULL), 0);
	/* It was the namespace's lo, not ours. */
	assert_int_equal(bpf_xdp_query((int)if_nametoindex("lo"), 0, &q), 0);
	assert_int_equal(q.prog_id, 0);
	assert_int_equal(ctl(&owner, "-j", "show", "net", NULL), 0);
	assert_non_null(strstr(out, "tcx"));
	assert_int_equal(ctl(&owner, "unload", "net", NULL), 0);
}

/* ---- tracing programs the caller may not hold ---- */

static int client_tracer(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_program *p;
	int k = lib_load("rawtp", "rt", NULL, 0, &res, &err);

	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	p = bpfbroker_result_program(res, "rawtp_count");
	CHECK(p && p->fd < 0 && p->id > 0, "raw_tracepoint fd handed out");
	bpfbroker_result_free(res);
	k = harness_fds("rt", &res, &err);
	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	p = bpfbroker_result_program(res, "rawtp_count");
	CHECK(p && p->fd < 0, "raw_tracepoint fd handed out by fds");
	bpfbroker_result_free(res);
	return 0;
}

static void test_tracing_attach(void **state)
{
	char *p;
	unsigned long long count = 0;

	assert_int_equal(harness_as_user(&tracer, client_tracer, NULL), 0);
	/* The kernel can't detach tracing links: the broker keeps them, pinned. */
	assert_int_not_equal(ctl(&tracer, "attach", "rt/rawtp_count", "raw_tracepoint", "sys_enter",
				 "--", "/bin/true", NULL),
			     0);
	/* Only raw tracepoints the policy lists. */
	assert_int_not_equal(ctl(&tracer, "attach", "rt/rawtp_count", "raw_tracepoint", "sys_exit",
				 "--pin", NULL),
			     0);
	/* Names no policy could grant are invalid requests (exit 2), not refusals naming a key. */
	assert_int_equal(
		ctl(&tracer, "attach", "rt/rawtp_count", "raw_tracepoint", "sys_*", "--pin", NULL),
		2);
	{
		char longname[200];

		memset(longname, 'a', 129);
		longname[129] = '\0';
		assert_int_equal(ctl(&tracer, "attach", "rt/rawtp_count", "raw_tracepoint",
				     longname, "--pin", NULL),
				 2);
	}
	assert_int_equal(ctl(&tracer, "attach", "rt/rawtp_count", "raw_tracepoint", "sys_enter",
			     "--pin", NULL),
			 0);
	usleep(10000);
	assert_int_equal(ctl(&tracer, "-j", "map", "dump", "rt/rawtp_counts", NULL), 0);
	assert_null(strstr(out, "\"value\": \"0000000000000000\""));
	assert_int_equal(ctl(&tracer, "-j", "show", "rt", NULL), 0);
	assert_non_null(strstr(out, "raw_tracepoint sys_enter"));
	assert_int_equal(ctl(&tracer, "unload", "rt", NULL), 0);

	/* A tracepoint, listed by CATEGORY:NAME. */
	assert_int_equal(harness_tracefs_ready(), 0);
	assert_int_equal(ctl(&tracer, "load", harness_object("tracepoint"), "--name", "tp", NULL),
			 0);
	assert_int_not_equal(ctl(&tracer, "attach", "tp/count_forks", "tracepoint",
				 "sched:sched_process_exec", "--pin", NULL),
			     0);
	assert_int_equal(ctl(&tracer, "attach", "tp/count_forks", "tracepoint", "sched_switch",
			     "--pin", NULL),
			 2);
	assert_int_equal(
		ctl(&tracer, "attach", "tp/count_forks", "tracepoint", "sched:*", "--pin", NULL),
		2);
	assert_int_equal(ctl(&tracer, "attach", "tp/count_forks", "tracepoint",
			     "sched:sched_process_fork", "--pin", NULL),
			 0);
	assert_int_equal(system("true; true"), 0);
	assert_int_equal(ctl(&tracer, "-j", "map", "dump", "tp/forks", NULL), 0);
	p = strstr(out, "\"value\": \"");
	assert_non_null(p);
	count = strtoull(p + strlen("\"value\": \""), NULL, 16);
	assert_int_not_equal(count, 0);
	assert_int_equal(ctl(&tracer, "unload", "tp", NULL), 0);
}

static int client_test_run_only(void *arg)
{
	struct bpfbroker *b;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_test_run_result *tr = NULL;
	uint64_t args[6] = {};
	struct bpfbroker_test_run_opts topts = {
		.sz = sizeof(topts),
		.object = "rt",
		.program = "rawtp_count",
		.ctx_in = args,
		.ctx_in_size = sizeof(args),
	};
	uint32_t id = 0;
	int fd = -1, k;
	struct bpfbroker_attach_opts aopts = {
		.sz = sizeof(aopts),
		.object = "rt",
		.program = "rawtp_count",
		.target_type = "raw_tracepoint",
		.name = "sys_enter",
		.pin = true,
	};

	/* Unnamed, a test-run-only program would be of no use: refused. */
	k = lib_load("rawtp", NULL, NULL, 0, &res, &err);
	CHECK(k < 0 && err && strstr(err->message, "test runs only"), "unnamed load: %d %s", k,
	      code_of(err));
	bpfbroker_error_free(err);
	k = lib_load("rawtp", "rt", NULL, 0, &res, &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	CHECK(bpfbroker_result_program(res, "rawtp_count")->fd < 0, "test-run-only fd");
	bpfbroker_result_free(res);

	CHECK(connect_broker(&b) == 0, "connect");
	err = NULL;
	k = bpfbroker_attach(b, &aopts, &id, &fd, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "test runs only"),
	      "attach of a test-run-only program: %d %s", k, err ? err->message : "");
	CHECK(harness_denial_has_key(err, "program_types: raw_tracepoint"), "its key");
	bpfbroker_error_free(err);
	err = NULL;
	k = bpfbroker_test_run(b, &topts, &tr, &err);
	CHECK(k == 0, "test run: %s", err ? err->message : strerror(-k));
	CHECK(tr->retval == 0, "retval %lld", (long long)tr->retval);
	bpfbroker_test_run_result_free(tr);
	bpfbroker_close(b);
	return 0;
}

static void test_test_run_only(void **state)
{
	assert_int_equal(harness_as_user(&tester, client_test_run_only, NULL), 0);
	/* The CLI too: test-run prints the return value; attach is refused. */
	assert_int_equal(ctl(&tester, "test-run", "rt/rawtp_count", NULL), 0);
	assert_non_null(strstr(out, "retval"));
	assert_int_not_equal(ctl(&tester, "attach", "rt/rawtp_count", "raw_tracepoint", "sys_enter",
				 "--pin", NULL),
			     0);
	assert_int_equal(ctl(&tester, "unload", "rt", NULL), 0);
}

/* ---- one user's objects are invisible to another ---- */

/*
 * The kernel takes any fd into a map of maps, whatever its mode: with one, a
 * user's program could write a map the broker gave them read-only. So the
 * broker refuses maps of maps unless the policy grants exactly that.
 */
static void test_maps_of_maps_refused(void **state)
{
	assert_int_equal(ctl(&owner, "load", harness_object("mapinmap"), "--name", "mim", NULL), 1);
	assert_int_equal(ctl(&owner, "check", harness_object("mapinmap"), NULL), 1);
	assert_non_null(strstr(out, "map of maps"));
}

/*
 * With maps of maps granted, the outer map still never comes writable: the
 * broker inserts, and only maps the client may write.
 */
static int client_nester(void *arg)
{
	struct bpfbroker_result *eg = NULL, *mim = NULL, *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *counts, *outer, *inner;
	static const uint8_t packet[64];
	struct bpfbroker_test_run_opts tr = {.sz = sizeof(tr),
					     .object = "mim",
					     .program = "write_inner",
					     .data_in = packet,
					     .data_in_size = sizeof(packet)};
	struct bpfbroker_test_run_result *trr = NULL;
	struct bpfbroker *b;
	uint32_t key = 0;
	uint64_t v = 0;
	int k, fd;

	k = lib_load("egress", "eg3", NULL, 0, &eg, &err);
	CHECK(k == 0, "load egress: %s", err ? err->message : strerror(-k));
	k = lib_load("mapinmap", "mim", NULL, 0, &res, &err);
	CHECK(k == 0, "load mapinmap: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	k = harness_fds("mim", &mim, &err);
	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	counts = bpfbroker_result_map(eg, "counts");
	outer = bpfbroker_result_map(mim, "outer");
	inner = bpfbroker_result_map(mim, "inner");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_RO, "counts not ro");
	CHECK(outer && outer->access == BPFBROKER_ACCESS_RO, "outer map of maps handed out %s",
	      outer ? bpfbroker_access_to_string(outer->access) : "not at all");
	CHECK(inner && inner->access == BPFBROKER_ACCESS_RW, "inner not rw");
	/* The kernel would take the ro counts fd: the outer fd must not allow it. */
	fd = counts->fd;
	CHECK(bpf_map_update_elem(outer->fd, &key, &fd, BPF_ANY) < 0 && errno == EPERM,
	      "outer map writable: %m");

	CHECK(connect_broker(&b) == 0, "connect");
	k = bpfbroker_map_insert(b, "mim", "outer", &key, sizeof(key), counts->fd, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "ro insert: %d %s", k,
	      code_of(err));
	bpfbroker_error_free(err);
	err = NULL;
	k = bpfbroker_map_insert(b, "mim", "outer", &key, sizeof(key), inner->fd, &err);
	CHECK(k == 0, "rw insert: %s", err ? err->message : strerror(-k));
	/* The program now writes the inner map: one the client could write anyway. */
	k = bpfbroker_test_run(b, &tr, &trr, &err);
	CHECK(k == 0, "test run: %s", err ? err->message : strerror(-k));
	bpfbroker_test_run_result_free(trr);
	CHECK(bpf_map_lookup_elem(inner->fd, &key, &v) == 0 && v == 1, "inner reads %llu",
	      (unsigned long long)v);
	CHECK(map_read_u64(counts->fd) == 0, "counts was written");
	bpfbroker_close(b);
	bpfbroker_result_free(eg);
	bpfbroker_result_free(mim);
	return 0;
}

static void test_map_of_maps_inserts(void **state)
{
	assert_int_equal(harness_as_user(&nester, client_nester, NULL), 0);
	assert_int_equal(ctl(&nester, "unload", "mim", NULL), 0);
	assert_int_equal(ctl(&nester, "unload", "eg3", NULL), 0);
}

/*
 * Reusing a map pinned by name is another way to make a program reach it:
 * it needs write access too. The first load makes the pin (its own program,
 * its own new map); a second that would reuse an ro map is refused.
 */
/*
 * A pinned map of maps is never reused: no grant gives write access to a
 * map of maps, so the refusal names no key ("maps" could not help).
 */
static int client_pinned_mim_reuse(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("pinned_mim", "pmim1", NULL, 0, &res, &err);

	CHECK(k == 0, "first load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	res = NULL;
	k = lib_load("pinned_mim", "pmim2", NULL, 0, &res, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "pinned by name and exists"),
	      "reuse: %d %s", k, err ? err->message : "");
	CHECK(harness_denial_has_key(err, ""), "a key for reusing a map of maps");
	bpfbroker_error_free(err);
	return 0;
}

static void test_pinned_reuse_needs_write(void **state)
{
	assert_int_equal(ctl(&nester, "load", harness_object("pinned"), "--name", "pin1", NULL), 0);
	assert_int_equal(ctl(&nester, "load", harness_object("pinned"), "--name", "pin2", NULL), 1);
	assert_int_equal(ctl(&nester, "unload", "pin1", NULL), 0);
	assert_int_equal(harness_as_user(&nester, client_pinned_mim_reuse, NULL), 0);
	assert_int_equal(ctl(&nester, "unload", "pmim1", NULL), 0);
}

static void test_isolation(void **state)
{
	char ref[64];

	snprintf(ref, sizeof(ref), "%u/mine", UID_OWNER);
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "mine", NULL), 0);
	assert_int_equal(ctl(&other, "list", NULL), 0);
	assert_null(strstr(out, "mine"));
	assert_int_equal(ctl(&other, "list", "--shared", NULL), 0);
	assert_null(strstr(out, "mine"));
	assert_int_not_equal(ctl(&other, "show", ref, NULL), 0);
	assert_int_not_equal(ctl(&other, "run", "--name", ref, "--", "/bin/true", NULL), 0);
	assert_int_not_equal(ctl(&other, "map", "dump", "65534/mine/counts", NULL), 0);
	assert_int_not_equal(ctl(&other, "detach", "65534/mine/count_egress", NULL), 0);
	assert_int_not_equal(ctl(&other, "unload", ref, NULL), 0);
	/* Only root or the admin group may look at everyone's. */
	assert_int_not_equal(ctl(&other, "list", "--all", NULL), 0);
	assert_int_equal(ctl(&root, "list", "--all", NULL), 0);
	assert_non_null(strstr(out, "mine"));
	assert_int_equal(ctl(&root, "list", "--user", "nobody", NULL), 0);
	assert_non_null(strstr(out, "mine"));
	assert_int_equal(ctl(&owner, "list", NULL), 0);
	assert_non_null(strstr(out, "mine"));
	/* Root unloads it for them. */
	assert_int_equal(ctl(&root, "unload", ref, NULL), 0);
	assert_int_equal(ctl(&owner, "list", NULL), 0);
	assert_null(strstr(out, "mine"));
}

/* ---- sharing: root's counters, read-only for a group ---- */

static int client_member_reads(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	uint32_t key = 0;
	uint64_t v = 42;
	int k = harness_fds("root/shared-counter", &res, &err);

	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	m = bpfbroker_result_map(res, "counts");
	CHECK(m && m->fd >= 0 && m->access == BPFBROKER_ACCESS_RO, "counts not shared ro");
	CHECK(map_read_u64(m->fd) == 3, "counts reads %llu",
	      (unsigned long long)map_read_u64(m->fd));
	CHECK(bpf_map_update_elem(m->fd, &key, &v, BPF_ANY) < 0 && errno == EPERM,
	      "shared ro map writable: %m");
	m = bpfbroker_result_map(res, "config");
	CHECK(!m || m->fd < 0, "config was not shared, but came with an fd");
	CHECK(!bpfbroker_result_program(res, "count_egress") ||
		      bpfbroker_result_program(res, "count_egress")->fd < 0,
	      "program fd handed to a non-owner");
	bpfbroker_result_free(res);
	return 0;
}

static int client_nonmember(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = harness_fds("root/shared-counter", &res, &err);

	CHECK(k < 0 && err && strcmp(err->code, "not-found") == 0, "non-member: %d %s", k,
	      code_of(err));
	bpfbroker_error_free(err);
	/* The policy's own share: config of root's policy-shared, ro. */
	k = harness_fds("root/policy-shared", &res, &err);
	CHECK(k == 0, "policy share: %s", err ? err->message : strerror(-k));
	CHECK(bpfbroker_result_map(res, "config") &&
		      bpfbroker_result_map(res, "config")->access == BPFBROKER_ACCESS_RO,
	      "config not ro through the policy's share");
	CHECK(!bpfbroker_result_map(res, "counts") || bpfbroker_result_map(res, "counts")->fd < 0,
	      "counts came too");
	bpfbroker_result_free(res);
	return 0;
}

static int root_loads_shared(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_share share = {
		.map = "counts", .group = share_group, .access = BPFBROKER_ACCESS_RO};
	uint32_t key = 0;
	uint64_t v = 3;
	int k = lib_load("egress", "shared-counter", &share, 1, &res, &err);

	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	CHECK(bpf_map_update_elem(bpfbroker_result_map(res, "counts")->fd, &key, &v, BPF_ANY) == 0,
	      "root's own update: %m");
	bpfbroker_result_free(res);
	k = lib_load("egress", "policy-shared", NULL, 0, &res, &err);
	CHECK(k == 0, "load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	return 0;
}

static int owner_overshares(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	/* nobody's own access to counts is ro: it can't give rw away. */
	struct bpfbroker_share share = {
		.map = "counts", .user = "4301", .access = BPFBROKER_ACCESS_RW};
	int k = lib_load("egress", "over", &share, 1, &res, &err);

	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "over-share: %d %s", k,
	      code_of(err));
	bpfbroker_error_free(err);
	return 0;
}

static void test_sharing(void **state)
{
	assert_int_equal(root_loads_shared(NULL), 0);
	assert_int_equal(harness_as_user(&member, client_member_reads, NULL), 0);
	assert_int_equal(ctl(&member, "list", "--shared", NULL), 0);
	assert_non_null(strstr(out, "shared-counter"));
	/* Those it is shared with see the shared map, not the programs or other maps. */
	assert_int_equal(ctl(&member, "-j", "show", "root/shared-counter", NULL), 0);
	assert_non_null(strstr(out, "\"counts\""));
	assert_null(strstr(out, "count_egress"));
	assert_null(strstr(out, "\"config\""));
	assert_int_equal(ctl(&member, "map", "dump", "root/shared-counter/counts", NULL), 0);
	assert_int_not_equal(ctl(&member, "map", "update", "root/shared-counter/counts", "00000000",
				 "0000000000000000", NULL),
			     0);
	assert_int_not_equal(ctl(&member, "unload", "root/shared-counter", NULL), 0);
	assert_int_equal(harness_as_user(&nonmember, client_nonmember, NULL), 0);
	assert_int_equal(ctl(&nonmember, "list", "--shared", NULL), 0);
	assert_null(strstr(out, "shared-counter"));
	assert_int_equal(harness_as_user(&owner, owner_overshares, NULL), 0);
	assert_int_equal(ctl(&root, "unload", "shared-counter", NULL), 0);
	assert_int_equal(ctl(&root, "unload", "policy-shared", NULL), 0);
}

/* ---- quotas, across connections and a restart ---- */

static int client_rate_refused(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("counter", NULL, NULL, 0, &res, &err);

	CHECK(k < 0 && err && strcmp(err->code, "quota") == 0, "over max_loads_per_minute: %d %s",
	      k, code_of(err));
	CHECK(harness_denial_has_key(err, "max_loads_per_minute"), "its key");
	bpfbroker_error_free(err);
	return 0;
}

/*
 * A user no rule matches is held to the default rate: no limit of theirs
 * could be raised, a rule matching them ("match") is what would change.
 */
static int client_unmatched_rate(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = 0;

	for (int i = 0; i <= DEFAULT_LOADS_PER_MINUTE; i++) {
		bpfbroker_error_free(err);
		err = NULL;
		k = lib_load("counter", NULL, NULL, 0, &res, &err);
		CHECK(k < 0 && err, "an unmatched user's load %d: %d", i, k);
		if (strcmp(err->code, "quota") == 0)
			break;
		CHECK(harness_denial_has_key(err, "match"), "load %d: its key", i);
	}
	CHECK(strcmp(err->code, "quota") == 0, "no quota after %d loads: %s",
	      DEFAULT_LOADS_PER_MINUTE + 1, err->message);
	CHECK(harness_denial_has_key(err, "match"), "the rate's key for an unmatched user");
	bpfbroker_error_free(err);
	return 0;
}

static void test_quotas(void **state)
{
	assert_int_equal(ctl(&quota, "policy", NULL), 0);
	assert_non_null(strstr(out, "max_named_objects"));
	assert_int_equal(ctl(&quota, "load", harness_object("counter"), "--name", "a", NULL), 0);
	assert_int_equal(ctl(&quota, "load", harness_object("counter"), "--name", "b", NULL), 0);
	/* bpfctl policy reports what counts against the quotas. */
	assert_int_equal(ctl(&quota, "-j", "policy", NULL), 0);
	assert_non_null(strstr(out, "\"named_objects\": 2"));
	assert_non_null(strstr(out, "\"loaded_programs\": 2"));
	assert_int_equal(ctl(&quota, "load", harness_object("counter"), "--name", "c", NULL), 1);
	assert_int_equal(ctl(&quota, "-j", "load", harness_object("counter"), "--name", "c", NULL),
			 1);
	/* Restart: the quota still counts what is loaded. */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
	assert_int_equal(ctl(&quota, "load", harness_object("counter"), "--name", "c", NULL), 1);
	assert_int_equal(ctl(&quota, "unload", "a", NULL), 0);
	assert_int_equal(ctl(&quota, "unload", "b", NULL), 0);
	/*
	 * max_loads_per_minute (4) counts load requests since the restart, named
	 * or not, refused or not; checks are free.
	 */
	assert_int_equal(ctl(&quota, "check", harness_object("counter"), NULL), 0);
	for (int i = 0; i < 3; i++) /* after the refused "c": the 2nd to 4th */
		assert_int_equal(
			ctl(&quota, "run", harness_object("counter"), "--", "/bin/true", NULL), 0);
	assert_int_equal(ctl(&quota, "run", harness_object("counter"), "--", "/bin/true", NULL), 1);
	assert_int_equal(
		ctl(&quota, "-j", "run", harness_object("counter"), "--", "/bin/true", NULL), 1);
	assert_non_null(strstr(out, "\"quota\""));
	/* The event loop's refusal names its key as the workers' do. */
	assert_int_equal(harness_as_user(&quota, client_rate_refused, NULL), 0);
	assert_int_equal(harness_as_user(&unmatched, client_unmatched_rate, NULL), 0);
}

/* Map memory and program quotas: the second counter object goes over each. */
static int client_quota_second_load(void *arg)
{
	const char *limit = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("counter", "first", NULL, 0, &res, &err);

	CHECK(k == 0, "first load: %s", err ? err->message : strerror(-k));
	bpfbroker_result_free(res);
	k = lib_load("counter", "second", NULL, 0, &res, &err);
	CHECK(k < 0 && err && strcmp(err->code, "quota") == 0 && strstr(err->message, limit),
	      "second load: %d %s", k, err ? err->message : "");
	bpfbroker_error_free(err);
	return 0;
}

/*
 * eg/count_egress to the owned cgroup as attach_type: refused with code and,
 * unless key is NULL (not a refusal), key.
 */
static int attach_egress_refused(const char *attach_type, const char *code, const char *key)
{
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	uint32_t id = 0;
	int fd = -1, k, cg = open(cg_owned, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct bpfbroker_attach_opts opts = {
		.sz = sizeof(opts),
		.object = "eg",
		.program = "count_egress",
		.target_type = "cgroup",
		.cgroup_fd = cg,
		.attach_type = attach_type,
		.pin = true,
	};

	CHECK(cg >= 0, "open %s: %m", cg_owned);
	CHECK(connect_broker(&b) == 0, "connect");
	k = bpfbroker_attach(b, &opts, &id, &fd, &err);
	bpfbroker_close(b);
	close(cg);
	CHECK(k < 0 && err && strcmp(err->code, code) == 0, "attach as %s: %d %s", attach_type, k,
	      err ? err->message : "");
	CHECK(!key || harness_denial_has_key(err, key), "attach as %s: its key", attach_type);
	bpfbroker_error_free(err);
	return 0;
}

/* Over max_attachments, and an attach type attach.cgroups (true: the default set) lacks. */
static int client_attach_refusals(void *arg)
{
	CHECK(attach_egress_refused("cgroup_inet_ingress", "quota", "max_attachments") == 0,
	      "over max_attachments");
	CHECK(attach_egress_refused("cgroup_inet_sock_create", "policy-denied",
				    "attach.cgroups: cgroup_inet_sock_create") == 0,
	      "an attach type not granted");
	/* Not a cgroup's attach type: no policy could list it in attach.cgroups. */
	CHECK(attach_egress_refused("xdp", "invalid-request", NULL) == 0, "xdp to a cgroup");
	return 0;
}

static void test_attachment_quota(void **state)
{
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "eg", NULL), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("device"), "--name", "dev", NULL), 0);
	assert_int_equal(ctl(&owner, "attach", "dev/allow_null", "cgroup", cg_owned, "--pin", NULL),
			 0);
	assert_int_equal(
		ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned, "--pin", NULL), 0);
	assert_int_equal(ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned,
			     "--attach-type", "cgroup_inet_ingress", "--pin", NULL),
			 1);
	assert_int_equal(harness_as_user(&owner, client_attach_refusals, NULL), 0);
	assert_int_equal(ctl(&owner, "unload", "dev", NULL), 0);
	/* Unload ended dev's link: room again. */
	assert_int_equal(ctl(&owner, "attach", "eg/count_egress", "cgroup", cg_owned,
			     "--attach-type", "cgroup_inet_ingress", "--pin", NULL),
			 0);
	assert_int_equal(ctl(&owner, "unload", "eg", NULL), 0);
}

/* A socket filter test-run with packet data from a file; output data comes back. */
static void test_test_run_data(void **state)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/packet", H.dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 64; i++)
		fputc(i, f);
	fclose(f);
	chmod(path, 0644);
	assert_int_equal(ctl(&owner, "load", harness_object("counter"), "--name", "ctr", NULL), 0);
	assert_int_equal(ctl(&owner, "-j", "test-run", "ctr/count_packets", "--data-in", path,
			     "--repeat", "3", NULL),
			 0);
	assert_non_null(strstr(out, "\"retval\""));
	/* The kernel hands the packet back past the Ethernet header it consumed. */
	assert_non_null(strstr(out, "0e0f10111213"));
	assert_int_equal(ctl(&owner, "unload", "ctr", NULL), 0);
}

static void test_memory_and_program_quotas(void **state)
{
	assert_int_equal(
		harness_as_user(&quota_mem, client_quota_second_load, "max_map_memory_bytes"), 0);
	assert_int_equal(ctl(&quota_mem, "unload", "first", NULL), 0);
	assert_int_equal(
		harness_as_user(&quota_progs, client_quota_second_load, "max_loaded_programs"), 0);
	assert_int_equal(ctl(&quota_progs, "unload", "first", NULL), 0);
}

/*
 * Loads by one uid at once against max_loaded_programs 3: each child loads
 * the counter (one program), says 'y' (loaded, fds held) or 'q' (refused
 * over the quota) and holds its fds until the parent says go.
 */
#define RACE_LOADERS 6
#define RACE_LIMIT 3

struct race_pipes {
	int result[2], go[2];
};

static int client_race_load(void *arg)
{
	struct race_pipes *p = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("counter", NULL, NULL, 0, &res, &err);
	char said = k == 0 ? 'y' : err && strcmp(err->code, "quota") == 0 ? 'q' : 'e', c;

	if (said == 'e')
		fprintf(stderr, "race load: %d %s\n", k, err ? err->message : "");
	CHECK(said != 'q' || harness_denial_has_key(err, "max_loaded_programs"), "its key");
	bpfbroker_error_free(err);
	close(p->result[0]);
	close(p->go[1]);
	CHECK(write(p->result[1], &said, 1) == 1, "write: %m");
	/* Held until every loader has answered. */
	(void)!read(p->go[0], &c, 1);
	bpfbroker_result_free(res);
	return said == 'e';
}

/* Right after the racers closed theirs: as many loads as the limit, all held at once. */
static int client_load_to_limit(void *arg)
{
	struct bpfbroker_result *res[RACE_LIMIT + 1] = {};
	struct bpfbroker_error *err = NULL;
	int k;

	for (int i = 0; i < RACE_LIMIT; i++) {
		k = lib_load("counter", NULL, NULL, 0, &res[i], &err);
		CHECK(k == 0, "load %d of %d after the others closed theirs: %s", i + 1, RACE_LIMIT,
		      err ? err->message : strerror(-k));
	}
	k = lib_load("counter", NULL, NULL, 0, &res[RACE_LIMIT], &err);
	CHECK(k < 0 && err && strcmp(err->code, "quota") == 0, "one over the limit: %d %s", k,
	      err ? err->message : "");
	bpfbroker_error_free(err);
	for (int i = 0; i <= RACE_LIMIT; i++)
		bpfbroker_result_free(res[i]);
	return 0;
}

/*
 * The quota check looks again (pruning what the kernel freed) before it
 * refuses: loads by one uid at once still stop at the limit, and what
 * clients closed stops counting at once.
 */
static void test_quota_concurrent_loads(void **state)
{
	struct race_pipes p;
	pid_t pids[RACE_LOADERS];
	int yes = 0, refused = 0;

	assert_int_equal(pipe2(p.result, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p.go, O_CLOEXEC), 0);
	for (int i = 0; i < RACE_LOADERS; i++) {
		pids[i] = harness_spawn_as(&quota_race, client_race_load, &p);
		assert_true(pids[i] > 0);
	}
	close(p.result[1]);
	close(p.go[0]);
	for (int i = 0; i < RACE_LOADERS; i++) {
		char c = 0;

		assert_int_equal(read(p.result[0], &c, 1), 1);
		yes += c == 'y';
		refused += c == 'q';
	}
	close(p.result[0]);
	/* A byte each, not EOF: harness_spawn_as()'s intermediate child holds the pipe too. */
	for (int i = 0; i < RACE_LOADERS; i++)
		assert_int_equal(write(p.go[1], "g", 1), 1);
	close(p.go[1]);
	for (int i = 0; i < RACE_LOADERS; i++)
		assert_int_equal(harness_reap(pids[i]), 0);
	assert_int_equal(yes, RACE_LIMIT);
	assert_int_equal(refused, RACE_LOADERS - RACE_LIMIT);
	assert_int_equal(harness_as_user(&quota_race, client_load_to_limit, NULL), 0);
}

/* --admin-group: its members may list and unload everyone's objects. */
static void test_admin_group(void **state)
{
	char arg[96];

	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "adm", NULL), 0);
	assert_int_not_equal(ctl(&member, "list", "--all", NULL), 0);
	snprintf(arg, sizeof(arg), "--admin-group=%s", share_group);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(arg), 0);
	assert_int_equal(ctl(&member, "list", "--all", NULL), 0);
	assert_non_null(strstr(out, "adm"));
	assert_int_not_equal(ctl(&nonmember, "list", "--all", NULL), 0);
	/* Admins may unload, but get no fds of others' objects. */
	assert_int_not_equal(ctl(&member, "map", "dump", "nobody/adm/config", NULL), 0);
	assert_int_equal(ctl(&member, "unload", "nobody/adm", NULL), 0);
	assert_int_not_equal(ctl(&owner, "show", "adm", NULL), 0);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
}

static int client_quota_messages(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = 0;

	for (int i = 0; i < 3 && k == 0; i++) {
		char name[8];

		snprintf(name, sizeof(name), "q%d", i);
		k = lib_load("counter", name, NULL, 0, &res, &err);
		if (k == 0)
			bpfbroker_result_free(res);
	}
	CHECK(k < 0 && err && strcmp(err->code, "quota") == 0 &&
		      strstr(err->message, "max_named_objects"),
	      "third named object: %d %s", k, err ? err->message : "");
	bpfbroker_error_free(err);
	return 0;
}

/* ---- restart safety ---- */

static int attached_link_count(const char *ref)
{
	const char *p = out;
	int n = 0;

	if (ctl(&owner, "-j", "show", ref, NULL) != 0)
		return -1;
	while ((p = strstr(p, "\"pinned\": true"))) {
		n++;
		p++;
	}
	return n;
}

static void test_restart_keeps_everything(void **state)
{
	char before[OUT_SIZE];

	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "persist", NULL),
			 0);
	assert_int_equal(
		ctl(&owner, "attach", "persist/count_egress", "cgroup", cg_owned, "--pin", NULL),
		0);
	assert_int_equal(ctl(&owner, "-j", "show", "persist", NULL), 0);
	snprintf(before, sizeof(before), "%s", out);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
	assert_int_equal(ctl(&owner, "-j", "show", "persist", NULL), 0);
	assert_string_equal(out, before);
	assert_int_equal(attached_link_count("persist"), 1);
	assert_int_equal(harness_in_cgroup(cg_owned, send_packets, NULL), 0);
	assert_int_equal(harness_as_user(&owner, client_quota_messages, NULL), 1 - 1);
	assert_int_equal(ctl(&owner, "unload", "q0", NULL), 0);
	assert_int_equal(ctl(&owner, "unload", "q1", NULL), 0);
	assert_int_equal(ctl(&owner, "unload", "persist", NULL), 0);
}

/* Crash the daemon at a point, restart, and check what survived. */
static void crash_at(const char *point, const char *load_name, const char *unload_name)
{
	char arg[64];

	snprintf(arg, sizeof(arg), "--fault-inject=%s", point);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(arg), 0);
	if (load_name)
		ctl(&owner, "load", harness_object("egress"), "--name", load_name, NULL);
	if (unload_name)
		ctl(&owner, "unload", unload_name, NULL);
	assert_true(WIFSIGNALED(harness_wait_death()));
	assert_int_equal(harness_start(NULL), 0);
}

static void test_crash_recovery(void **state)
{
	char dir[512], cmd[600];

	/* Pinned, not committed: gone after the restart, pins and all. */
	crash_at("load-pinned", "crash1", NULL);
	assert_int_not_equal(ctl(&owner, "show", "crash1", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/%u/crash1", H.pin_root, UID_OWNER);
	assert_int_equal(access(dir, F_OK), -1);
	/* The name is free again. */
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "crash1", NULL),
			 0);
	assert_int_equal(ctl(&owner, "unload", "crash1", NULL), 0);

	/* Committed: the object exists after the restart and unloads. */
	crash_at("load-committed", "crash2", NULL);
	assert_int_equal(ctl(&owner, "show", "crash2", NULL), 0);

	/* Unload committed, pins not yet removed: gone, pins swept. */
	crash_at("unload-committed", NULL, "crash2");
	assert_int_not_equal(ctl(&owner, "show", "crash2", NULL), 0);
	snprintf(dir, sizeof(dir), "%s/%u/crash2", H.pin_root, UID_OWNER);
	assert_int_equal(access(dir, F_OK), -1);

	/* Metadata whose pins vanished (bpffs remounted) is dropped, not trusted. */
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "orphan", NULL),
			 0);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	snprintf(dir, sizeof(dir), "%s/%u/orphan", H.pin_root, UID_OWNER);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(harness_start(NULL), 0);
	assert_int_not_equal(ctl(&owner, "show", "orphan", NULL), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "orphan", NULL),
			 0);
	assert_int_equal(ctl(&owner, "unload", "orphan", NULL), 0);
}

/* ---- connection limits ---- */

/* Connect past the per-uid limit: the last one is told why and closed. */
static int client_too_many_connections(void *arg)
{
	int fds[3], extra;
	struct timeval tv = {.tv_sec = 5};
	char buf[512];
	ssize_t n;

	for (int i = 0; i < 3; i++) {
		fds[i] = harness_connect();
		CHECK(fds[i] >= 0, "connection %d: %m", i);
	}
	/* Each accepted before the next is tried. */
	usleep(100000);
	extra = harness_connect();
	CHECK(extra >= 0, "connect: %m");
	setsockopt(extra, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(extra, buf, sizeof(buf) - 1, 0);
	CHECK(n > 0, "no error for the 4th connection");
	buf[n] = '\0';
	CHECK(strstr(buf, "\"busy\"") && strstr(buf, "too many connections"), "got %s", buf);
	CHECK(recv(extra, buf, sizeof(buf), 0) == 0, "4th connection not closed");
	close(extra);
	/* Closing those makes room again. */
	{
		struct bpfbroker *b;
		char *json = NULL;

		for (int i = 0; i < 3; i++)
			close(fds[i]);
		usleep(100000);
		CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect after closing: %m");
		CHECK(bpfbroker_policy(b, &json, NULL) == 0, "policy after closing");
		free(json);
		bpfbroker_close(b);
	}
	return 0;
}

static void test_connection_limits(void **state)
{
	int held[2];

	/* Per user: one over its share is refused, told why. */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start("--max-connections-per-uid 3"), 0);
	assert_int_equal(harness_as_user(&owner, client_too_many_connections, NULL), 0);
	assert_int_equal(ctl(&other, "list", NULL), 0);

	/* In total: with the daemon full, anyone else is refused until there is room. */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start("--max-connections 2"), 0);
	for (int i = 0; i < 2; i++)
		assert_true((held[i] = harness_connect()) >= 0);
	usleep(100000);
	assert_int_equal(ctl(&other, "list", NULL), 2);
	for (int i = 0; i < 2; i++)
		close(held[i]);
	usleep(100000);
	assert_int_equal(ctl(&other, "list", NULL), 0);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
}

/* ---- the writable-bpffs guard ---- */

static char bpffs_dir[300];
static char saved_unpriv_bpf[16]; /* to restore in teardown if a test stops half-way */

/* Write /proc/sys/PATH (saving the old value first, if saved is given). */
static int sysctl_set(const char *path, const char *value, char *saved, size_t size)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/sys/%s", path);
	if (saved) {
		f = fopen(p, "re");
		if (!f || !fgets(saved, (int)size, f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		saved[strcspn(saved, "\n")] = '\0';
	}
	f = fopen(p, "we");
	if (!f)
		return -1;
	if (fputs(value, f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int client_pin_and_reopen(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	char pin[400];
	uint32_t key = 0;
	uint64_t v = 7;
	int k = harness_fds("wb", &res, &err), fd;

	CHECK(k == 0, "fds: %s", err ? err->message : strerror(-k));
	m = bpfbroker_result_map(res, "counts");
	CHECK(m && m->fd >= 0 && m->access == BPFBROKER_ACCESS_RO, "counts not ro");
	CHECK(bpf_map_update_elem(m->fd, &key, &v, BPF_ANY) < 0, "ro fd writable");
	/* The kernel's hole the guard is for: pin the ro fd, get it back read-write. */
	snprintf(pin, sizeof(pin), "%s/stolen", bpffs_dir);
	CHECK(bpf_obj_pin(m->fd, pin) == 0, "pin into the world-writable bpffs: %m");
	fd = bpf_obj_get(pin);
	CHECK(fd >= 0, "obj_get: %m");
	CHECK(bpf_map_update_elem(fd, &key, &v, BPF_ANY) == 0,
	      "the reopened pin was not writable: the hole is closed? %m");
	close(fd);
	unlink(pin);
	bpfbroker_result_free(res);
	return 0;
}

static void test_writable_bpffs_guard(void **state)
{
	snprintf(bpffs_dir, sizeof(bpffs_dir), "%s/bpf", H.dir);
	assert_int_equal(mkdir(bpffs_dir, 0755), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "wb", NULL), 0);
	/* Without mode= a bpffs is 1777: anyone can pin there. */
	assert_int_equal(mount("bpf", bpffs_dir, "bpf", 0, NULL), 0);

	/* bpfctl doctor sees it too, from the user's side. */
	assert_int_equal(ctl(&owner, "doctor", NULL), 1);
	assert_non_null(strstr(out, bpffs_dir));
	assert_non_null(strstr(out, "writable by users other than root"));
	assert_int_equal(ctl(&owner, "-j", "doctor", NULL), 1);
	assert_non_null(strstr(out, "\"checks\""));

	/* Read-only and write-only fds are refused, naming the mount and the fix. */
	assert_int_equal(ctl(&owner, "run", harness_object("counter"), "--", "/bin/true", NULL), 1);
	assert_int_equal(ctl(&owner, "-j", "run", "--name", "wb", "--", "/bin/true", NULL), 1);
	/* bpfctl map then has the broker do the operations, which hands out no fd. */
	assert_int_equal(ctl(&owner, "map", "dump", "wb/counts", NULL), 0);
	assert_int_equal(
		ctl(&owner, "map", "update", "wb/counts", "00000000", "0100000000000000", NULL), 1);
	/* Objects with only rw maps (here: none at all) are fine: nothing to gain. */
	assert_int_equal(ctl(&owner, "run", harness_object("device"), "--", "/bin/true", NULL), 0);

	/* What the guard prevents, shown with the administrator's opt-out. */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start("--allow-writable-bpffs"), 0);
	assert_int_equal(harness_as_user(&owner, client_pin_and_reopen, NULL), 0);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);

	/* Remounted safely (here: gone), everything is handed out again. */
	assert_int_equal(umount(bpffs_dir), 0);
	assert_int_equal(ctl(&owner, "map", "dump", "wb/counts", NULL), 0);

	/*
	 * With unprivileged BPF on, anyone's own socket filter can write a map it
	 * holds an ro fd of (the verifier ignores fd modes): the same fail-closed.
	 */
	if (sysctl_set("kernel/unprivileged_bpf_disabled", "0", saved_unpriv_bpf,
		       sizeof(saved_unpriv_bpf)) == 0) {
		assert_int_equal(ctl(&owner, "run", "--name", "wb", "--", "/bin/true", NULL), 1);
		assert_int_equal(
			sysctl_set("kernel/unprivileged_bpf_disabled", saved_unpriv_bpf, NULL, 0),
			0);
		saved_unpriv_bpf[0] = '\0';
		assert_int_equal(ctl(&owner, "run", "--name", "wb", "--", "/bin/true", NULL), 0);
	}
	assert_int_equal(ctl(&owner, "unload", "wb", NULL), 0);
	rmdir(bpffs_dir);
}

/* ---- the audit trail ---- */

/* The first audit line with all of the fields given (NULL-terminated), or NULL. */
static char *audit_find(const char *log, ...)
{
	static char line[2048];
	FILE *f = fopen(log, "re");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		va_list ap;
		const char *want;
		bool all = strstr(line, "audit:") != NULL;

		va_start(ap, log);
		while (all && (want = va_arg(ap, const char *)))
			all = strstr(line, want) != NULL;
		va_end(ap);
		if (all) {
			fclose(f);
			return line;
		}
	}
	fclose(f);
	return NULL;
}

static void test_audit(void **state)
{
	char log[400], uid[32], sha[80], cmd[600];
	FILE *p;

	snprintf(log, sizeof(log), "%s/daemon.log", H.dir);
	H.daemon_log = log;
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);

	assert_int_equal(ctl(&owner, "load", harness_object("egress"), "--name", "au", NULL), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("mapinmap"), "--name", "au2", NULL), 1);
	assert_int_equal(
		ctl(&owner, "attach", "au/count_egress", "cgroup", cg_owned, "--pin", NULL), 0);
	assert_int_not_equal(
		ctl(&owner, "attach", "au/count_egress", "cgroup", cg_root_owned, "--pin", NULL),
		0);
	assert_int_equal(ctl(&owner, "detach", "au/count_egress", NULL), 0);
	assert_int_equal(ctl(&owner, "unload", "au", NULL), 0);
	kill(H.daemon, SIGHUP);
	usleep(200000);

	snprintf(uid, sizeof(uid), "uid=%u", UID_OWNER);
	snprintf(cmd, sizeof(cmd), "sha256sum %s", harness_object("egress"));
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(sha, 65, p));
	pclose(p);
	/* Each decision, with who, what (by content), which programs and helper classes. */
	assert_non_null(audit_find(log, "event=load", "decision=allow", uid, sha,
				   "programs=count_egress:cgroup_skb", "helper_classes=base",
				   "object=65534/au", NULL));
	assert_non_null(audit_find(log, "event=load", "decision=deny", uid, "map of maps", NULL));
	assert_non_null(audit_find(log, "event=attach", "decision=allow", uid,
				   "object=65534/au/count_egress", "target=cgroup", NULL));
	assert_non_null(audit_find(log, "event=attach", "decision=deny", uid, "do not own", NULL));
	assert_non_null(audit_find(log, "event=detach", "decision=allow", uid, NULL));
	assert_non_null(
		audit_find(log, "event=unload", "decision=allow", uid, "object=65534/au", NULL));
	assert_non_null(audit_find(log, "event=policy-reload", "decision=allow", NULL));
	/* The pid is the client's, as the kernel told the broker. */
	assert_non_null(audit_find(log, "event=unload", "pid=", NULL));

	H.daemon_log = NULL;
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
}

/* ---- limits on what one client may take ---- */

static int client_slow_load_times_out(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("slow", NULL, NULL, 0, &res, &err);

	CHECK(k < 0 && err && strcmp(err->code, "timeout") == 0 &&
		      strstr(err->message, "verifier ran over"),
	      "slow load: %d %s", k, err ? err->message : "");
	bpfbroker_error_free(err);
	return 0;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct timed_request {
	bool test_run; /* a long test run of "hog", else a quick load */
	int pipe_w;
};

/* Run the request, then report when it finished (µs, CLOCK_MONOTONIC) through the pipe. */
static int client_timed_request(void *arg)
{
	const struct timed_request *t = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	uint64_t done;
	int k;

	if (t->test_run) {
		static const uint8_t packet[64];
		struct bpfbroker_test_run_opts o = {.sz = sizeof(o),
						    .object = "hog",
						    .program = "count_packets",
						    .data_in = packet,
						    .data_in_size = sizeof(packet),
						    .repeat = 1000000};
		struct bpfbroker_test_run_result *tr = NULL;
		struct bpfbroker *b;

		CHECK(connect_broker(&b) == 0, "connect");
		k = bpfbroker_test_run(b, &o, &tr, &err);
		bpfbroker_test_run_result_free(tr);
		bpfbroker_close(b);
	} else {
		k = lib_load("counter", NULL, NULL, 0, &res, &err);
		bpfbroker_result_free(res);
	}
	done = now_usec();
	CHECK(k == 0, "request: %s", err ? err->message : strerror(-k));
	CHECK(write(t->pipe_w, &done, sizeof(done)) == sizeof(done), "write: %m");
	return 0;
}

static void test_limits(void **state)
{
	struct bpfbroker *b;
	struct timed_request hog1 = {.test_run = true}, hog2 = {.test_run = true}, quick = {};
	uint64_t a1, a2, q;
	int p[3][2], status;
	pid_t pids[3];
	char buf[256];
	ssize_t n;

	/* The verifier is stopped at its limit, with a clear error; the daemon serves on. */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start("--verifier-timeout 0.02 --idle-timeout 1"), 0);
	assert_int_equal(harness_as_user(&owner, client_slow_load_times_out, NULL), 0);
	assert_int_equal(ctl(&owner, "list", NULL), 0);

	/* A connection that sends nothing is told so and dropped. */
	assert_int_equal(connect_broker(&b), 0);
	{
		char *reply = NULL;
		int *rfds = NULL;
		size_t n_rfds = 0;

		assert_int_equal(
			bpfbroker_call_raw(b, "{\"bpfbroker\":1,\"id\":1,\"method\":\"hello\"}",
					   NULL, 0, &reply, &rfds, &n_rfds),
			0);
		free(reply);
		free(rfds);
	}
	bpfbroker_close(b);
	{
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		struct timeval tv = {.tv_sec = 5};

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", H.socket);
		assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(s, buf, sizeof(buf) - 1, 0);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_non_null(strstr(buf, "idle"));
		assert_int_equal(recv(s, buf, sizeof(buf), 0), 0);
		close(s);
	}

	/*
	 * One user can't hold every worker: with 2 workers, the owner's two long
	 * test runs go one at a time, and another user's quick load goes in between.
	 */
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(NULL), 0);
	assert_int_equal(ctl(&owner, "load", harness_object("counter"), "--name", "hog", NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
	hog1.pipe_w = p[0][1];
	hog2.pipe_w = p[1][1];
	quick.pipe_w = p[2][1];
	pids[0] = harness_spawn_as(&owner, client_timed_request, &hog1);
	pids[1] = harness_spawn_as(&owner, client_timed_request, &hog2);
	usleep(30000);
	pids[2] = harness_spawn_as(&other, client_timed_request, &quick);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(p[i][1]);
	}
	assert_int_equal(read(p[0][0], &a1, sizeof(a1)), sizeof(a1));
	assert_int_equal(read(p[1][0], &a2, sizeof(a2)), sizeof(a2));
	assert_int_equal(read(p[2][0], &q, sizeof(q)), sizeof(q));
	for (int i = 0; i < 3; i++)
		close(p[i][0]);
	assert_true(q < a1 && q < a2);

	/* A policy reload lets a request already running finish (its worker isn't killed). */
	{
		int pr[2];
		pid_t pid;
		struct timed_request hog3 = {.test_run = true};

		assert_int_equal(pipe2(pr, O_CLOEXEC), 0);
		hog3.pipe_w = pr[1];
		pid = harness_spawn_as(&owner, client_timed_request, &hog3);
		usleep(50000);
		kill(H.daemon, SIGHUP);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(pr[1]);
		close(pr[0]);
		/* And the daemon serves on, with workers from the new spawner. */
		assert_int_equal(ctl(&owner, "list", NULL), 0);
	}
	assert_int_equal(ctl(&owner, "unload", "hog", NULL), 0);
}

/* ---- hostile requests ---- */

static int client_bad_requests(void *arg)
{
	static const char *const bad[] = {
		"{\"bpfbroker\":1,\"id\":1,\"method\":\"show\",\"params\":{\"object\":\"../x\"}}",
		"{\"bpfbroker\":1,\"id\":2,\"method\":\"show\",\"params\":{\"object\":\"-x\"}}",
		"{\"bpfbroker\":1,\"id\":3,\"method\":\"show\",\"params\":{}}",
		"{\"bpfbroker\":1,\"id\":4,\"method\":\"list\",\"params\":{\"bogus\":1}}",
		"{\"bpfbroker\":1,\"id\":5,\"method\":\"attach\",\"params\":{\"object\":\"x\","
		"\"program\":\"p\",\"target\":{\"type\":\"cgroup\",\"fd\":0}}}",
		"{\"bpfbroker\":1,\"id\":6,\"method\":\"test_run\",\"params\":{\"object\":\"x\","
		"\"program\":\"p\",\"data_in\":\"zz\"}}",
		"{\"bpfbroker\":1,\"id\":7,\"method\":\"detach\",\"params\":{\"object\":5}}",
		"{\"bpfbroker\":1,\"id\":8,\"method\":\"load\",\"params\":{\"name\":\"a/b\"}}",
		/* Decoded by the method table's decoders (proto/method.h) in the worker. */
		"{\"bpfbroker\":1,\"id\":9,\"method\":\"attach\",\"params\":{\"object\":\"x\","
		"\"program\":\"p\",\"target\":{\"type\":\"cgroup\",\"pidfd\":0}}}",
		"{\"bpfbroker\":1,\"id\":10,\"method\":\"attach\",\"params\":{\"object\":\"x\","
		"\"program\":\"p\",\"pin\":true,\"target\":{\"type\":\"uprobe\",\"fd\":0,"
		"\"pidfd\":0,\"offset\":0,\"semaphore\":\"s\",\"semaphore_offset\":8}}}",
		"{\"bpfbroker\":1,\"id\":11,\"method\":\"list\",\"params\":{\"limit\":0}}",
		"{\"bpfbroker\":1,\"id\":12,\"method\":\"map_insert\",\"params\":{\"object\":"
		"\"x\",\"map\":\"m\",\"key\":\"00\",\"fd\":9}}",
		"{\"bpfbroker\":1,\"id\":13,\"method\":\"policy\",\"params\":{\"x\":1}}",
		"{\"bpfbroker\":1,\"id\":14,\"method\":\"detach\",\"params\":{\"object\":\"x\","
		"\"program\":\"p\",\"link\":0}}",
	};
	struct bpfbroker *b;

	CHECK(connect_broker(&b) == 0, "connect");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;
		int k = bpfbroker_call_raw(b, bad[i], NULL, 0, &reply, &fds, &n_fds);

		CHECK(k >= 0 && reply && strstr(reply, "\"error\"") && n_fds == 0,
		      "request %zu: %d %s", i, k, reply ? reply : "");
		/* What the decoders refuse is refused as a bad request, never looked further into.
		 */
		CHECK(i < 8 || strstr(reply, "invalid-request"), "request %zu: %s", i, reply);
		free(reply);
		free(fds);
	}
	bpfbroker_close(b);
	return 0;
}

static void test_bad_requests(void **state)
{
	assert_int_equal(harness_as_user(&owner, client_bad_requests, NULL), 0);
	/* And the daemon serves on. */
	assert_int_equal(ctl(&owner, "list", NULL), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[8192];

	share_group = harness_find_group(&share_gid);
	if (!share_group)
		return -1;
	member.groups = &share_gid;
	member.n_groups = 1;
	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\", \"cgroup_skb\", "
		 "\"cgroup_device\", \"xdp\", \"sched_cls\"],"
		 "   \"helper_classes\": [\"base\"],"
		 "   \"maps\": [{\"name\": \"counts\", \"access\": \"ro\"},"
		 "            {\"name\": \"*\", \"access\": \"rw\"}],"
		 "   \"attach\": {\"cgroups\": true, \"interfaces\": [\"lo\"], "
		 "\"host_interfaces\": [\"lo\"]}},"
		 "  \"limits\": {\"max_named_objects\": 3, \"max_attachments\": 2}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"shared\": [{\"owner\": \"root\", \"object\": \"policy-*\", \"map\": "
		 "\"config\", \"access\": \"ro\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"raw_tracepoint\", \"tracepoint\"],"
		 "   \"helper_classes\": [\"base\"], \"maps\": [{\"name\": \"*\", \"access\": "
		 "\"rw\"}],"
		 "   \"attach\": {\"raw_tracepoints\": [\"sys_enter\"],"
		 "              \"tracepoints\": [\"sched:sched_process_fork\"]}}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"test_run_types\": [\"raw_tracepoint\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}],"
		 "   \"attach\": {\"raw_tracepoints\": [\"sys_enter\"]}}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		 "  \"limits\": {\"max_named_objects\": 2, \"max_loads_per_minute\": 4}},"
		 /* Limits combine as the largest over matching rules: one rule each. */
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		 "  \"limits\": {\"max_map_memory_bytes\": 80000}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		 "  \"limits\": {\"max_loaded_programs\": 1}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
		 "  \"limits\": {\"max_loaded_programs\": 3, \"max_loads_per_minute\": 1000}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\", \"cgroup_skb\"], "
		 "\"helper_classes\": [\"base\"], \"maps_of_maps\": true, \"pinning\": true,"
		 "   \"maps\": [{\"name\": \"counts\", \"access\": \"ro\"}, {\"name\": "
		 "\"shared_pin\", "
		 "\"access\": \"ro\"}, {\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"0\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\", \"cgroup_skb\"],"
		 "   \"helper_classes\": [\"base\"], \"maps\": [{\"name\": \"*\", \"access\": "
		 "\"rw\"}]}}"
		 "]}",
		 UID_OWNER, UID_OTHER, UID_MEMBER, UID_NONMEMBER, UID_TRACER, UID_TESTER, UID_QUOTA,
		 UID_QUOTA_MEM, UID_QUOTA_PROGS, UID_QUOTA_RACE, UID_NESTER);
	if (harness_write_policy("50-named.json", policy) < 0)
		return -1;
	if (cgroups_create() < 0) {
		fprintf(stderr, "cannot create test cgroups: %m\n");
		return -1;
	}
	harness_mark_kernel_objects();
	if (harness_start(NULL) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	int k;

	/* A failed guard test may leave its bpffs mounted, or the sysctl changed. */
	if (bpffs_dir[0])
		umount2(bpffs_dir, MNT_DETACH);
	if (saved_unpriv_bpf[0])
		sysctl_set("kernel/unprivileged_bpf_disabled", saved_unpriv_bpf, NULL, 0);
	k = harness_stop();

	if (cgroups_remove() < 0) {
		fprintf(stderr, "cannot remove the test cgroups: %m\n");
		k = -1;
	}
	if (k < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_cgroup_skb_egress),
		cmocka_unit_test(test_container_device),
		cmocka_unit_test(test_partial_delegation_denied),
		cmocka_unit_test(test_netdev_attach),
		cmocka_unit_test(test_tracing_attach),
		cmocka_unit_test(test_test_run_only),
		cmocka_unit_test(test_maps_of_maps_refused),
		cmocka_unit_test(test_map_of_maps_inserts),
		cmocka_unit_test(test_pinned_reuse_needs_write),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_sharing),
		cmocka_unit_test(test_quotas),
		cmocka_unit_test(test_memory_and_program_quotas),
		cmocka_unit_test(test_quota_concurrent_loads),
		cmocka_unit_test(test_attachment_quota),
		cmocka_unit_test(test_test_run_data),
		cmocka_unit_test(test_admin_group),
		cmocka_unit_test(test_restart_keeps_everything),
		cmocka_unit_test(test_crash_recovery),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_writable_bpffs_guard),
		cmocka_unit_test(test_connection_limits),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
