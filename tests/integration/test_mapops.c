/* SPDX-License-Identifier: MIT */
/*
 * Map operations through the broker (method "map") for clients that cannot
 * use bpf(): before Linux 6.5, kernel.unprivileged_bpf_disabled makes every
 * bpf() call of a process without CAP_BPF fail with EPERM, even a lookup on
 * a map fd it holds. The clients here get the same EPERM from a seccomp
 * filter, on this kernel: libbpfbroker and bpfctl must notice and go through
 * the broker, with exactly the access the policy grants (ro reads, wo
 * writes, none nothing, others' unshared maps not found). Without the filter
 * the same calls must use the fd, and behave the same.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "harness.h"

#define UID_OWNER 4401 /* loads "mo": config_map ro, events_wo wo, secret none, the rest rw */
#define UID_OTHER 4402 /* the same rights over its own objects, none over the owner's */
#define UID_READER 4403 /* the policy shares the owner's "counts" with it, ro */

static const struct user owner = {UID_OWNER, UID_OWNER};
static const struct user other = {UID_OTHER, UID_OTHER};
static const struct user reader = {UID_READER, UID_READER};

static char out[16384], daemon_log[400], saved_unpriv_bpf[16];

static int ctl(const struct user *u, ...)
{
	va_list ap;
	int k;

	va_start(ap, u);
	k = harness_bpfctl_va(u, out, sizeof(out), ap);
	va_end(ap);
	return k;
}

/* ---- library clients ---- */

static const char *code_of(const struct bpfbroker_error *e)
{
	return e && e->code ? e->code : "(no error reply)";
}

static int open_map(struct bpfbroker *b, const char *object, const char *map,
		    struct bpfbroker_map_handle **h)
{
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_map_open(b, object, map, h, &e);

	if (k < 0)
		fprintf(stderr, "open %s/%s: %s\n", object, map, e ? e->message : strerror(-k));
	bpfbroker_error_free(e);
	return k;
}

/* A lookup's result; *answered: whether the broker answered with an error. */
static int lookup(struct bpfbroker_map_handle *h, uint32_t key, void *value, bool *answered)
{
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_map_lookup_elem(h, &key, value, &e);

	*answered = e != NULL;
	bpfbroker_error_free(e);
	return k;
}

static int update(struct bpfbroker_map_handle *h, uint32_t key, const void *value, uint64_t flags,
		  char *msg, size_t size)
{
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_map_update_elem(h, &key, value, flags, &e);

	if (msg)
		snprintf(msg, size, "%s: %s", e ? e->code : "-", e ? e->message : "");
	bpfbroker_error_free(e);
	return k;
}

static int delete (struct bpfbroker_map_handle *h, uint32_t key)
{
	return bpfbroker_map_delete_elem(h, &key, NULL);
}

/* Every entry of a u32 -> u64 map, a page of max at a time: how many, checked by check(). */
static int dump_all(struct bpfbroker_map_handle *h, uint32_t max, bool (*check)(uint32_t, uint64_t),
		    unsigned *ret_pages)
{
	_cleanup_free_ uint32_t *keys = calloc(max, sizeof(uint32_t));
	_cleanup_free_ uint64_t *values = calloc(max, sizeof(uint64_t));
	uint32_t cursor = 0, n = 0, total = 0;
	bool done = false, first = true;
	unsigned pages = 0;

	if (!keys || !values)
		return -ENOMEM;
	while (!done) {
		int k = bpfbroker_map_dump(h, first ? NULL : &cursor, keys, values, max, &n,
					   &cursor, &done, NULL);

		if (k < 0)
			return k;
		first = false;
		pages++;
		for (uint32_t i = 0; i < n; i++)
			if (check && !check(keys[i], values[i]))
				return -EBADMSG;
		total += n;
		if (pages > 1000)
			return -ELOOP;
	}
	*ret_pages = pages;
	return (int)total;
}

static bool value_is_three_times_key(uint32_t key, uint64_t value)
{
	return value == (uint64_t)key * 3;
}

