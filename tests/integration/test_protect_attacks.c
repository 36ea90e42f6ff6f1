/* SPDX-License-Identifier: MIT */
/*
 * Attacks on protected links (proto/NAMED.md, "Protected links") by a process
 * they confine: a container's own process, running as its owner's real uid
 * inside the protected cgroup, tries every other way through the broker to
 * remove, weaken or bypass its device and network rules; each must fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/bpf.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"

#define UID_A 60501 /* runs rootless containers; the attacker is its container's root */
#define CONFINES "confines your own cgroup"

static const struct user user_a = {UID_A, UID_A};
static const struct user root_user = {0, 0};

/* parent (root's) / a (A's) / ctr (A's container) / inner; a / ctr-x (A's, outside ctr) */
static char cg_parent[PATH_MAX], cg_a[PATH_MAX], cg_ctr[PATH_MAX], cg_inner[PATH_MAX],
	cg_ctr_x[PATH_MAX], insns_file[128], allow_all_file[128];
static uint32_t devs_link;

#define ctl harness_ctl
#define out harness_out

/* ---- helpers ---- */

/* fn(arg) as A, in a child that root first moved into cgroup dir. */
static int in_cgroup_as_a(const char *dir, int (*fn)(void *), void *arg)
{
	return harness_in_cgroup_as(dir, &user_a, fn, arg);
}

/*
 * A device no runtime allows by default that anyone may open (/dev/fuse's
 * numbers, a node of the test's): the device program (examples/device-allow,
 * with the runtimes' defaults, which allow /dev/full) denies it.
 */
static char fuse_node[128];

/* The container's rule (the runtimes' defaults only) still holds here. */
static int rule_holds(void *arg)
{
	int fd = open(fuse_node, O_RDONLY | O_CLOEXEC);

	(void)arg;
	CHECK(fd < 0 && errno == EPERM, "%s was not refused (fd %d, %m)", fuse_node, fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "/dev/null refused: %m");
	close(fd);
	return 0;
}

static int refused(int k, struct bpfbroker_error *e, const char *what, const char *code,
		   const char *text)
{
	CHECK(k < 0 && e && strcmp(e->code, code) == 0 && strstr(e->message, text), "%s: %d %s: %s",
	      what, k, e ? e->code : "-", e ? e->message : "no error");
	bpfbroker_error_free(e);
	return 0;
}

static int load_insns(struct bpfbroker *b, const char *file, const char *name,
		      struct bpfbroker_error **e)
{
	struct bpfbroker_insns_opts o = {.sz = sizeof(o),
					 .prog_type = "cgroup_device",
					 .attach_type = "cgroup_device",
					 .license = "GPL",
					 .name = name};
	struct bpfbroker_result *res = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC), k;

	if (fd < 0)
		return -errno;
	k = bpfbroker_load_insns_fd(b, fd, &o, &res, e);
	close(fd);
	bpfbroker_result_free(res);
	return k;
}

static int attach_cg(struct bpfbroker *b, const char *object, const char *program, const char *dir,
		     bool protect, uint32_t *id, struct bpfbroker_error **e)
{
	struct bpfbroker_attach_opts o = {.sz = sizeof(o),
					  .object = object,
					  .program = program,
					  .target_type = "cgroup",
					  .pin = true,
					  .protect = protect};
	int k, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	o.cgroup_fd = fd;
	k = bpfbroker_attach(b, &o, id, NULL, e);
	close(fd);
	return k;
}

/* The first link id "show NAME" reports (bpfctl -j), or 0. */
static uint32_t first_link(const char *name)
{
	const char *p;

	if (ctl(&user_a, "-j", "show", name, NULL) != 0)
		return 0;
	p = strstr(out, "\"links\"");
	p = p ? strstr(p, "\"id\":") : NULL;
	return p ? (uint32_t)strtoul(p + 5, NULL, 10) : 0;
}

/* The container's device rule, as its runtime's hook sets it: from outside, protected. */
static void devs_protected(void)
{
	(void)ctl(&user_a, "unload", "devs", NULL);
	assert_int_equal(ctl(&user_a, "load-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", "--name", "devs", NULL),
			 0);
	assert_int_equal(
		ctl(&user_a, "attach", "devs/prog", "cgroup", cg_ctr, "--pin", "--protect", NULL),
		0);
	devs_link = first_link("devs");
	assert_true(devs_link > 0);
	assert_int_equal(in_cgroup_as_a(cg_inner, rule_holds, NULL), 0);
}

