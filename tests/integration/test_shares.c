/* SPDX-License-Identifier: MIT */
/*
 * A share grants access to data, nothing more; an attachment does not change
 * other users' systems. End to end, as real unprivileged uids against the
 * real daemon and kernel, each test makes an attempt an audit made:
 *
 * - a share of a prog array: the recipient puts its own program in it (by
 *   the fd it got, by the library, by bpfctl);
 * - a wo or rw share: the recipient freezes the owner's map, whose owner can
 *   then no longer write it;
 * - the BTF a recipient gets: names of the owner's unshared maps and
 *   programs, source lines, file names;
 * - sharing a ring buffer to consume (by the owner, by the policy);
 * - a container-range uid in the host network namespace attaches XDP to a
 *   host veth its policy's "veth*" matches;
 * - a uprobe with a USDT semaphore on a binary the caller does not own, and a
 *   plain uprobe on someone else's USDT site: both make the kernel refuse
 *   other users' (and root's) probes at that place.
 *
 * And what must keep working: a share's writes through the broker, the
 * owner's own BTF and writes, interfaces in the caller's own network
 * namespace, the host's with host_interfaces, semaphores in one's own binary.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "daemon/worker/elfsym.h"
#include "harness.h"
#include "harness_client.h"
#include "uprobe_target_proc.h"

#define UID_VICTIM 4501 /* loads and shares "vict" and "vict2" */
#define UID_ATTACKER 4502 /* what the victim shares with it, and its own socket filters */
#define UID_POLICY_SHAREE 4503 /* the policy shares every map of the victim's "vict*" rw */
#define UID_HOSTIF 4504 /* xdp on the host's vethsh* (host_interfaces, added by a reload) */
#define UID_PROBER 4505 /* uprobes */
#define UID_BYSTANDER 4506 /* uprobes, on its own processes of the same binaries */
#define UID_CONTAINER 100000 /* a container range's uid: xdp on "veth*" */
#define UID_POOR_SHAREE 4507 /* shared "vict*" like 4503, with 1 byte of kernel memory */

#define VICTIM "4501"
#define ATTACKER "4502"

static const struct user victim = {UID_VICTIM, UID_VICTIM};
static const struct user attacker = {UID_ATTACKER, UID_ATTACKER};
static const struct user policy_sharee = {UID_POLICY_SHAREE, UID_POLICY_SHAREE};
static const struct user hostif = {UID_HOSTIF, UID_HOSTIF};
static const struct user prober = {UID_PROBER, UID_PROBER};
static const struct user bystander = {UID_BYSTANDER, UID_BYSTANDER};
static const struct user container = {UID_CONTAINER, UID_CONTAINER};
static const struct user poor_sharee = {UID_POOR_SHAREE, UID_POOR_SHAREE};

#define HOST_VETH "vethshA"
#define HOST_VETH_PEER "vethshB"
#define SYMBOL "uprobe_target_work"
#define USDT_SITE "uprobe_target_usdt"
#define SEMAPHORE "uprobe_target_semaphore"

static char root_exe[512]; /* uprobe_target, owned by root */
static char own_exe[512]; /* a copy owned by the prober */
static bool veth_made;

#define ctl harness_ctl
#define out harness_out

static const char *message_of(const struct bpfbroker_error *e, int k)
{
	return e ? e->message : strerror(-k);
}

static const char *code_of(const struct bpfbroker_error *e)
{
	return e && e->code ? e->code : "(no error reply)";
}

/* ---- the library, as clients use it ---- */

static int lib_load(const char *object, const char *name, const struct bpfbroker_share *shares,
		    size_t n_shares, struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker_load_opts opts = {
		.sz = sizeof(opts), .name = name, .shares = shares, .n_shares = n_shares};

	return harness_load(object, &opts, res, err);
}

/* ---- the victim's objects ---- */

/*
 * "vict": victim_jump (a prog array) rw and victim_data wo for the attacker;
 * "vict2": victim_data rw for the attacker. The victim's own access is rw
 * (consume for the ring buffer).
 */