/* Operations on the owner's rw maps; arg says whether they must be proxied. */
static int client_rw_ops(void *arg)
{
	bool want_proxied = arg != NULL;
	const struct bpfbroker_map_info *info;
	struct bpfbroker_map_handle *counts, *big, *pcpu, *points;
	struct bpfbroker *b;
	uint64_t v = 42, got = 0;
	uint32_t key = 0, next = 0, n_cpus = (uint32_t)libbpf_num_possible_cpus();
	bool answered;
	unsigned pages = 0;
	char msg[512];
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(open_map(b, "mo", "counts", &counts) == 0, "open counts");
	info = bpfbroker_map_handle_info(counts);
	CHECK(info->proxied == want_proxied, "counts proxied %d, expected %d", info->proxied,
	      want_proxied);
	CHECK(want_proxied ? info->fd == -1 : info->fd >= 0, "fd %d", info->fd);
	CHECK(info->access == BPFBROKER_ACCESS_RW && info->key_size == 4 && info->value_size == 8 &&
		      info->value_bytes == 8 && info->max_entries == 4 &&
		      strcmp(info->type, "array") == 0,
	      "counts: %s %s %u %u %zu %u", bpfbroker_access_to_string(info->access), info->type,
	      info->key_size, info->value_size, info->value_bytes, info->max_entries);

	/* lookup, update, next key on an array */
	CHECK(update(counts, 1, &v, BPF_ANY, msg, sizeof(msg)) == 0, "update: %s", msg);
	CHECK(lookup(counts, 1, &got, &answered) == 0 && got == 42, "lookup: %llu",
	      (unsigned long long)got);
	CHECK(lookup(counts, 9, &got, &answered) == -ENOENT && !answered, "lookup past the end");
	CHECK(bpfbroker_map_get_next_key(counts, NULL, &next, NULL) == 0 && next == 0, "first key");
	key = 3;
	CHECK(bpfbroker_map_get_next_key(counts, &key, &next, NULL) == -ENOENT, "key after last");
	CHECK(delete (counts, 1) == -EINVAL, "array delete");

	/* flags, a full hash, and dumps over several pages */
	CHECK(open_map(b, "mo", "big", &big) == 0, "open big");
	v = 1;
	k = update(big, 1000, &v, BPF_EXIST, msg, sizeof(msg));
	CHECK(k == -ENOENT, "BPF_EXIST on a missing key: %d %s", k, msg);
	for (uint32_t i = 0; i < 300; i++) {
		v = (uint64_t)i * 3;
		k = update(big, i, &v, BPF_NOEXIST, msg, sizeof(msg));
		CHECK(k == 0, "update %u: %d %s", i, k, msg);
	}
	k = update(big, 7, &v, BPF_NOEXIST, msg, sizeof(msg));
	CHECK(k == -EEXIST, "BPF_NOEXIST on a key there: %d %s", k, msg);
	CHECK(!want_proxied || strstr(msg, "BPF_NOEXIST"), "no hint: %s", msg);
	k = update(big, 1000, &v, BPF_ANY, msg, sizeof(msg));
	CHECK(k == -E2BIG, "update of a full map: %d %s", k, msg);
	k = dump_all(big, 64, value_is_three_times_key, &pages);
	CHECK(k == 300 && pages >= 5, "dumped %d entries in %u pages", k, pages);
	k = dump_all(big, 1000, value_is_three_times_key, &pages);
	CHECK(k == 300, "dumped %d entries in %u pages of up to 1000", k, pages);
	CHECK(delete (big, 5) == 0 && delete (big, 5) == -ENOENT, "delete");
	CHECK(lookup(big, 5, &got, &answered) == -ENOENT, "lookup after delete");
	for (uint32_t i = 0; i < 300; i++)
		(void)delete (big, i);
	CHECK(dump_all(big, 64, NULL, &pages) == 0 && pages == 1, "not empty");

	/* per-CPU: a value per possible CPU, each padded to 8 bytes */
	CHECK(open_map(b, "mo", "pcpu", &pcpu) == 0, "open pcpu");
	info = bpfbroker_map_handle_info(pcpu);
	CHECK(info->n_cpus == n_cpus && info->value_bytes == 8 * (size_t)n_cpus,
	      "pcpu: %u cpus, %zu bytes", info->n_cpus, info->value_bytes);
	{
		_cleanup_free_ uint64_t *in = calloc(n_cpus, 8), *back = calloc(n_cpus, 8);

		CHECK(in && back, "calloc");
		for (uint32_t c = 0; c < n_cpus; c++)
			in[c] = 100 + c;
		CHECK(update(pcpu, 1, in, BPF_ANY, msg, sizeof(msg)) == 0, "pcpu update: %s", msg);
		CHECK(lookup(pcpu, 1, back, &answered) == 0, "pcpu lookup");
		for (uint32_t c = 0; c < n_cpus; c++)
			CHECK((uint32_t)back[c] == 100 + c, "cpu %u reads %llu", c,
			      (unsigned long long)back[c]);
	}

	/* BTF, for pretty-printing: from the fd, or sent by the broker */
	CHECK(open_map(b, "mo", "points", &points) == 0, "open points");
	info = bpfbroker_map_handle_info(points);
	CHECK(info->btf_value_type_id != 0, "points has no BTF value type");
	{
		_cleanup_free_ void *data = NULL;
		size_t size = 0;
		struct btf *btf;
		const struct btf_type *t;

		CHECK(bpfbroker_map_btf(points, &data, &size, NULL) == 0, "btf");
		btf = btf__new(data, (uint32_t)size);
		CHECK(!libbpf_get_error(btf), "btf__new");
		t = btf__type_by_id(btf, info->btf_value_type_id);
		CHECK(t && strcmp(btf__name_by_offset(btf, t->name_off), "point") == 0,
		      "value type is not struct point");
		btf__free(btf);
	}

	bpfbroker_map_close(points);
	bpfbroker_map_close(pcpu);
	bpfbroker_map_close(big);
	bpfbroker_map_close(counts);
	bpfbroker_close(b);
	return 0;
}