static void devs_intact(void)
{
	assert_int_equal(first_link("devs"), devs_link);
	assert_int_equal(in_cgroup_as_a(cg_inner, rule_holds, NULL), 0);
}

/* ---- test_run and map_insert: the methods besides detach, unload and map writes ---- */

static int try_run_and_insert(void *arg)
{
	static const uint32_t key = 0;
	struct bpfbroker_test_run_opts t = {
		.sz = sizeof(t), .object = "eg", .program = "count_egress"};
	struct bpfbroker_test_run_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint8_t packet[64] = {0x45};
	int k, fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)arg;
	CHECK(fd >= 0 && bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	t.data_in = packet;
	t.data_in_size = sizeof(packet);
	k = bpfbroker_test_run(b, &t, &res, &e);
	CHECK(refused(k, e, "test_run", "policy-denied", CONFINES) == 0, "test_run");
	e = NULL;
	k = bpfbroker_map_insert(b, "eg", "config", &key, sizeof(key), fd, &e);
	CHECK(refused(k, e, "map_insert", "policy-denied", CONFINES) == 0, "map_insert");
	bpfbroker_test_run_result_free(res);
	bpfbroker_close(b);
	close(fd);
	return 0;
}

static void test_run_and_insert(void **state)
{
	(void)state;
	(void)ctl(&user_a, "unload", "eg", NULL);
	assert_int_equal(ctl(&user_a, "load", harness_object("egress"), "--name", "eg", NULL), 0);
	assert_int_equal(ctl(&user_a, "attach", "eg/count_egress", "cgroup", cg_ctr, "--pin",
			     "--protect", NULL),
			 0);
	assert_int_equal(in_cgroup_as_a(cg_inner, try_run_and_insert, NULL), 0);
	assert_int_equal(ctl(&user_a, "unload", "eg", NULL), 0);
}

/*
 * ---- maps pinned by name ----
 * A map pinned by name is the user's, not the object's: any load of theirs
 * that names it reuses it, and that load's map is then the protected
 * object's. From inside, a second object naming the map would write it
 * through its own (unprotected) name. So such objects cannot be protected.
 */
static int write_through_own_object(void *arg)
{
	static const uint32_t key = 0;
	static const uint64_t open_all = 1;
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "evil"};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	k = bpfbroker_load_file(b, harness_object("protect_pinned"), &o, &res, &e);
	if (k == 0)
		k = bpfbroker_map_open(b, "evil", "verdict", &h, &e);
	if (k == 0)
		k = bpfbroker_map_update_elem(h, &key, &open_all, 0, &e);
	bpfbroker_map_close(h);
	bpfbroker_result_free(res);
	bpfbroker_error_free(e);
	bpfbroker_close(b);
	return k == 0 ? 0 : 1;
}

/* As the owner's hook, outside: 0 when protecting pg is refused for its pinned map. */
static int protect_pg(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint32_t id = 0;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = attach_cg(b, "pg", "filter_egress", cg_ctr, true, &id, &e);
	bpfbroker_close(b);
	CHECK(refused(k, e, "protect pg", "policy-denied", "is pinned by name") == 0, "protect");
	return 0;
}

static void test_pinned_map(void **state)
{
	(void)state;
	(void)ctl(&user_a, "unload", "pg", NULL);
	assert_int_equal(
		ctl(&user_a, "load", harness_object("protect_pinned"), "--name", "pg", NULL), 0);
	int refused = harness_as_user(&user_a, protect_pg, NULL);

	if (refused != 0 && first_link("pg") != 0) {
		/* Protected anyway: then the write from inside must not reach pg's map. */
		int wrote = in_cgroup_as_a(cg_inner, write_through_own_object, NULL) == 0;

		(void)ctl(&user_a, "unload", "evil", NULL);
		(void)ctl(&user_a, "unload", "pg", NULL);
		fail_msg("pg's rule, a map pinned by name, was protected, and a process inside %s",
			 wrote ? "rewrote it through an object of its own"
			       : "could not rewrite it");
	}
	assert_int_equal(first_link("pg"), 0);
	/* Refused for the reason it must be (protect_pg checks the code and message). */
	assert_int_equal(refused, 0);
	assert_int_equal(ctl(&user_a, "unload", "pg", NULL), 0);
}

