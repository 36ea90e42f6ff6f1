/* SPDX-License-Identifier: MIT */
/*
 * Protected links and the cgroup checks for rootless containers, as real
 * uids in real delegated cgroups: a device program attached with "protect"
 * to a container's cgroup cannot be detached, unloaded or replaced by a
 * process inside that cgroup (or below it), even running as the owner's
 * uid, as a single-mapping container's root does; the owner outside it can.
 * And what keeps containers apart: no attaching to the parent of a delegated
 * cgroup or to another user's, nested cgroups of one's own, nothing of
 * another user's objects, nothing for an unlisted subordinate uid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "proto/proto.h"
#include "harness_client.h"

#define UID_A 60501 /* runs rootless containers */
#define UID_B 60502 /* another user who does */
#define UID_A_SUB 165536 /* one of A's subordinate uids: a container's mapped uid, no policy */
#define CONFINES "confines your own cgroup"

static const struct user user_a = {UID_A, UID_A};
static const struct user user_b = {UID_B, UID_B};
static const struct user user_a_sub = {UID_A_SUB, UID_A_SUB};
static const struct user root_user = {0, 0};

/*
 * parent (root's) / a (A's) / ctr (A's container) / inner (a cgroup inside it)
 *                  / a / ctr-x (A's, a name that starts like ctr's)
 *                  / b (B's)
 */
static char cg_parent[PATH_MAX], cg_a[PATH_MAX], cg_ctr[PATH_MAX], cg_inner[PATH_MAX],
	cg_ctr_x[PATH_MAX], cg_b[PATH_MAX], insns_file[128];

#define ctl harness_ctl
#define out harness_out

/* ---- processes ---- */

#define in_cgroup_as harness_in_cgroup_as

/*
 * A device no runtime allows by default that anyone may open (/dev/fuse's
 * numbers, mode 0666): examples/device-allow's program adds the runtimes'
 * default rules, which allow every device the host lets anyone open.
 */
static char fuse_node[128];

/* arg non-NULL: the device program (null and zero, and the runtimes' defaults) holds here. */
static int open_devices(void *arg)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "/dev/null refused: %m");
	close(fd);
	fd = open(fuse_node, O_RDONLY | O_CLOEXEC);
	if (arg)
		CHECK(fd < 0 && errno == EPERM, "%s was not refused (fd %d, %m)", fuse_node, fd);
	else
		CHECK(fd >= 0, "%s refused without a device program: %m", fuse_node);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int expect_refusal(int k, struct bpfbroker_error *e, const char *what, const char *code,
			  const char *text)
{
	CHECK(k < 0 && e && strcmp(e->code, code) == 0 && strstr(e->message, text), "%s: %d %s: %s",
	      what, k, e ? e->code : "-", e ? e->message : "no error");
	bpfbroker_error_free(e);
	return 0;
}

/* A device program as raw instructions, for a load as NAME. */
static int load_devices(struct bpfbroker *b, const char *name, struct bpfbroker_error **e)
{
	struct bpfbroker_insns_opts o = {.sz = sizeof(o),
					 .prog_type = "cgroup_device",
					 .attach_type = "cgroup_device",
					 .license = "GPL",
					 .name = name};
	struct bpfbroker_result *res = NULL;
	int fd = open(insns_file, O_RDONLY | O_CLOEXEC), k;

	if (fd < 0)
		return -errno;
	k = bpfbroker_load_insns_fd(b, fd, &o, &res, e);
	close(fd);
	bpfbroker_result_free(res);
	return k;
}

/*
 * Inside the protected cgroup, as its owner's uid: every way to undo the
 * link is refused, each with its reason, and the rule still holds after.
 */