/* The owner's ro, wo and none maps: refused alike on either path. */
static int client_modes(void *arg)
{
	bool proxied = arg != NULL;
	struct bpfbroker_map_handle *h;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint64_t v = 1, got;
	uint32_t key = 0, next;
	bool answered;
	char msg[512];
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");

	/* ro: reads only */
	CHECK(open_map(b, "mo", "config_map", &h) == 0, "open config_map");
	CHECK(bpfbroker_map_handle_info(h)->access == BPFBROKER_ACCESS_RO, "config_map not ro");
	CHECK(lookup(h, 0, &got, &answered) == 0, "ro lookup");
	k = update(h, 0, &v, BPF_ANY, msg, sizeof(msg));
	CHECK(k == -EPERM, "ro update: %d %s", k, msg);
	CHECK(!proxied || (strstr(msg, "policy-denied") && strstr(msg, "read-only")),
	      "ro update message: %s", msg);
	CHECK(delete (h, 0) == -EPERM, "ro delete");
	bpfbroker_map_close(h);

	/* wo: writes only */
	CHECK(open_map(b, "mo", "events_wo", &h) == 0, "open events_wo");
	CHECK(update(h, 3, &v, BPF_ANY, msg, sizeof(msg)) == 0, "wo update: %s", msg);
	k = bpfbroker_map_lookup_elem(h, &key, &got, &e);
	CHECK(k == -EPERM, "wo lookup: %d", k);
	CHECK(!proxied || (e && strcmp(e->code, "policy-denied") == 0 &&
			   strstr(e->message, "write-only")),
	      "wo lookup message: %s", e ? e->message : "none");
	bpfbroker_error_free(e);
	e = NULL;
	CHECK(bpfbroker_map_get_next_key(h, NULL, &next, NULL) == -EPERM, "wo next key");
	{
		uint32_t keys[4], n = 0, cursor;
		uint64_t values[4];
		bool done;

		k = bpfbroker_map_dump(h, NULL, keys, values, 4, &n, &cursor, &done, NULL);
		CHECK(k == -EPERM, "wo dump: %d", k);
	}
	CHECK(delete (h, 3) == 0, "wo delete");
	bpfbroker_map_close(h);

	/* none: no handle; a map the object lacks: not found */
	k = bpfbroker_map_open(b, "mo", "secret", &h, &e);
	CHECK(k == -EACCES, "open of a none map: %d %s", k, e ? e->message : "-");
	bpfbroker_error_free(e);
	e = NULL;
	k = bpfbroker_map_open(b, "mo", "nosuch", &h, &e);
	CHECK(k == -ENOENT, "open of a missing map: %d", k);
	bpfbroker_error_free(e);
	e = NULL;
	k = bpfbroker_map_open(b, "nosuch", "counts", &h, &e);
	CHECK(k == -ENOENT && e && strcmp(e->code, "not-found") == 0, "missing object: %d %s", k,
	      code_of(e));
	bpfbroker_error_free(e);
	e = NULL;

	/* prog array: values are fds, which the broker won't resolve in its own process */
	CHECK(open_map(b, "mo", "progs", &h) == 0, "open progs");
	CHECK(lookup(h, 0, &got, &answered) == -ENOENT, "empty prog array lookup");
	if (proxied) {
		uint32_t fdnum = 0;

		k = update(h, 0, &fdnum, BPF_ANY, msg, sizeof(msg));
		CHECK(k == -EOPNOTSUPP && strstr(msg, "file descriptors"),
		      "prog array update: %d %s", k, msg);
	}
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

/* Someone the owner's map is not shared with, and someone it is shared with (ro). */
static int client_others(void *arg)
{
	bool reader_side = arg != NULL;
	struct bpfbroker_map_handle *h;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	uint64_t v = 9, got = 0;
	bool answered;
	char ref[32], msg[512];
	int k;

	snprintf(ref, sizeof(ref), "%u/mo", UID_OWNER);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	if (!reader_side) {
		k = bpfbroker_map_open(b, ref, "counts", &h, &e);
		CHECK(k == -ENOENT && e && strcmp(e->code, "not-found") == 0,
		      "another user's unshared map: %d %s", k, code_of(e));
		bpfbroker_error_free(e);
		bpfbroker_close(b);
		return 0;
	}
	CHECK(open_map(b, ref, "counts", &h) == 0, "open shared counts");
	CHECK(bpfbroker_map_handle_info(h)->access == BPFBROKER_ACCESS_RO, "shared counts not ro");
	CHECK(lookup(h, 1, &got, &answered) == 0, "shared lookup");
	k = update(h, 1, &v, BPF_ANY, msg, sizeof(msg));
	CHECK(k == -EPERM, "update of a map shared ro: %d %s", k, msg);
	bpfbroker_map_close(h);
	k = bpfbroker_map_open(b, ref, "config_map", &h, &e);
	CHECK(k == -ENOENT, "a map not shared: %d", k);
	bpfbroker_error_free(e);
	bpfbroker_close(b);
	return 0;
}

/* ---- tests ---- */

static void load_mo(void)
{
	H.client_setup = NULL;
	(void)ctl(&owner, "unload", "mo", NULL); /* what a failed test left */
	assert_int_equal(ctl(&owner, "load", harness_object("mapops"), "--name", "mo", NULL), 0);
}

static void unload_mo(void)
{
	H.client_setup = NULL;
	assert_int_equal(ctl(&owner, "unload", "mo", NULL), 0);
}

/* The library on both paths: the fd where bpf() works, the broker where it doesn't. */
static void test_library(void **state)
{
	load_mo();
	assert_int_equal(harness_as_user(&owner, client_rw_ops, NULL), 0);
	assert_int_equal(harness_as_user(&owner, client_modes, NULL), 0);
	assert_int_equal(harness_as_user(&other, client_others, NULL), 0);
	assert_int_equal(harness_as_user(&reader, client_others, "reader"), 0);

	H.client_setup = harness_deny_bpf;
	assert_int_equal(harness_as_user(&owner, client_rw_ops, "proxied"), 0);
	assert_int_equal(harness_as_user(&owner, client_modes, "proxied"), 0);
	assert_int_equal(harness_as_user(&other, client_others, NULL), 0);
	assert_int_equal(harness_as_user(&reader, client_others, "reader"), 0);
	unload_mo();
}

/* A map path forced: proxied with bpf() allowed; direct under the filter just fails. */
static int client_forced(void *arg)
{
	struct bpfbroker_map_handle *h;
	struct bpfbroker *b;
	uint64_t got;
	bool answered;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(bpfbroker_set_map_path(b, 7) == -EINVAL, "bad path");
	if (arg) {
		CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_DIRECT) == 0, "set direct");
		CHECK(open_map(b, "mo", "counts", &h) == 0, "open");
		CHECK(!bpfbroker_map_handle_info(h)->proxied, "proxied");
		CHECK(lookup(h, 0, &got, &answered) == -EPERM && !answered,
		      "direct lookup under the filter");
	} else {
		CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "set proxy");
		CHECK(open_map(b, "mo", "counts", &h) == 0, "open");
		CHECK(bpfbroker_map_handle_info(h)->proxied, "not proxied");
		CHECK(lookup(h, 0, &got, &answered) == 0, "proxied lookup");
	}
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