static int victim_loads(void *arg)
{
	static const struct bpfbroker_share vict[] = {
		{.map = "victim_jump", .user = ATTACKER, .access = BPFBROKER_ACCESS_RW},
		{.map = "victim_data", .user = ATTACKER, .access = BPFBROKER_ACCESS_WO},
	};
	static const struct bpfbroker_share vict2[] = {
		{.map = "victim_data", .user = ATTACKER, .access = BPFBROKER_ACCESS_RW},
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k;

	/* What an earlier test that failed half-way left. */
	harness_unload("vict");
	harness_unload("vict2");
	k = lib_load("shares", "vict", vict, 2, &res, &err);
	CHECK(k == 0, "load vict: %s", message_of(err, k));
	bpfbroker_result_free(res);
	k = lib_load("shares", "vict2", vict2, 1, &res, &err);
	CHECK(k == 0, "load vict2: %s", message_of(err, k));
	bpfbroker_result_free(res);
	return 0;
}

static int victim_unloads(void *arg)
{
	CHECK(harness_unload("vict") == 0, "unload vict");
	CHECK(harness_unload("vict2") == 0, "unload vict2");
	return 0;
}

/* The victim's own fd of one of its maps: rw, as its policy says. */
static int victim_map_fd(const char *object, const char *map, struct bpfbroker_result **res)
{
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	int k = harness_fds(object, res, &err);

	if (k < 0) {
		fprintf(stderr, "victim's fds of %s: %s\n", object, message_of(err, k));
		bpfbroker_error_free(err);
		return -1;
	}
	m = bpfbroker_result_map(*res, map);
	if (!m || m->fd < 0 || m->access != BPFBROKER_ACCESS_RW) {
		fprintf(stderr, "victim has no rw fd of %s/%s\n", object, map);
		return -1;
	}
	return m->fd;
}

/* ---- 1. a shared prog array: the recipient's own program in the victim's filter ---- */

static int attacker_inserts_program(void *arg)
{
	struct bpfbroker_result *own = NULL, *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_map_handle *h = NULL;
	const struct bpfbroker_program *p;
	const struct bpfbroker_map *m;
	struct bpfbroker *b;
	uint32_t key = 0, value;
	int k;

	/* Its own socket filter, whose fd every socket_filter grant hands out. */
	k = lib_load("counter", NULL, NULL, 0, &own, &err);
	CHECK(k == 0, "own load: %s", message_of(err, k));
	p = bpfbroker_result_program(own, "count_packets");
	CHECK(p && p->fd >= 0, "no program fd of its own");
	value = (uint32_t)p->fd;

	k = harness_fds(VICTIM "/vict", &res, &err);
	CHECK(k == 0, "fds: %s", message_of(err, k));
	m = bpfbroker_result_map(res, "victim_jump");
	CHECK(m && m->access != BPFBROKER_ACCESS_NONE, "victim_jump not shared at all");
	/* By the fd it got. */
	if (m->fd >= 0)
		CHECK(bpf_map_update_elem(m->fd, &key, &value, BPF_ANY) < 0,
		      "put its own program into the victim's prog array through the %s fd it got",
		      (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_RDWR ? "O_RDWR" : "shared");
	bpfbroker_result_free(res);

	/* By the library's map handle (the fd, or the broker where the fd does not write). */
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_map_open(b, VICTIM "/vict", "victim_jump", &h, &err);
	CHECK(k == 0, "map_open: %s", message_of(err, k));
	k = bpfbroker_map_update_elem(h, &key, &value, BPF_ANY, &err);
	CHECK(k < 0, "put its own program into the victim's prog array through the library");
	bpfbroker_error_free(err);
	bpfbroker_map_close(h);
	bpfbroker_close(b);

	bpfbroker_result_free(own);
	return 0;
}

static int victim_prog_array_empty(void *arg)
{
	struct bpfbroker_result *res = NULL;
	uint32_t key = 0, id = 0;
	int fd = victim_map_fd("vict", "victim_jump", &res);

	CHECK(fd >= 0, "victim's fd");
	/* A prog array's lookup from user space gives the program's id. */
	CHECK(bpf_map_lookup_elem(fd, &key, &id) < 0 && errno == ENOENT,
	      "the victim's prog array holds program %u, which it never put there", id);
	bpfbroker_result_free(res);
	return 0;
}

static void test_prog_array_share(void **state)
{
	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	assert_int_equal(harness_as_user(&attacker, attacker_inserts_program, NULL), 0);
	/* By bpfctl, through the broker (an fd number means nothing in the broker's process). */
	assert_int_not_equal(ctl(&attacker, "map", "update", VICTIM "/vict/victim_jump", "00000000",
				 "03000000", NULL),
			     0);
	assert_int_equal(harness_as_user(&victim, victim_prog_array_empty, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/* ---- 2. BPF_MAP_FREEZE by a recipient: the owner's writes would fail from then on ---- */

static int attacker_freezes(void *arg)
{
	static const char *const objects[] = {VICTIM "/vict", VICTIM "/vict2"};

	for (size_t i = 0; i < 2; i++) {
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		int k = harness_fds(objects[i], &res, &err);

		CHECK(k == 0, "fds of %s: %s", objects[i], message_of(err, k));
		for (size_t n = 0; n < res->n_maps; n++) {
			const struct bpfbroker_map *m = bpfbroker_result_map_at(res, n);

			if (m->fd < 0)
				continue;
			CHECK(bpf_map_freeze(m->fd) < 0,
			      "froze the victim's %s/%s (shared %s) through its %s fd", objects[i],
			      m->name, bpfbroker_access_to_string(m->access),
			      (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_WRONLY ? "O_WRONLY"
			      : (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_RDWR ? "O_RDWR"
									      : "O_RDONLY");
		}
		/* No writable fd for anyone but the owner: wo comes as none, rw as ro. */
		for (size_t n = 0; n < res->n_maps; n++) {
			const struct bpfbroker_map *m = bpfbroker_result_map_at(res, n);

			CHECK(m->fd < 0 || (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
			      "%s/%s came writable", objects[i], m->name);
		}
		bpfbroker_result_free(res);
	}
	return 0;
}

static int victim_still_writes(void *arg)
{
	static const char *const objects[] = {"vict", "vict2"};

	for (size_t i = 0; i < 2; i++) {
		struct bpfbroker_result *res = NULL;
		uint32_t key = 3, v[2] = {1, 2};
		int fd = victim_map_fd(objects[i], "victim_data", &res);

		CHECK(fd >= 0, "victim's fd");
		CHECK(bpf_map_update_elem(fd, &key, v, BPF_ANY) == 0,
		      "the victim can no longer write its own %s/victim_data: %m", objects[i]);
		bpfbroker_result_free(res);
	}
	return 0;
}

static void test_freeze_by_recipient(void **state)
{
	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	assert_int_equal(harness_as_user(&attacker, attacker_freezes, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_still_writes, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/* ---- what a share's writes still do: through the broker ---- */

static int attacker_writes_shared(void *arg)
{
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map_info *info;
	struct bpfbroker *b;
	uint32_t key = 2, v[2] = {20, 21}, got[2] = {};
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	/* rw: reads by the fd, writes through the broker, the same calls either way. */
	k = bpfbroker_map_open(b, VICTIM "/vict2", "victim_data", &h, &err);
	CHECK(k == 0, "map_open rw: %s", message_of(err, k));
	info = bpfbroker_map_handle_info(h);
	CHECK(info->access == BPFBROKER_ACCESS_RW, "rw share opened as %s",
	      bpfbroker_access_to_string(info->access));
	k = bpfbroker_map_update_elem(h, &key, v, BPF_ANY, &err);
	CHECK(k == 0, "update through an rw share: %s", message_of(err, k));
	k = bpfbroker_map_lookup_elem(h, &key, got, &err);
	CHECK(k == 0 && got[0] == 20 && got[1] == 21, "lookup through an rw share: %s",
	      message_of(err, k));
	k = bpfbroker_map_delete_elem(h, &key, &err);
	CHECK(k == 0, "delete through an rw share: %s", message_of(err, k));
	bpfbroker_map_close(h);
	/* wo: writes, and no reads. */
	k = bpfbroker_map_open(b, VICTIM "/vict", "victim_data", &h, &err);
	CHECK(k == 0, "map_open wo: %s", message_of(err, k));
	CHECK(bpfbroker_map_handle_info(h)->access == BPFBROKER_ACCESS_WO, "wo share opened as %s",
	      bpfbroker_access_to_string(bpfbroker_map_handle_info(h)->access));
	k = bpfbroker_map_update_elem(h, &key, v, BPF_ANY, &err);
	CHECK(k == 0, "update through a wo share: %s", message_of(err, k));
	k = bpfbroker_map_lookup_elem(h, &key, got, &err);
	CHECK(k == -EPERM, "lookup through a wo share: %d", k);
	bpfbroker_error_free(err);
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

static int victim_sees_writes(void *arg)
{
	static const char *const objects[] = {"vict", "vict2"};
	uint32_t key = 1, v[2];

	for (size_t i = 0; i < 2; i++) {
		struct bpfbroker_result *res = NULL;
		int fd = victim_map_fd(objects[i], "victim_data", &res);

		CHECK(fd >= 0, "victim's fd");
		CHECK(bpf_map_lookup_elem(fd, &key, v) == 0 && v[0] == 7 && v[1] == 9,
		      "bpfctl's write to %s is not there", objects[i]);
		key = 2;
		if (i == 0)
			CHECK(bpf_map_lookup_elem(fd, &key, v) == 0 && v[0] == 20,
			      "the library's write through the wo share is not there");
		key = 1;
		bpfbroker_result_free(res);
	}
	return 0;
}

/* The victim's own program in its own prog array (the owner's fd writes it). */
static int victim_fills_prog_array(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_program *p;
	uint32_t key = 0, value;
	int fd = victim_map_fd("vict", "victim_jump", &res);

	CHECK(fd >= 0, "victim's fd");
	p = bpfbroker_result_program(res, "victim_filter");
	CHECK(p && p->fd >= 0, "no program fd");
	value = (uint32_t)p->fd;
	CHECK(bpf_map_update_elem(fd, &key, &value, BPF_ANY) == 0, "the owner's insert: %m");
	bpfbroker_result_free(res);
	return 0;
}

static int victim_prog_array_full(void *arg)
{
	struct bpfbroker_result *res = NULL;
	uint32_t key = 0, id = 0;
	int fd = victim_map_fd("vict", "victim_jump", &res);

	CHECK(fd >= 0, "victim's fd");
	CHECK(bpf_map_lookup_elem(fd, &key, &id) == 0 && id != 0,
	      "the victim's program was taken out of its prog array: %m");
	bpfbroker_result_free(res);
	return 0;
}

static void test_share_writes_through_broker(void **state)
{
	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	/* bpfctl, on the fd where it may and through the broker where not. */
	assert_int_equal(ctl(&attacker, "map", "update", VICTIM "/vict2/victim_data", "01000000",
			     "0700000009000000", NULL),
			 0);
	assert_int_equal(ctl(&attacker, "map", "update", VICTIM "/vict/victim_data", "01000000",
			     "0700000009000000", NULL),
			 0);
	/* And reads, pretty-printed with the BTF it gets. */
	assert_int_equal(ctl(&attacker, "map", "dump", VICTIM "/vict2/victim_data", NULL), 0);
	assert_non_null(strstr(out, "victim_x"));
	assert_int_not_equal(ctl(&attacker, "map", "dump", VICTIM "/vict/victim_data", NULL), 0);
	assert_int_equal(harness_as_user(&attacker, attacker_writes_shared, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_sees_writes, NULL), 0);
	/* A shared prog array is no one else's to write: not even a delete. */
	assert_int_equal(harness_as_user(&victim, victim_fills_prog_array, NULL), 0);
	assert_int_equal(
		ctl(&attacker, "map", "delete", VICTIM "/vict/victim_jump", "00000000", NULL), 1);
	assert_int_equal(harness_as_user(&victim, victim_prog_array_full, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/* ---- 3. the BTF a non-owner gets ---- */

static const char *const secrets[] = {
	"victim_secret_map", /* an unshared map's name */
	"victim_secret_value", /* its value type */
	"victim_secret_field", /* and its member */
	"victim_events", /* the unshared ring buffer */
	"victim_filter", /* the program */
	"victim_source_line_marker", /* a source line */
	"shares.bpf.c", /* the file name */
	"victim_jump", /* a map shared with someone else, not this caller */
};

/* Does the BTF say anything it should not, and does it describe victim_data's value? */
static int btf_check(const void *data, size_t size, uint32_t value_type_id, bool full)
{
	struct btf *btf;
	const struct btf_type *t;
	const char *name;

	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		if (full)
			continue;
		CHECK(!memmem(data, size, secrets[i], strlen(secrets[i])),
		      "the BTF a non-owner got says \"%s\" (%zu bytes)", secrets[i], size);
	}
	btf = btf__new(data, (uint32_t)size);
	CHECK(!libbpf_get_error(btf), "the BTF does not parse");
	t = btf__type_by_id(btf, value_type_id);
	name = t ? btf__name_by_offset(btf, t->name_off) : NULL;
	CHECK(t && btf_is_struct(t) && name && strcmp(name, "victim_point") == 0 &&
		      btf_vlen(t) == 2,
	      "value type %u of victim_data is not struct victim_point", value_type_id);
	name = btf__name_by_offset(btf, btf_members(t)[1].name_off);
	CHECK(name && strcmp(name, "victim_y") == 0, "its second member is %s",
	      name ? name : "nameless");
	if (full)
		CHECK(btf__find_by_name(btf, "victim_filter") > 0,
		      "the owner's BTF lacks its program");
	btf__free(btf);
	return 0;
}

static int btf_fd_bytes(int fd, void **ret, size_t *ret_size)
{
	struct bpf_btf_info info = {};
	uint32_t len = sizeof(info);
	void *data;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.btf_size == 0)
		return -1;
	data = calloc(1, info.btf_size);
	if (!data)
		return -1;
	*ret_size = info.btf_size;
	info = (struct bpf_btf_info){.btf = (uint64_t)(uintptr_t)data, .btf_size = *ret_size};
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
		free(data);
		return -1;
	}
	*ret = data;
	return 0;
}

static int client_btf(void *arg)
{
	const bool owner = *(const bool *)arg;
	const char *ref = owner ? "vict" : VICTIM "/vict2";
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_map_handle *h = NULL;
	const struct bpfbroker_map *m;
	struct bpfbroker *b;
	void *data = NULL;
	size_t size = 0;
	int k = harness_fds(ref, &res, &err);

	/* The fd in fds' reply. */
	CHECK(k == 0, "fds: %s", message_of(err, k));
	m = bpfbroker_result_map(res, "victim_data");
	CHECK(m && res->btf_fd >= 0, "no victim_data or no BTF fd");
	CHECK(btf_fd_bytes(res->btf_fd, &data, &size) == 0, "reading the BTF fd: %m");
	CHECK(btf_check(data, size, m->btf_value_type_id, owner) == 0, "BTF fd");
	free(data);
	bpfbroker_result_free(res);
	/* The bytes of the map method (op btf), as where bpf() is refused. */
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "proxy");
	k = bpfbroker_map_open(b, ref, "victim_data", &h, &err);
	CHECK(k == 0, "map_open: %s", message_of(err, k));
	k = bpfbroker_map_btf(h, &data, &size, &err);
	CHECK(k == 0, "map btf: %s", message_of(err, k));
	CHECK(btf_check(data, size, bpfbroker_map_handle_info(h)->btf_value_type_id, owner) == 0,
	      "map btf");
	free(data);
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

static void test_btf_of_others(void **state)
{
	bool owner = false;

	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	assert_int_equal(harness_as_user(&attacker, client_btf, &owner), 0);
	owner = true;
	assert_int_equal(harness_as_user(&victim, client_btf, &owner), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/*
 * A non-owner's BTF is a new kernel object, loaded for each fds call and
 * charged to the caller's max_map_memory_bytes: over it, the maps still come,
 * the BTF does not, however often the caller asks (nor does it stay loaded).
 */
static int client_btf_over_quota(void *arg)
{
	for (int i = 0; i < 20; i++) {
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		const struct bpfbroker_map *m;
		int k = harness_fds(VICTIM "/vict", &res, &err);

		CHECK(k == 0, "fds: %s", message_of(err, k));
		m = bpfbroker_result_map(res, "victim_data");
		CHECK(m && m->fd >= 0, "the shared map did not come");
		CHECK(res->btf_fd < 0, "call %d: a BTF came over a quota of 1 byte", i);
		bpfbroker_result_free(res);
	}
	return 0;
}

static void test_btf_charged_to_sharee(void **state)
{
	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	assert_int_equal(harness_as_user(&poor_sharee, client_btf_over_quota, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/*
 * ---- 3b. shares name users and groups that exist ----
 * The victim names, for the attacker's uid, strings a careless or hostile
 * client writes: signs, spaces, hex, -1 as 32 and 64 bits, passwd syntax.
 * None is a user: each load is refused, and none is read as a uid
 * (daemon/identity.c through common/parse.h; "0x0" is no root, " 4502" is
 * no attacker).
 */
static int victim_shares_with_non_users(void *arg)
{
	static const char *const users[] = {
		"0x0",	      "-1", " 4502",	     "4502 ",
		"+4502",      "+",  "4294967295",    "18446744073709551615",
		"root:x:0:0", "..", "victim\nuid=0", "0x1196",
	};
	static const char *const groups[] = {"-1", "0x0", "4294967295", " 0"};

	for (size_t i = 0; i < ARRAY_SIZE(users) + ARRAY_SIZE(groups); i++) {
		bool group = i >= ARRAY_SIZE(users);
		const char *who = group ? groups[i - ARRAY_SIZE(users)] : users[i];
		const struct bpfbroker_share share = {
			.map = "victim_data",
			.user = group ? NULL : who,
			.group = group ? who : NULL,
			.access = BPFBROKER_ACCESS_RO,
		};
		struct bpfbroker_result *res = NULL;
		struct bpfbroker_error *err = NULL;
		int k = lib_load("shares", "vict5", &share, 1, &res, &err);

		if (k == 0)
			harness_unload("vict5");
		bpfbroker_result_free(res);
		CHECK(k < 0 && err && strcmp(err->code, "invalid-request") == 0 &&
			      strstr(err->message,
				     group ? "there is no group" : "there is no user"),
		      "a share with %s \"%s\" was accepted: %d %s %s", group ? "group" : "user",
		      who, k, code_of(err), err ? err->message : "");
		bpfbroker_error_free(err);
	}
	return 0;
}

static void test_shares_name_no_user(void **state)
{
	assert_int_equal(harness_as_user(&victim, victim_shares_with_non_users, NULL), 0);
}

/* ---- 4. ring buffers are not shared: consuming takes every other consumer's records ---- */

static int victim_shares_consume(void *arg)
{
	static const struct bpfbroker_share share[] = {
		{.map = "victim_events", .user = ATTACKER, .access = BPFBROKER_ACCESS_CONSUME},
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("shares", "vict3", share, 1, &res, &err);

	if (k == 0)
		harness_unload("vict3");
	bpfbroker_result_free(res);
	CHECK(k < 0 && err && strcmp(err->code, "invalid-request") == 0 &&
		      strstr(err->message, "ring buffer"),
	      "a consume share was accepted: %d %s %s", k, code_of(err), err ? err->message : "");
	bpfbroker_error_free(err);
	return 0;
}

static int policy_sharee_fds(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	int k = harness_fds(VICTIM "/vict", &res, &err);

	CHECK(k == 0, "fds: %s", message_of(err, k));
	m = bpfbroker_result_map(res, "victim_events");
	CHECK(!m || m->fd < 0, "a ring buffer came to a non-owner");
	m = bpfbroker_result_map(res, "victim_data");
	CHECK(m && m->access == BPFBROKER_ACCESS_RW && m->fd >= 0 &&
		      (fcntl(m->fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	      "the policy's rw share of victim_data is not an ro fd");
	bpfbroker_result_free(res);
	return 0;
}

static void test_ring_buffers_not_shared(void **state)
{
	char dir[512], path[600], cmd[1400], msg[1024] = "";
	FILE *f;
	int status;

	assert_int_equal(harness_as_user(&victim, victim_shares_consume, NULL), 0);
	/* A policy's shared entry may not say consume either. */
	snprintf(dir, sizeof(dir), "%s/policy-consume", H.dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/50-consume.json", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("{\"rules\": [{\"match\": {\"uids\": [\"4502\"]}, \"allow\": {\"shared\": "
	      "[{\"owner\": \"4501\", \"object\": \"*\", \"map\": \"*\", \"access\": "
	      "\"consume\"}]}}]}",
	      f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "%s/daemon/bpfbrokerd --check-config --policy-dir %s 2>&1",
		 H.build_dir, dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(msg, sizeof(msg), f))
		msg[0] = '\0';
	status = pclose(f);
	unlink(path);
	rmdir(dir);
	fprintf(stderr, "check-config: %s", msg);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_non_null(strstr(msg, "rules[0].allow.shared[0].access"));
	/* And whatever a policy shares, a ring buffer goes to its owner only. */
	assert_int_equal(harness_as_user(&victim, victim_loads, NULL), 0);
	assert_int_equal(harness_as_user(&policy_sharee, policy_sharee_fds, NULL), 0);
	assert_int_equal(harness_as_user(&victim, victim_unloads, NULL), 0);
}

/* ---- 5. interfaces: only in network namespaces the client owns, unless host_interfaces ---- */

static int run_ip(const char *const *argv)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execv("/usr/sbin/ip", (char *const *)argv);
		execv("/sbin/ip", (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int attach_xdp(const char *object, const char *ifname, struct bpfbroker_error **err)
{
	struct bpfbroker_attach_opts opts = {
		.sz = sizeof(opts),
		.object = object,
		.program = "xdp_count",
		.target_type = "xdp",
		.name = ifname,
		.pin = true,
		.cgroup_fd = -1,
		.binary_fd = -1,
		.pidfd = -1,
	};
	struct bpfbroker *b;
	int k = bpfbroker_connect(H.socket, &b);

	if (k < 0)
		return k;
	*err = NULL;
	k = bpfbroker_attach(b, &opts, NULL, NULL, err);
	bpfbroker_close(b);
	return k;
}

/* In the host's network namespace: its "veth*" must not reach the host's veths. */
static int container_attaches_host(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("netcount", "cnet", NULL, 0, &res, &err);

	CHECK(k == 0, "load: %s", message_of(err, k));
	bpfbroker_result_free(res);
	k = attach_xdp("cnet", HOST_VETH, &err);
	harness_unload("cnet");
	CHECK(k < 0, "uid %d attached XDP to the host's " HOST_VETH, UID_CONTAINER);
	CHECK(err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "network namespace") &&
		      strstr(err->message, "host_interfaces"),
	      "refused, but not saying why: %s %s", code_of(err), message_of(err, k));
	bpfbroker_error_free(err);
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * In a user and network namespace of its own (as unshare -Urn makes them,
 * with no help from root), with a veth it made there as the namespace's root.
 */
static int container_attaches_own(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	char map[64];
	int k;

	/* Dumpable again after the harness's setuid, or /proc/self/uid_map is root's. */
	CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0, "dumpable: %m");
	CHECK(unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0, "unshare: %m");
	snprintf(map, sizeof(map), "0 %d 1", UID_CONTAINER);
	CHECK(write_file("/proc/self/uid_map", map) == 0 &&
		      write_file("/proc/self/setgroups", "deny") == 0 &&
		      write_file("/proc/self/gid_map", map) == 0,
	      "id maps: %m");
	CHECK(run_ip((const char *const[]){"ip", "link", "add", "vethin0", "type", "veth", "peer",
					   "name", "vethin1", NULL}) == 0,
	      "ip link add in its own namespace");
	k = lib_load("netcount", "cown", NULL, 0, &res, &err);
	CHECK(k == 0, "load: %s", message_of(err, k));
	bpfbroker_result_free(res);
	k = attach_xdp("cown", "vethin0", &err);
	CHECK(k == 0, "xdp on its own vethin0: %s", message_of(err, k));
	/* Its policy's patterns still apply there. */
	k = attach_xdp("cown", "lo", &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "lo: %s", code_of(err));
	bpfbroker_error_free(err);
	CHECK(harness_unload("cown") == 0, "unload");
	return 0;
}

static int hostif_attaches_host(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k = lib_load("netcount", "hnet", NULL, 0, &res, &err);

	CHECK(k == 0, "load: %s", message_of(err, k));
	bpfbroker_result_free(res);
	k = attach_xdp("hnet", HOST_VETH, &err);
	CHECK(k == 0, "host_interfaces: xdp on the host's " HOST_VETH ": %s", message_of(err, k));
	/* Only the host's interfaces it names. */
	k = attach_xdp("hnet", "lo", &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "lo: %s", code_of(err));
	bpfbroker_error_free(err);
	CHECK(harness_unload("hnet") == 0, "unload");
	return 0;
}

static void test_interfaces_host_netns(void **state)
{
	assert_true(veth_made);
	assert_int_equal(harness_as_user(&container, container_attaches_host, NULL), 0);
}

static void test_interfaces_own_netns(void **state)
{
	assert_int_equal(harness_as_user(&container, container_attaches_own, NULL), 0);
}

static void test_host_interfaces(void **state)
{
	assert_true(veth_made);
	/* Added by a reload: a policy key that older daemons refuse. */
	assert_int_equal(
		harness_write_policy("60-hostif.json",
				     "{\"rules\": [{\"match\": {\"uids\": [\"4504\"]}, \"allow\": "
				     "{\"program_types\": [\"xdp\", \"sched_cls\"], "
				     "\"helper_classes\": [\"base\"], "
				     "\"maps\": [{\"name\": \"*\", \"access\": \"ro\"}], "
				     "\"attach\": {\"host_interfaces\": [\"vethsh*\"]}}}]}"),
		0);
	assert_int_equal(kill(H.daemon, SIGHUP), 0);
	usleep(300000);
	assert_int_equal(harness_as_user(&hostif, hostif_attaches_host, NULL), 0);
}

/* ---- 6. uprobes: USDT semaphores only in one's own binaries, and others' USDT sites ---- */

/*
 * Attach OBJ/count_calls at EXE:WHERE (a symbol) in process pid, with a
 * semaphore or none, as the client (in a harness_as_user() child): the
 * client opens the binary and the pidfd. An attach expected to work is
 * retried a while: the kernel frees a probe an earlier test detached in the
 * background, and refuses another semaphore at that place until then.
 */
struct uprobe_args {
	const char *object, *exe, *where, *semaphore;
	pid_t pid;
	bool expect_ok;
	const char *refusal; /* expected in the message of a refusal */
};

static int client_attach_uprobe(void *arg)
{
	const struct uprobe_args *a = arg;
	struct bpfbroker_error *err = NULL;
	int k = -EAGAIN;

	for (int i = 0; i < (a->expect_ok ? 60 : 1); i++) {
		struct bpfbroker_attach_opts o = {
			.sz = sizeof(o),
			.object = a->object,
			.program = "count_calls",
			.target_type = "uprobe",
			.cgroup_fd = -1,
			.name = a->where,
			.pin = true,
			.semaphore = a->semaphore,
		};
		struct bpfbroker *b;

		if (i)
			usleep(50000);
		o.binary_fd = open(a->exe, O_RDONLY | O_CLOEXEC);
		o.pidfd = (int)syscall(SYS_pidfd_open, a->pid, 0);
		CHECK(o.binary_fd >= 0 && o.pidfd >= 0, "open: %m");
		CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
		bpfbroker_error_free(err);
		err = NULL;
		k = bpfbroker_attach(b, &o, NULL, NULL, &err);
		bpfbroker_close(b);
		close(o.binary_fd);
		close(o.pidfd);
		if (k == 0 || (err && strcmp(err->code, "load-failed") != 0))
			break;
	}
	if (a->expect_ok)
		CHECK(k == 0, "uprobe at %s:%s%s%s: %s", a->exe, a->where,
		      a->semaphore ? " with semaphore " : "", a->semaphore ? a->semaphore : "",
		      message_of(err, k));
	else
		CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
			      strstr(err->message, a->refusal),
		      "uprobe at %s:%s%s%s was not refused as it should be (\"%s\"): %d %s", a->exe,
		      a->where, a->semaphore ? " with semaphore " : "",
		      a->semaphore ? a->semaphore : "", a->refusal, k, message_of(err, k));
	bpfbroker_error_free(err);
	return 0;
}

static int attach_uprobe(const struct user *u, const struct uprobe_args *a)
{
	return harness_as_user(u, client_attach_uprobe, (void *)a);
}

static void test_semaphore_on_foreign_binary(void **state)
{
	struct target p = {}, v = {};
	int refused;

	assert_int_equal(target_start(&prober, true, root_exe, &p), 0);
	assert_int_equal(target_start(&bystander, true, root_exe, &v), 0);
	assert_int_equal(ctl(&prober, "load", harness_object("uprobe"), "--name", "sem", NULL), 0);
	assert_int_equal(ctl(&bystander, "load", harness_object("uprobe"), "--name", "by", NULL),
			 0);
	/* A semaphore in root's binary, at a function others probe too. */
	refused = attach_uprobe(&prober, &(struct uprobe_args){.object = "sem",
							       .exe = root_exe,
							       .where = SYMBOL,
							       .semaphore = SEMAPHORE,
							       .pid = p.pid,
							       .refusal = "semaphore"});
	/* Another user's plain probe there, in its own process, must still work. */
	assert_int_equal(attach_uprobe(&bystander, &(struct uprobe_args){.object = "by",
									 .exe = root_exe,
									 .where = SYMBOL,
									 .pid = v.pid,
									 .expect_ok = true}),
			 0);
	assert_int_equal(ctl(&prober, "unload", "sem", NULL), 0);
	assert_int_equal(ctl(&bystander, "unload", "by", NULL), 0);
	target_stop(&p);
	target_stop(&v);
	assert_int_equal(refused, 0);
}

static void test_semaphore_on_own_binary(void **state)
{
	struct target p = {};

	assert_int_equal(target_start(&prober, true, own_exe, &p), 0);
	assert_int_equal(ctl(&prober, "load", harness_object("uprobe"), "--name", "own", NULL), 0);
	assert_int_equal(target_semaphore(&p), 0);
	assert_int_equal(attach_uprobe(&prober, &(struct uprobe_args){.object = "own",
								      .exe = own_exe,
								      .where = SYMBOL,
								      .semaphore = SEMAPHORE,
								      .pid = p.pid,
								      .expect_ok = true}),
			 0);
	assert_int_equal(target_semaphore(&p), 1);
	assert_int_equal(ctl(&prober, "unload", "own", NULL), 0);
	target_stop(&p);
}

/* The file offset of a symbol of exe. */
static int file_offset(const char *exe, const char *symbol, enum elfsym_kind kind, uint64_t *ret)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC), k;

	if (fd < 0)
		return -errno;
	k = elfsym_resolve(fd, symbol, 0, kind, ret);
	close(fd);
	return k;
}

/* A number in a sysfs file, after prefix ("config:" in "config:32-63"). */
static int sysfs_int(const char *path, const char *prefix)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f && fgets(buf, sizeof(buf), f) && strncmp(buf, prefix, strlen(prefix)) == 0)
		v = atoi(buf + strlen(prefix));
	if (f)
		fclose(f);
	return v;
}

/* root's own USDT probe at the site, with its semaphore, as perf or bpftrace make it. */
static int root_usdt_probe(const char *exe)
{
	struct perf_event_attr attr = {.size = sizeof(attr)};
	uint64_t site = 0, sem = 0;
	int fd, type, shift;

	if (file_offset(exe, USDT_SITE, ELFSYM_CODE, &site) < 0 ||
	    file_offset(exe, SEMAPHORE, ELFSYM_DATA, &sem) < 0)
		return -ENOENT;
	type = sysfs_int("/sys/bus/event_source/devices/uprobe/type", "");
	shift = sysfs_int("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset", "config:");
	if (type < 0 || shift < 0)
		return -ENOSYS;
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)exe;
	attr.config2 = site;
	attr.config = sem << shift;
	fd = (int)syscall(__NR_perf_event_open, &attr, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void test_plain_probe_on_foreign_usdt_site(void **state)
{
	struct target p = {};
	int refused, fd;

	assert_int_equal(target_start(&prober, true, root_exe, &p), 0);
	assert_int_equal(ctl(&prober, "load", harness_object("uprobe"), "--name", "site", NULL), 0);
	/* A plain probe at the USDT site (which has a semaphore) of root's binary. */
	refused = attach_uprobe(&prober, &(struct uprobe_args){.object = "site",
							       .exe = root_exe,
							       .where = USDT_SITE,
							       .pid = p.pid,
							       .refusal = "USDT"});
	/* The real USDT users (root here) must still probe it, with its semaphore. */
	fd = root_usdt_probe(root_exe);
	if (fd < 0)
		fprintf(stderr, "root's USDT probe at %s:%s: %s\n", root_exe, USDT_SITE,
			strerror(-fd));
	else
		close(fd);
	assert_int_equal(ctl(&prober, "unload", "site", NULL), 0);
	target_stop(&p);
	assert_int_equal(refused, 0);
	assert_true(fd >= 0);
	/* In the prober's own copy its USDT site is its own to probe. */
	assert_int_equal(target_start(&prober, true, own_exe, &p), 0);
	assert_int_equal(ctl(&prober, "load", harness_object("uprobe"), "--name", "site2", NULL),
			 0);
	assert_int_equal(attach_uprobe(&prober, &(struct uprobe_args){.object = "site2",
								      .exe = own_exe,
								      .where = USDT_SITE,
								      .pid = p.pid,
								      .expect_ok = true}),
			 0);
	assert_int_equal(ctl(&prober, "unload", "site2", NULL), 0);
	target_stop(&p);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096], built[600];

	if (harness_init() < 0)
		return -1;
	snprintf(built, sizeof(built), "%s/tests/integration/uprobe_target", H.build_dir);
	snprintf(root_exe, sizeof(root_exe), "%s/uprobe_target_root", H.dir);
	snprintf(own_exe, sizeof(own_exe), "%s/uprobe_target_own", H.dir);
	if (harness_copy_file(built, root_exe, 0, 0755) < 0 ||
	    harness_copy_file(built, own_exe, UID_PROBER, 0755) < 0) {
		fprintf(stderr, "cannot copy %s: %m\n", built);
		return -1;
	}
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"map_types\": [\"prog_array\"],"
		 "   \"maps\": [{\"name\": \"victim_events\", \"access\": \"consume\"},"
		 "            {\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"shared\": [{\"owner\": \"%d\", \"object\": \"vict*\", \"map\": "
		 "\"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"shared\": [{\"owner\": \"%d\", \"object\": \"vict*\", \"map\": "
		 "\"*\", \"access\": \"rw\"}]}, \"limits\": {\"max_map_memory_bytes\": 1}},"
		 " {\"match\": {\"uids\": [\"100000-165535\"]},"
		 "  \"allow\": {\"program_types\": [\"xdp\", \"sched_cls\"], \"helper_classes\": "
		 "[\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}],"
		 "   \"attach\": {\"interfaces\": [\"veth*\"]}}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"kprobe\"], \"helper_classes\": [\"base\"],"
		 "   \"maps\": [{\"name\": \"*\", \"access\": \"ro\"}],"
		 "   \"attach\": {\"uprobes\": true}}}"
		 "]}",
		 UID_VICTIM, UID_ATTACKER, UID_POLICY_SHAREE, UID_VICTIM, UID_POOR_SHAREE,
		 UID_VICTIM, UID_PROBER, UID_BYSTANDER);
	if (harness_write_policy("50-shares.json", policy) < 0)
		return -1;
	/* A veth pair of the host's, which the container range's "veth*" matches. */
	run_ip((const char *const[]){"ip", "link", "del", HOST_VETH, NULL});
	veth_made = run_ip((const char *const[]){"ip", "link", "add", HOST_VETH, "type", "veth",
						 "peer", "name", HOST_VETH_PEER, NULL}) == 0;
	if (!veth_made)
		fprintf(stderr, "cannot make the veth pair " HOST_VETH "\n");
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	int k = harness_finish();

	if (veth_made && run_ip((const char *const[]){"ip", "link", "del", HOST_VETH, NULL}) < 0) {
		fprintf(stderr, "cannot remove " HOST_VETH "\n");
		k = -1;
	}
	return k < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prog_array_share),
		cmocka_unit_test(test_freeze_by_recipient),
		cmocka_unit_test(test_share_writes_through_broker),
		cmocka_unit_test(test_btf_of_others),
		cmocka_unit_test(test_btf_charged_to_sharee),
		cmocka_unit_test(test_shares_name_no_user),
		cmocka_unit_test(test_ring_buffers_not_shared),
		cmocka_unit_test(test_interfaces_host_netns),
		cmocka_unit_test(test_interfaces_own_netns),
		cmocka_unit_test(test_host_interfaces),
		cmocka_unit_test(test_semaphore_on_foreign_binary),
		cmocka_unit_test(test_semaphore_on_own_binary),
		cmocka_unit_test(test_plain_probe_on_foreign_usdt_site),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