static int try_undo(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint32_t *ids = NULL;
	size_t n = 0;
	int k;

	CHECK(open_devices("held") == 0, "not held before");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_detach(b, "devs", "prog", 0, &ids, &n, &e);
	CHECK(expect_refusal(k, e, "detach", "policy-denied", CONFINES) == 0, "detach");
	e = NULL;
	k = bpfbroker_detach(b, "devs", "prog", *(uint32_t *)arg, &ids, &n, &e);
	CHECK(expect_refusal(k, e, "detach link", "policy-denied", CONFINES) == 0, "detach link");
	e = NULL;
	k = bpfbroker_unload(b, "devs", &e);
	CHECK(expect_refusal(k, e, "unload", "policy-denied", CONFINES) == 0, "unload");
	e = NULL;
	/* Replacing it needs the name, which stays taken. */
	k = load_devices(b, "devs", &e);
	CHECK(expect_refusal(k, e, "load", "exists", "devs") == 0, "load");
	e = NULL;
	k = bpfbroker_unload(b, "60501/devs", &e);
	CHECK(expect_refusal(k, e, "unload by owner/name", "policy-denied", CONFINES) == 0,
	      "unload by owner/name");
	bpfbroker_close(b);
	free(ids);
	return open_devices("held");
}

/* Outside the protected cgroup, as the owner: detach works. */
static int detach_all(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint32_t *ids = NULL;
	size_t n = 0;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_detach(b, "devs", "prog", 0, &ids, &n, &e);
	CHECK(k == 0 && n == 1, "detach: %d %s", k, e ? e->message : "");
	bpfbroker_close(b);
	free(ids);
	return 0;
}

/* The link id of devs/prog as show reports it (bpfctl -j). */
static uint32_t link_of_devs(void)
{
	const char *p;

	if (ctl(&user_a, "-j", "show", "devs", NULL) != 0)
		return 0;
	p = strstr(out, "\"links\"");
	p = p ? strstr(p, "\"id\":") : NULL;
	return p ? (uint32_t)strtoul(p + 5, NULL, 10) : 0;
}

/* ---- protected links ---- */

static void attach_protected(void)
{
	assert_int_equal(
		ctl(&user_a, "attach", "devs/prog", "cgroup", cg_ctr, "--pin", "--protect", NULL),
		0);
}

static void test_protect(void **state)
{
	uint32_t link;

	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, NULL), 0);
	assert_int_equal(ctl(&user_a, "load-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", "--name", "devs", NULL),
			 0);
	/* The runtime (the hook) runs as A outside the container's cgroup. */
	attach_protected();
	link = link_of_devs();
	assert_true(link > 0);
	assert_int_equal(ctl(&user_a, "-j", "show", "devs", NULL), 0);
	assert_non_null(strstr(out, "\"protected\": true"));
	/* The container's processes, in its cgroup and below, as A: nothing undoes it. */
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, try_undo, &link), 0);
	assert_int_equal(in_cgroup_as(cg_inner, &user_a, try_undo, &link), 0);
	assert_int_equal(in_cgroup_as(cg_inner, &user_a, open_devices, "held"), 0);
	/* A in a sibling whose name starts with the container's is outside it: it may. */
	assert_int_equal(in_cgroup_as(cg_ctr_x, &user_a, detach_all, NULL), 0);
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, NULL), 0);
	/* And from the parent A owns, and from A's session (outside all): unload. */
	attach_protected();
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, "held"), 0);
	assert_int_equal(in_cgroup_as(cg_a, &user_a, detach_all, NULL), 0);
	attach_protected();
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, NULL), 0);
}

/*
 * A protected attach whose "fd" names no fd of the request (bpfctl always
 * sends a good one): refused at the protection's check, as the fds error
 * (bad-fds), not left to the cgroup attach after it.
 */