static void test_forced_path(void **state)
{
	load_mo();
	assert_int_equal(harness_as_user(&owner, client_forced, NULL), 0);
	H.client_setup = harness_deny_bpf;
	assert_int_equal(harness_as_user(&owner, client_forced, "direct"), 0);
	unload_mo();
}

/* Does the daemon's log have an audit record with all these words? */
static bool log_has(const char *a, const char *b, const char *c)
{
	char line[2048];
	FILE *f = fopen(daemon_log, "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && strstr(line, b) && (!c || strstr(line, c));
	fclose(f);
	return found;
}

static bool round_proxy_option;

/* bpfctl as u, with --proxy in front while round_proxy_option is set. */
static int mctl(const struct user *u, ...)
{
	const char *args[32];
	size_t n = 0;
	va_list ap;

	if (round_proxy_option)
		args[n++] = "--proxy";
	va_start(ap, u);
	while (n < 31 && (args[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	return harness_bpfctl(u, out, sizeof(out), args);
}

/* bpfctl map as the owner, others and a reader: how is "--proxy", "env" or NULL. */
static void bpfctl_round(const char *how, bool proxied)
{
	char dump[sizeof(out)], uid[32];

	snprintf(uid, sizeof(uid), "uid=%u", UID_OWNER);
	if (how && strcmp(how, "env") == 0)
		setenv("BPFBROKER_MAP_PROXY", "1", 1);
	round_proxy_option = how && strcmp(how, "--proxy") == 0;
	assert_int_equal(truncate(daemon_log, 0), 0);
	assert_int_equal(mctl(&owner, "-j", "map", "update", "mo/counts", "02000000",
			      "0700000000000000", NULL),
			 0);
	assert_int_equal(mctl(&owner, "-j", "map", "lookup", "mo/counts", "02000000", NULL), 0);
	assert_non_null(strstr(out, "7"));
	assert_int_equal(mctl(&owner, "-j", "map", "dump", "mo/counts", NULL), 0);
	snprintf(dump, sizeof(dump), "%s", out);
	assert_int_equal(mctl(&owner, "-j", "map", "update", "mo/points", "01000000",
			      "0200000003000000", NULL),
			 0);
	assert_int_equal(mctl(&owner, "map", "lookup", "mo/points", "01000000", NULL), 0);
	assert_non_null(strstr(out, ".y = 3")); /* pretty-printed from BTF on both paths */
	assert_int_equal(mctl(&owner, "map", "update", "mo/pcpu", "00000000", "05000000", NULL), 0);
	assert_int_equal(mctl(&owner, "map", "lookup", "mo/pcpu", "00000000", NULL), 0);
	assert_non_null(strstr(out, "cpu 0: value: 5"));
	/* --noexist: a key that is there is refused by the kernel, exit 1 */
	assert_int_equal(mctl(&owner, "map", "update", "--noexist", "mo/events_wo", "04000000",
			      "0100000000000000", NULL),
			 0);
	assert_int_equal(mctl(&owner, "map", "update", "--noexist", "mo/events_wo", "04000000",
			      "0100000000000000", NULL),
			 1);
	assert_int_equal(mctl(&owner, "map", "update", "--exist", "mo/events_wo", "05000000",
			      "0100000000000000", NULL),
			 1);
	assert_int_equal(mctl(&owner, "map", "delete", "mo/events_wo", "04000000", NULL), 0);
	/* modes: exit 1 and a clear message on both paths */
	assert_int_equal(mctl(&owner, "map", "update", "mo/config_map", "00000000",
			      "0100000000000000", NULL),
			 1);
	assert_int_equal(mctl(&owner, "map", "lookup", "mo/events_wo", "00000000", NULL), 1);
	assert_int_equal(mctl(&owner, "map", "dump", "mo/secret", NULL), 1);
	assert_int_equal(mctl(&owner, "map", "dump", "mo/nosuch", NULL), 1);
	assert_int_equal(mctl(&other, "map", "dump", "4401/mo/counts", NULL), 1);
	assert_int_equal(mctl(&reader, "map", "dump", "4401/mo/counts", NULL), 0);
	assert_int_equal(mctl(&reader, "map", "update", "4401/mo/counts", "00000000",
			      "0100000000000000", NULL),
			 1);
	/* A wrong key size never reaches the kernel (or the broker). */
	assert_int_equal(mctl(&owner, "map", "lookup", "mo/counts", "00", NULL), 2);
	unsetenv("BPFBROKER_MAP_PROXY");
	round_proxy_option = false;

	/* Which path it was: the broker audits each proxied write, the fds for each direct one. */
	assert_true(log_has("event=map", uid, "target=update") == proxied);
	assert_true(log_has("event=fds", uid, NULL) == !proxied);
	if (proxied)
		assert_true(log_has("event=map", "decision=deny", "read-only"));

	/* The output is the same whichever path made it. */
	{
		static char first[sizeof(out)];

		if (!first[0])
			snprintf(first, sizeof(first), "%s", dump);
		else
			assert_string_equal(dump, first);
	}
}

static void test_bpfctl(void **state)
{
	load_mo();
	bpfctl_round(NULL, false);
	bpfctl_round("--proxy", true);
	bpfctl_round("env", true);
	H.client_setup = harness_deny_bpf;
	bpfctl_round(NULL, true);
	unload_mo();
}

/*
 * With unprivileged BPF on, the broker withholds ro and wo map fds (anyone's
 * socket filter could write a map it holds an ro fd of). The library then
 * proxies, where no fd is handed out: reads of ro maps keep working.
 */
static int sysctl_unpriv_bpf(const char *value, char *old, size_t size)
{
	int fd = open("/proc/sys/kernel/unprivileged_bpf_disabled", O_RDWR | O_CLOEXEC);
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (old && (n = read(fd, old, size - 1)) > 0)
		old[n] = '\0';
	if (pwrite(fd, value, strlen(value), 0) < 0) {
		int k = -errno;

		close(fd);
		return k;
	}
	close(fd);
	return 0;
}

static int client_guarded(void *arg)
{
	struct bpfbroker_map_handle *h;
	struct bpfbroker *b;
	uint64_t got, v = 1;
	bool answered;
	char msg[512];

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	CHECK(open_map(b, "mo", "config_map", &h) == 0, "open config_map");
	CHECK(bpfbroker_map_handle_info(h)->proxied, "ro map with the guard on: not proxied");
	CHECK(lookup(h, 0, &got, &answered) == 0, "lookup");
	CHECK(update(h, 0, &v, BPF_ANY, msg, sizeof(msg)) == -EPERM, "ro update: %s", msg);
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

static void test_guard_falls_back(void **state)
{
	int k;

	load_mo();
	k = sysctl_unpriv_bpf("0", saved_unpriv_bpf, sizeof(saved_unpriv_bpf));
	if (k < 0) {
		/* 1 cannot be undone without a reboot: then nothing to test. */
		fprintf(stderr, "kernel.unprivileged_bpf_disabled cannot be set to 0: %s\n",
			strerror(-k));
		saved_unpriv_bpf[0] = '\0';
		unload_mo();
		skip();
	}
	k = harness_as_user(&owner, client_guarded, NULL);
	assert_int_equal(sysctl_unpriv_bpf(saved_unpriv_bpf, NULL, 0), 0);
	saved_unpriv_bpf[0] = '\0';
	assert_int_equal(k, 0);
	unload_mo();
}

/* A map of maps: readable (inner map ids), never writable, on either path. */
static int client_map_of_maps(void *arg)
{
	struct bpfbroker_map_handle *h;
	struct bpfbroker *b;
	uint32_t inner_id = 0, fdnum = 0;
	bool answered;
	char msg[512];
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	if (arg)
		CHECK(bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY) == 0, "set proxy");
	CHECK(open_map(b, "mim", "outer", &h) == 0, "open outer");
	CHECK(bpfbroker_map_handle_info(h)->access == BPFBROKER_ACCESS_RO,
	      "a map of maps handed out %s",
	      bpfbroker_access_to_string(bpfbroker_map_handle_info(h)->access));
	CHECK(lookup(h, 0, &inner_id, &answered) == 0 && inner_id != 0, "outer lookup: id %u",
	      inner_id);
	k = update(h, 0, &fdnum, BPF_ANY, msg, sizeof(msg));
	CHECK(k == -EPERM, "map of maps update: %d %s", k, msg);
	CHECK(!arg || strstr(msg, "map_insert"), "message: %s", msg);
	CHECK(delete (h, 0) == -EPERM, "map of maps delete");
	bpfbroker_map_close(h);
	bpfbroker_close(b);
	return 0;
}

static void test_map_of_maps(void **state)
{
	(void)ctl(&owner, "unload", "mim", NULL);
	assert_int_equal(ctl(&owner, "load", harness_object("mapinmap"), "--name", "mim", NULL), 0);
	assert_int_equal(harness_as_user(&owner, client_map_of_maps, NULL), 0);
	assert_int_equal(harness_as_user(&owner, client_map_of_maps, "proxied"), 0);
	assert_int_equal(ctl(&owner, "unload", "mim", NULL), 0);
}

/* Requests the worker must refuse after decoding: sizes against the map. */
static int client_bad_requests(void *arg)
{
	static const struct {
		const char *params, *code, *text;
	} cases[] = {
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"lookup\",\"key\":\"00\"}",
		 "invalid-request", "4-byte keys"},
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"update\",\"key\":\"00000000\","
		 "\"value\":\"00\"}",
		 "invalid-request", "8-byte values"},
		{"{\"object\":\"mo\",\"map\":\"pcpu\",\"op\":\"update\",\"key\":\"00000000\","
		 "\"value\":\"00000000\"}",
		 "invalid-request", "per-CPU"},
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"dump\",\"cursor\":\"0000\"}",
		 "invalid-request", "cursor"},
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"lookup\",\"key\":\"00000000\","
		 "\"value\":\"00\"}",
		 "invalid-request", "takes no \\\"value\\\""},
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"frob\"}", "invalid-request",
		 "\\\"op\\\" must be"},
		{"{\"object\":\"mo\",\"map\":\"counts\",\"op\":\"dump\",\"count\":0}",
		 "invalid-request", "count"},
		{"{\"object\":\"mo\",\"map\":\"secret\",\"op\":\"info\"}", "policy-denied",
		 "no access"},
		{"{\"object\":\"../mo\",\"map\":\"counts\",\"op\":\"info\"}", "not-found", ""},
	};
	struct bpfbroker *b;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char req[1024], *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0;

		snprintf(req, sizeof(req),
			 "{\"bpfbroker\":1,\"id\":%zu,\"method\":\"map\",\"params\":%s}", i + 1,
			 cases[i].params);
		CHECK(bpfbroker_call_raw(b, req, NULL, 0, &reply, &fds, &n_fds) == 0, "call %zu",
		      i);
		CHECK(strstr(reply, cases[i].code) && strstr(reply, cases[i].text) && n_fds == 0,
		      "case %zu: %s", i, reply);
		free(reply);
		free(fds);
	}
	/* A key over the broker's bound: too large, before anything is opened. */
	{
		char req[2048], *reply = NULL;
		int *fds = NULL;
		size_t n_fds = 0, n;

		n = (size_t)snprintf(
			req, sizeof(req),
			"{\"bpfbroker\":1,\"id\":99,\"method\":\"map\",\"params\":"
			"{\"object\":\"mo\",\"map\":\"big\",\"op\":\"lookup\",\"key\":\"");
		memset(req + n, 'a', 2 * 513);
		snprintf(req + n + 2 * 513, sizeof(req) - n - 2 * 513, "\"}}");
		CHECK(bpfbroker_call_raw(b, req, NULL, 0, &reply, &fds, &n_fds) == 0, "call");
		CHECK(strstr(reply, "too-large"), "long key: %s", reply);
		free(reply);
		free(fds);
	}
	bpfbroker_close(b);
	return 0;
}