/*
 * ---- one's own programs ----
 * Inside, the container's root may load and attach device programs of its
 * own to its cgroups: a cgroup's programs and its ancestors' all run and all
 * must allow, so an allow-all one adds nothing. Its own objects' detach
 * does not reach the protected link by id.
 */
static int try_own_programs(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint32_t id = 0, *ids = NULL;
	size_t n = 0;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	(void)bpfbroker_unload(b, "mine", NULL);
	k = load_insns(b, allow_all_file, "mine", &e);
	CHECK(k == 0, "load: %d %s", k, e ? e->message : "");
	k = attach_cg(b, "mine", "prog", cg_inner, false, &id, &e);
	CHECK(k == 0, "attach below: %d %s", k, e ? e->message : "");
	k = attach_cg(b, "mine", "prog", cg_ctr, false, &id, &e);
	CHECK(k == 0, "attach beside: %d %s", k, e ? e->message : "");
	CHECK(rule_holds(NULL) == 0, "an allow-all program of its own undid the rule");
	k = bpfbroker_detach(b, "mine", "prog", devs_link, &ids, &n, &e);
	CHECK(refused(k, e, "detach by another's link id", "not-found", "no link") == 0,
	      "detach by id");
	k = bpfbroker_unload(b, "mine", NULL);
	CHECK(k == 0, "unload mine: %d", k);
	bpfbroker_close(b);
	free(ids);
	return rule_holds(NULL);
}

static void test_own_programs(void **state)
{
	(void)state;
	devs_protected();
	assert_int_equal(in_cgroup_as_a(cg_inner, try_own_programs, NULL), 0);
	devs_intact();
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
}

/*
 * ---- protecting from inside ----
 * A protected link confines whoever is in its cgroup. From inside, a
 * protect on the parent cgroup (which its owner also owns) would confine the
 * owner's own processes there: a rule the owner could never remove again
 * (only root), a container reaching out. A caller may protect only cgroups
 * it is not in itself.
 */
static int try_protect_around_self(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint32_t id = 0;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	(void)bpfbroker_unload(b, "trap", NULL);
	k = load_insns(b, insns_file, "trap", &e);
	CHECK(k == 0, "load: %d %s", k, e ? e->message : "");
	k = attach_cg(b, "trap", "prog", cg_a, true, &id, &e);
	CHECK(refused(k, e, "protect the parent", "policy-denied", "you are in it") == 0, "parent");
	e = NULL;
	k = attach_cg(b, "trap", "prog", cg_ctr, true, &id, &e);
	CHECK(refused(k, e, "protect its own", "policy-denied", "you are in it") == 0, "own");
	/* Unprotected, it may: the owner can detach that from anywhere. */
	k = attach_cg(b, "trap", "prog", cg_a, false, &id, &e);
	CHECK(k == 0, "attach: %d %s", k, e ? e->message : "");
	bpfbroker_close(b);
	return 0;
}

/* The owner, in its own cgroup a (its session, its runtime), removes what the container made. */
static int owner_unloads_trap(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	(void)arg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_unload(b, "trap", &e);
	CHECK(k == 0, "unload trap: %d %s", k, e ? e->message : "");
	bpfbroker_close(b);
	return 0;
}

static void test_protect_around_self(void **state)
{
	(void)state;
	assert_int_equal(in_cgroup_as_a(cg_ctr, try_protect_around_self, NULL), 0);
	assert_int_equal(in_cgroup_as_a(cg_a, owner_unloads_trap, NULL), 0);
}

/*
 * ---- namespaces ----
 * Inside, the container's root makes its own user, cgroup and mount
 * namespaces (its /proc/self/cgroup then says "/") and hides the cgroup tree
 * under a tmpfs: the broker reads the path in its own namespaces, and walks
 * its own mount.
 */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), k;

	if (fd < 0)
		return -errno;
	k = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -errno;
	close(fd);
	return k;
}