static int protect_bad_fd(void *arg)
{
	static const char req[] =
		"{\"bpfbroker\": 1, \"id\": 1, \"method\": \"attach\", \"params\": "
		"{\"object\": \"devs\", \"program\": \"prog\", \"pin\": true, \"protect\": true, "
		"\"target\": {\"type\": \"cgroup\", \"fd\": 1, \"attach_type\": "
		"\"cgroup_device\"}}}";
	struct proto_msg reply = {};
	json_object *e, *code, *msg;
	int k, sock = harness_connect(), cg = open(cg_a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(sock >= 0 && cg >= 0, "connect, open: %m");
	CHECK(proto_send_raw(sock, req, sizeof(req) - 1, &cg, 1) >= 0, "send");
	/* proto_recv() does not wait. */
	CHECK(poll(&(struct pollfd){.fd = sock, .events = POLLIN}, 1, 10000) == 1, "no reply");
	k = proto_recv(sock, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &reply, NULL);
	CHECK(k > 0, "receive: %s", strerror(k < 0 ? -k : EPIPE));
	CHECK(json_object_object_get_ex(reply.json, "error", &e) &&
		      json_object_object_get_ex(e, "code", &code) &&
		      json_object_object_get_ex(e, "message", &msg),
	      "no error in %s", json_object_to_json_string(reply.json));
	CHECK(strcmp(json_object_get_string(code), "bad-fds") == 0 &&
		      strstr(json_object_get_string(msg), "\"protect\" needs"),
	      "reply: %s", json_object_get_string(e));
	proto_msg_done(&reply);
	close(cg);
	close(sock);
	return 0;
}

/* Only cgroup links, and only pinned ones (a link held as an fd ends with the fd). */
static void test_protect_needs_pinned_cgroup(void **state)
{
	(void)ctl(&user_a, "unload", "devs", NULL); /* a failed test's, so this one stands alone */
	assert_int_equal(ctl(&user_a, "load-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", "--name", "devs", NULL),
			 0);
	assert_int_not_equal(ctl(&user_a, "attach", "devs/prog", "cgroup", cg_ctr, "--protect",
				 "--", "/bin/true", NULL),
			     0);
	assert_int_not_equal(ctl(&user_a, "attach", "devs/prog", "raw_tracepoint", "sched_switch",
				 "--pin", "--protect", NULL),
			     0);
	assert_int_equal(harness_as_user(&user_a, protect_bad_fd, NULL), 0);
	assert_int_equal(link_of_devs(), 0);
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
}

/*
 * What a protected link enforces may live in its object's maps (a network
 * filter's allow list): inside, no map writes, through the broker or an fd.
 */
static int try_map_writes(void *arg)
{
	static const uint32_t key = 0;
	static const uint64_t value = 7;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_map_handle *h = NULL;
	const struct bpfbroker_map *m;
	struct bpfbroker *b;
	uint64_t v = 0;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	k = bpfbroker_map_open(b, "eg", "config", &h, &e);
	CHECK(k == 0, "map open: %d %s", k, e ? e->message : "");
	k = bpfbroker_map_update_elem(h, &key, &value, 0, &e);
	CHECK(expect_refusal(k, e, "update", "policy-denied", CONFINES) == 0, "update");
	e = NULL;
	k = bpfbroker_map_delete_elem(h, &key, &e);
	CHECK(expect_refusal(k, e, "delete", "policy-denied", CONFINES) == 0, "delete");
	e = NULL;
	/* Reading is not changing. */
	k = bpfbroker_map_lookup_elem(h, &key, &v, &e);
	CHECK(k == 0, "lookup: %d %s", k, e ? e->message : "");
	bpfbroker_map_close(h);
	/* The owner's fds come without their write part. */
	k = bpfbroker_fds(b, "eg", &res, &e);
	CHECK(k == 0, "fds: %d %s", k, e ? e->message : "");
	m = bpfbroker_result_map(res, "config");
	CHECK(m && m->access == BPFBROKER_ACCESS_RO && m->fd_access == BPFBROKER_ACCESS_RO,
	      "config handed out %d/%d", m ? (int)m->access : -1, m ? (int)m->fd_access : -1);
	CHECK(fcntl(m->fd, F_GETFL) >= 0 && (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	      "config's fd is writable");
	/* No program fd either: with one it could test-run the program, which writes maps. */
	CHECK(bpfbroker_result_program(res, "count_egress") &&
		      bpfbroker_result_program(res, "count_egress")->fd < 0,
	      "a confined caller got count_egress's program fd");
	bpfbroker_result_free(res);
	bpfbroker_close(b);
	return 0;
}

/* Outside, the same owner writes. */
static int map_write(void *arg)
{
	static const uint32_t key = 0;
	static const uint64_t value = 7;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	k = bpfbroker_map_open(b, "eg", "config", &h, &e);
	if (k == 0)
		k = bpfbroker_map_update_elem(h, &key, &value, 0, &e);
	CHECK(k == 0, "update: %d %s", k, e ? e->message : "");
	bpfbroker_map_close(h);
	/* And gets the program's fd (the policy's program_fds): the refusal inside is protect's. */
	{
		struct bpfbroker_result *res = NULL;

		e = NULL;
		k = bpfbroker_fds(b, "eg", &res, &e);
		CHECK(k == 0 && bpfbroker_result_program(res, "count_egress") &&
			      bpfbroker_result_program(res, "count_egress")->fd >= 0,
		      "the owner outside got no program fd: %d %s", k, e ? e->message : "");
		bpfbroker_result_free(res);
	}
	bpfbroker_close(b);
	return 0;
}

static void test_protect_maps(void **state)
{
	assert_int_equal(ctl(&user_a, "load", harness_object("egress"), "--name", "eg", NULL), 0);
	assert_int_equal(ctl(&user_a, "attach", "eg/count_egress", "cgroup", cg_ctr, "--pin",
			     "--protect", NULL),
			 0);
	assert_int_equal(in_cgroup_as(cg_inner, &user_a, try_map_writes, NULL), 0);
	assert_int_equal(in_cgroup_as(cg_ctr_x, &user_a, map_write, NULL), 0);
	assert_int_equal(ctl(&user_a, "unload", "eg", NULL), 0);
}

/* ---- containers stay apart ---- */

static int attach_to(const char *object, const char *dir, struct bpfbroker_error **e)
{
	struct bpfbroker_attach_opts o = {.sz = sizeof(o),
					  .object = object,
					  .program = "prog",
					  .target_type = "cgroup",
					  .pin = true};
	struct bpfbroker *b;
	uint32_t id = 0;
	int k, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (bpfbroker_connect(H.socket, &b) < 0) {
		close(fd);
		return -ECONNREFUSED;
	}
	o.cgroup_fd = fd;
	k = bpfbroker_attach(b, &o, &id, NULL, e);
	bpfbroker_close(b);
	close(fd);
	return k;
}

/* A: not the root-owned parent of its delegated cgroup, not B's; its own nested ones. */
static int a_attaches(void *arg)
{
	struct bpfbroker_error *e = NULL;
	int k;

	k = attach_to("devs", cg_parent, &e);
	CHECK(expect_refusal(k, e, "parent", "policy-denied", "you do not own this cgroup") == 0,
	      "parent");
	e = NULL;
	k = attach_to("devs", cg_b, &e);
	CHECK(expect_refusal(k, e, "B's", "policy-denied", "you do not own this cgroup") == 0,
	      "B's");
	e = NULL;
	k = attach_to("devs", cg_a, &e);
	CHECK(k == 0, "own: %d %s", k, e ? e->message : "");
	k = attach_to("devs", cg_inner, &e);
	CHECK(k == 0, "nested: %d %s", k, e ? e->message : "");
	return 0;
}

/* B: nothing of A's objects, not A's cgroup; its own cgroup works. */
static int b_tries_a(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker *b;
	uint32_t *ids = NULL;
	size_t n = 0;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = bpfbroker_detach(b, "60501/devs", "prog", 0, &ids, &n, &e);
	CHECK(expect_refusal(k, e, "detach", "not-found", "devs") == 0, "detach");
	e = NULL;
	k = bpfbroker_unload(b, "60501/devs", &e);
	CHECK(expect_refusal(k, e, "unload", "not-found", "devs") == 0, "unload");
	e = NULL;
	k = bpfbroker_fds(b, "60501/devs", &res, &e);
	CHECK(expect_refusal(k, e, "fds", "not-found", "devs") == 0, "fds");
	e = NULL;
	k = load_devices(b, "bdevs", &e);
	CHECK(k == 0, "B's load: %d %s", k, e ? e->message : "");
	bpfbroker_close(b);
	k = attach_to("60501/devs", cg_b, &e);
	CHECK(expect_refusal(k, e, "attach A's", "not-found", "devs") == 0, "attach A's");
	e = NULL;
	k = attach_to("bdevs", cg_a, &e);
	CHECK(expect_refusal(k, e, "A's cgroup", "policy-denied", "you do not own this cgroup") ==
		      0,
	      "A's cgroup");
	e = NULL;
	k = attach_to("bdevs", cg_ctr, &e);
	CHECK(expect_refusal(k, e, "A's container", "policy-denied",
			     "you do not own this cgroup") == 0,
	      "A's container");
	e = NULL;
	k = attach_to("bdevs", cg_b, &e);
	CHECK(k == 0, "B's own: %d %s", k, e ? e->message : "");
	free(ids);
	return 0;
}

/* A's subordinate uid (a container's mapped root, no policy entry): nothing at all. */
static int sub_tries(void *arg)
{
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	k = load_devices(b, "mine", &e);
	CHECK(expect_refusal(k, e, "load", "policy-denied", "") == 0, "load");
	e = NULL;
	k = bpfbroker_unload(b, "60501/devs", &e);
	CHECK(expect_refusal(k, e, "unload", "not-found", "devs") == 0, "unload");
	bpfbroker_close(b);
	e = NULL;
	k = attach_to("60501/devs", cg_ctr, &e);
	CHECK(expect_refusal(k, e, "attach", "not-found", "devs") == 0, "attach");
	return 0;
}

static void test_containers_apart(void **state)
{
	(void)ctl(&user_a, "unload", "devs", NULL);
	assert_int_equal(ctl(&user_a, "load-insns", insns_file, "--type", "cgroup_device",
			     "--attach-type", "cgroup_device", "--name", "devs", NULL),
			 0);
	assert_int_equal(harness_as_user(&user_a, a_attaches, NULL), 0);
	/* Nested: A's rule on A's cgroup reaches the container below it. */
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, "held"), 0);
	assert_int_equal(in_cgroup_as(cg_b, &user_b, open_devices, NULL), 0);
	assert_int_equal(harness_as_user(&user_b, b_tries_a, NULL), 0);
	assert_int_equal(in_cgroup_as(cg_b, &user_b, open_devices, "held"), 0);
	/* From inside A's container too: B is no more than B. */
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a_sub, sub_tries, NULL), 0);
	assert_int_equal(ctl(&user_a, "-j", "show", "devs", NULL), 0);
	assert_int_equal(ctl(&user_b, "unload", "bdevs", NULL), 0);
	assert_int_equal(ctl(&user_a, "unload", "devs", NULL), 0);
	assert_int_equal(in_cgroup_as(cg_ctr, &user_a, open_devices, NULL), 0);
	assert_int_equal(in_cgroup_as(cg_b, &user_b, open_devices, NULL), 0);
}