/*
 * A map op refused for an access the map's type never allows names no key:
 * ring buffers give their owner consume at most, never reads; a shared prog
 * array is at most ro for others, whatever the share says. raw is the reply.
 */
static int map_call(const char *params, char **reply)
{
	char req[512];
	struct bpfbroker *b;
	int *fds = NULL, k;
	size_t n_fds = 0;

	snprintf(req, sizeof(req), "{\"bpfbroker\":1,\"id\":1,\"method\":\"map\",\"params\":%s}",
		 params);
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_call_raw(b, req, NULL, 0, reply, &fds, &n_fds);
	bpfbroker_close(b);
	free(fds);
	return k;
}

/* A refusal's reply with the key "" (no policy can allow it). */
static bool no_key(const char *reply)
{
	return (strstr(reply, "\"key\":\"\"") || strstr(reply, "\"key\": \"\"")) &&
	       !strstr(reply, "(policy key");
}

static int client_ringbuf_read(void *arg)
{
	char *reply = NULL;

	CHECK(map_call("{\"object\":\"rb\",\"map\":\"events\",\"op\":\"lookup\","
		       "\"key\":\"00000000\"}",
		       &reply) == 0,
	      "call");
	CHECK(strstr(reply, "policy-denied") && no_key(reply), "a ring buffer read: %s", reply);
	free(reply);
	return 0;
}