static int try_from_namespaces(void *arg)
{
	char root[PATH_MAX], self[256] = "";
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k, fd;

	(void)arg;
	CHECK(harness_cgroup_root(root, sizeof(root)) == 0, "cgroup root");
	/* Dropping to A made it undumpable, and its /proc files root's. */
	CHECK(prctl(PR_SET_DUMPABLE, 1) == 0, "dumpable: %m");
	CHECK(unshare(CLONE_NEWUSER) == 0, "unshare user: %m");
	CHECK(write_file("/proc/self/setgroups", "deny") == 0 &&
		      write_file("/proc/self/uid_map", "0 60501 1") == 0 &&
		      write_file("/proc/self/gid_map", "0 60501 1") == 0,
	      "maps: %m");
	CHECK(unshare(CLONE_NEWCGROUP | CLONE_NEWNS) == 0, "unshare cgroup, mount: %m");
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, "private: %m");
	CHECK(mount("tmpfs", root, "tmpfs", 0, NULL) == 0, "tmpfs on %s: %m", root);
	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, self, sizeof(self) - 1) > 0, "read cgroup: %m");
	close(fd);
	CHECK(strstr(self, "0::/\n"), "not at its namespace's root: %s", self);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_detach(b, "devs", "prog", 0, NULL, NULL, &e);
	CHECK(refused(k, e, "detach", "policy-denied", CONFINES) == 0, "detach");
	e = NULL;
	k = bpfbroker_unload(b, "devs", &e);
	CHECK(refused(k, e, "unload", "policy-denied", CONFINES) == 0, "unload");
	bpfbroker_close(b);
	return rule_holds(NULL);
}

static void test_namespaces(void **state)
{
	(void)state;
	devs_protected();
	assert_int_equal(in_cgroup_as_a(cg_inner, try_from_namespaces, NULL), 0);
	devs_intact();
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
}

/*
 * ---- the accept-time read, raced ----
 * The daemon stopped, a process inside connects (the connection waits in the
 * backlog), hands the socket to a child and exits; root then gives its pid
 * to a process outside (ctr-x). When the daemon accepts, /proc/PID/cgroup is
 * the outsider's: only the connecting process's pidfd, dead, tells. The
 * child, inside, must still be confined.
 */
static const char detach_req[] = "{\"bpfbroker\":1,\"id\":1,\"method\":\"detach\",\"params\":"
				 "{\"object\":\"devs\",\"program\":\"prog\"}}";

static int join_cgroup(const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return write_file(path, "0");
}

static int become_a(void)
{
	gid_t g = UID_A;

	return setgroups(1, &g) == 0 && setresgid(UID_A, UID_A, UID_A) == 0 &&
			       setresuid(UID_A, UID_A, UID_A) == 0
		       ? 0
		       : -errno;
}

/* The child holding the socket: waits for go, asks for the detach, exits 0 if refused. */
static void holder(int sock, int go)
{
	char reply[4096] = "", c;
	struct pollfd p = {.fd = sock, .events = POLLIN};
	ssize_t n;

	if (read(go, &c, 1) != 1 || send(sock, detach_req, strlen(detach_req), MSG_NOSIGNAL) < 0 ||
	    poll(&p, 1, 20000) != 1)
		_exit(2);
	n = recv(sock, reply, sizeof(reply) - 1, 0);
	if (n <= 0)
		_exit(3);
	reply[n] = '\0';
	if (!strstr(reply, "policy-denied")) {
		fprintf(stderr, "the detach was not refused: %s\n", reply);
		_exit(1);
	}
	_exit(0);
}