/* ---- setup ---- */

static int cgroups_create(void)
{
	char rel[160];
	int pid = (int)getpid();

	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d", pid);
	if (harness_cgroup_make(rel, 0, cg_parent, sizeof(cg_parent)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d/a", pid);
	if (harness_cgroup_make(rel, UID_A, cg_a, sizeof(cg_a)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d/a/ctr", pid);
	if (harness_cgroup_make(rel, UID_A, cg_ctr, sizeof(cg_ctr)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d/a/ctr/inner", pid);
	if (harness_cgroup_make(rel, UID_A, cg_inner, sizeof(cg_inner)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d/a/ctr-x", pid);
	if (harness_cgroup_make(rel, UID_A, cg_ctr_x, sizeof(cg_ctr_x)) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-protect-%d/b", pid);
	return harness_cgroup_make(rel, UID_B, cg_b, sizeof(cg_b));
}

static int setup(void **state)
{
	char exe[512];
	char *argv[] = {exe, "--dump", insns_file, NULL};

	if (harness_init() < 0)
		return -1;
	snprintf(insns_file, sizeof(insns_file), "%s/device.insns", H.dir);
	snprintf(fuse_node, sizeof(fuse_node), "%s/fuse", H.dir);
	if (mknod(fuse_node, S_IFCHR | 0666, makedev(10, 229)) < 0 || chmod(fuse_node, 0666) < 0)
		return -1;
	snprintf(exe, sizeof(exe), "%s/examples/device-allow", H.build_dir);
	if (harness_exec_as(&root_user, argv) != 0 || chmod(insns_file, 0644) < 0)
		return -1;
	if (harness_write_policy(
		    "50-protect.json",
		    "{\"rules\": [{\"match\": {\"uids\": [\"60501-60502\"]},"
		    " \"allow\": {\"program_types\": [\"cgroup_device\", \"cgroup_skb\"],"
		    "  \"helper_classes\": [\"base\"], \"program_fds\": [\"cgroup_skb\"],"
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
		cmocka_unit_test(test_protect),
		cmocka_unit_test(test_protect_needs_pinned_cgroup),
		cmocka_unit_test(test_protect_maps),
		cmocka_unit_test(test_containers_apart),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