static int client_shared_prog_array_write(void *arg)
{
	char params[256], *reply = NULL;

	snprintf(params, sizeof(params),
		 "{\"object\":\"%u/mo\",\"map\":\"progs\",\"op\":\"delete\","
		 "\"key\":\"00000000\"}",
		 UID_OWNER);
	CHECK(map_call(params, &reply) == 0, "call");
	CHECK(strstr(reply, "policy-denied") && no_key(reply), "a shared prog array write: %s",
	      reply);
	free(reply);
	return 0;
}

static void test_no_grant_gives_it(void **state)
{
	load_mo();
	(void)ctl(&owner, "unload", "rb", NULL);
	assert_int_equal(ctl(&owner, "load", harness_object("ringbuf"), "--name", "rb", NULL), 0);
	assert_int_equal(harness_as_user(&owner, client_ringbuf_read, NULL), 0);
	assert_int_equal(harness_as_user(&reader, client_shared_prog_array_write, NULL), 0);
	assert_int_equal(ctl(&owner, "unload", "rb", NULL), 0);
	unload_mo();
}

static void test_bad_requests(void **state)
{
	load_mo();
	assert_int_equal(harness_as_user(&owner, client_bad_requests, NULL), 0);
	unload_mo();
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[2048];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps_of_maps\": true, \"map_types\": [\"prog_array\"],"
		 "   \"maps\": [{\"name\": \"config_map\", \"access\": \"ro\"},"
		 "            {\"name\": \"events_wo\", \"access\": \"wo\"},"
		 "            {\"name\": \"secret\", \"access\": \"none\"},"
		 "            {\"name\": \"events\", \"access\": \"consume\"},"
		 "            {\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"shared\": [{\"owner\": \"%d\", \"object\": \"mo\", \"map\": "
		 "\"counts\", \"access\": \"ro\"},"
		 "   {\"owner\": \"%d\", \"object\": \"mo\", \"map\": \"progs\", \"access\": "
		 "\"rw\"}]}}"
		 "]}",
		 UID_OWNER, UID_OTHER, UID_READER, UID_OWNER, UID_OWNER);
	if (harness_write_policy("50-mapops.json", policy) < 0)
		return -1;
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	H.client_setup = NULL;
	if (saved_unpriv_bpf[0])
		sysctl_unpriv_bpf(saved_unpriv_bpf, NULL, 0);
	if (harness_stop() < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_library, harness_clear_client_setup),
		cmocka_unit_test_teardown(test_forced_path, harness_clear_client_setup),
		cmocka_unit_test_teardown(test_bpfctl, harness_clear_client_setup),
		cmocka_unit_test(test_guard_falls_back),
		cmocka_unit_test(test_map_of_maps),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_no_grant_gives_it),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