static void test_accept_race(void **state)
{
	int go[2], pids[2];
	pid_t connector, child = -1, outsider = -1;
	bool reused = false;
	int status;

	(void)state;
	devs_protected();
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pids, O_CLOEXEC), 0);
	assert_int_equal(kill(H.daemon, SIGSTOP), 0);
	connector = fork();
	assert_true(connector >= 0);
	if (connector == 0) {
		int sock;
		pid_t h;

		if (join_cgroup(cg_inner) < 0 || become_a() < 0)
			_exit(10);
		sock = harness_connect();
		if (sock < 0)
			_exit(11);
		h = fork();
		if (h == 0)
			holder(sock, go[0]);
		if (h < 0 || write(pids[1], &h, sizeof(h)) != sizeof(h))
			_exit(12);
		_exit(0);
	}
	assert_int_equal(waitpid(connector, &status, 0), connector);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(read(pids[0], &child, sizeof(child)), sizeof(child));
	/* The connector's pid, given to a process outside (others fork too: a few tries). */
	for (int i = 0; i < 50 && !reused; i++) {
		char last[32];

		snprintf(last, sizeof(last), "%d", (int)connector - 1);
		if (write_file("/proc/sys/kernel/ns_last_pid", last) < 0)
			break;
		outsider = fork();
		if (outsider == 0) {
			if (join_cgroup(cg_ctr_x) < 0 || become_a() < 0)
				_exit(10);
			pause();
			_exit(0);
		}
		reused = outsider == connector;
		if (!reused) {
			kill(outsider, SIGKILL);
			waitpid(outsider, NULL, 0);
			outsider = -1;
		}
	}
	if (!reused)
		fprintf(stderr, "note: pid %d was not reused; the race is tested without it\n",
			(int)connector);
	assert_int_equal(kill(H.daemon, SIGCONT), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	if (outsider > 0) {
		kill(outsider, SIGKILL);
		waitpid(outsider, NULL, 0);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	close(go[0]);
	close(go[1]);
	close(pids[0]);
	close(pids[1]);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	devs_intact();
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
}

/* ---- setup ---- */

static int cgroups_create(void)
{
	static const struct {
		const char *rel;
		uid_t owner;
		char *path;
	} cg[] = {
		{"", 0, cg_parent},
		{"/a", UID_A, cg_a},
		{"/a/ctr", UID_A, cg_ctr},
		{"/a/ctr/inner", UID_A, cg_inner},
		{"/a/ctr-x", UID_A, cg_ctr_x},
	};
	char rel[160];

	for (size_t i = 0; i < sizeof(cg) / sizeof(cg[0]); i++) {
		snprintf(rel, sizeof(rel), "bpfbroker-test-attacks-%d%s", (int)getpid(), cg[i].rel);
		if (harness_cgroup_make(rel, cg[i].owner, cg[i].path, PATH_MAX) < 0)
			return -1;
	}
	return 0;
}

/* r0 = 1; exit: allows every device. */
static int write_allow_all(void)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = open(allow_all_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), k;

	if (fd < 0)
		return -errno;
	k = write(fd, insns, sizeof(insns)) == (ssize_t)sizeof(insns) ? 0 : -EIO;
	close(fd);
	return k;
}

static int setup(void **state)
{
	char exe[512];
	char *argv[] = {exe, "--dump", insns_file, NULL};

	(void)state;
	if (harness_init() < 0)
		return -1;
	snprintf(insns_file, sizeof(insns_file), "%s/device.insns", H.dir);
	snprintf(fuse_node, sizeof(fuse_node), "%s/fuse", H.dir);
	if (mknod(fuse_node, S_IFCHR | 0666, makedev(10, 229)) < 0 || chmod(fuse_node, 0666) < 0)
		return -1;
	snprintf(allow_all_file, sizeof(allow_all_file), "%s/allow-all.insns", H.dir);
	snprintf(exe, sizeof(exe), "%s/examples/device-allow", H.build_dir);
	if (harness_exec_as(&root_user, argv) != 0 || chmod(insns_file, 0644) < 0 ||
	    write_allow_all() < 0)
		return -1;
	if (harness_write_policy(
		    "50-attacks.json",
		    "{\"rules\": [{\"match\": {\"uids\": [\"60501\"]},"
		    " \"allow\": {\"program_types\": [\"cgroup_device\", \"cgroup_skb\"],"
		    "  \"helper_classes\": [\"base\"], \"pinning\": true,"
		    "  \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}],"
		    "  \"attach\": {\"cgroups\": [\"cgroup_device\","
		    "   \"cgroup_inet_egress\"]}}}]}") < 0)
		return -1;
	if (cgroups_create() < 0) {
		fprintf(stderr, "cannot create test cgroups: %m\n");
		harness_cgroups_remove();
		return -1;
	}
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_and_insert), cmocka_unit_test(test_pinned_map),
		cmocka_unit_test(test_own_programs),   cmocka_unit_test(test_protect_around_self),
		cmocka_unit_test(test_namespaces),     cmocka_unit_test(test_accept_race),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
