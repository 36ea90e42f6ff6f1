/* SPDX-License-Identifier: MIT */
/*
 * Events and counters without a system call per read, end to end: ring
 * buffers granted consume, read with the library's consumer, and mmapable
 * arrays read through a mapping, by clients as unprivileged uids, with the
 * real daemon and kernel. Every claim SECURITY.md makes about what these fds
 * allow is tried here on the fds the broker hands out.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"

#define UID_CONSUMER 65534 /* events: consume, counts: ro */
#define UID_RW 4401 /* everything rw */
#define UID_RO 4402 /* everything ro */
#define UID_WO 4403 /* everything wo */
#define UID_NESTER 4404 /* maps of maps; events: consume, the rest rw */
#define UID_SHAREE 4405 /* gets the owner's shares */
#define UID_POLICY_SHAREE 4406 /* the policy shares every map of nobody's "rbshare" rw */

static const struct user consumer = {UID_CONSUMER, UID_CONSUMER};
static const struct user rw_user = {UID_RW, UID_RW};
static const struct user ro_user = {UID_RO, UID_RO};
static const struct user wo_user = {UID_WO, UID_WO};
static const struct user nester = {UID_NESTER, UID_NESTER};
static const struct user sharee = {UID_SHAREE, UID_SHAREE};
static const struct user policy_sharee = {UID_POLICY_SHAREE, UID_POLICY_SHAREE};
static const struct user root = {0, 0};

/* The kernel's internal "not supported" (524), which the bpf() syscall leaks to users. */
#define ENOTSUPP 524

enum { COUNT_PACKETS, COUNT_SUBMITTED, COUNT_LOST, COUNT_DISCARDED };

/* What ringbuf.bpf.c writes per packet. */
struct event {
	uint64_t seq;
	uint32_t len;
	uint8_t fill[12];
} __attribute__((packed));

static char out[16384];
static int ctl(const struct user *u, ...)
{
	va_list ap;
	int k;

	va_start(ap, u);
	k = harness_bpfctl_va(u, out, sizeof(out), ap);
	va_end(ap);
	return k;
}

static const char *message_of(const struct bpfbroker_error *e, int k)
{
	return e ? e->message : strerror(-k);
}

/* Load ringbuf.bpf.o as the current user, named or not, freezing one map or none. */
static int load_ringbuf(const char *object, const char *name, const char *freeze,
			const struct bpfbroker_share *shares, size_t n_shares,
			struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	const char *const freeze_list[] = {freeze};
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts),
					   .name = name,
					   .shares = shares,
					   .n_shares = n_shares,
					   .freeze = freeze ? freeze_list : NULL,
					   .n_freeze = freeze ? 1 : 0};
	struct bpfbroker *b;
	int k = bpfbroker_connect(H.socket, &b);

	if (k < 0)
		return k;
	*err = NULL;
	k = bpfbroker_load_file(b, harness_object(object), &opts, res, err);
	bpfbroker_close(b);
	return k;
}

/* An unnamed load of ringbuf.bpf.o, freezing one map or none: 0, or 1 with the reason said. */
static int load_unnamed(const char *freeze, struct bpfbroker_result **res)
{
	struct bpfbroker_error *err = NULL;
	int k = load_ringbuf("ringbuf", NULL, freeze, NULL, 0, res, &err);

	CHECK(k == 0, "load: %s", message_of(err, k));
	return 0;
}

static int fds_of(const char *ref, struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker *b;
	int k = bpfbroker_connect(H.socket, &b);

	if (k < 0)
		return k;
	*err = NULL;
	k = bpfbroker_fds(b, ref, res, err);
	bpfbroker_close(b);
	return k;
}

/* ---- packets: a UDP socket on lo talking to itself, with the filter attached ---- */

static int udp_open(int prog_fd)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog_fd, sizeof(prog_fd)) < 0) {
		int k = -errno;

		close(fd);
		return k;
	}
	return fd;
}

/* One packet of size bytes to ourselves; once it is received the filter has run on it. */
static int udp_ping(int fd, size_t size)
{
	static uint8_t buf[512];

	if (send(fd, buf, size, 0) != (ssize_t)size || recv(fd, buf, sizeof(buf), 0) < 0)
		return -errno;
	return 0;
}

static uint64_t lookup_count(int fd, uint32_t key)
{
	uint64_t v = UINT64_MAX;

	bpf_map_lookup_elem(fd, &key, &v);
	return v;
}

static int take_prog(struct bpfbroker_result *res)
{
	return bpfbroker_result_take_prog_fd(res, "report_packets");
}

/* ---- mmapable arrays ---- */

/*
 * ro without freezing: the fd is BPF_F_RDONLY, and the kernel maps no such
 * fd, not even read-only (mmap() makes a shared mapping of a file opened
 * without write access private, and BPF maps map only shared). A writable
 * mapping is refused by the VFS before the map is asked.
 */
static int client_mmap_ro(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *counts;
	void *p = NULL;
	size_t len = 0;
	int k;

	if (load_unnamed(NULL, &res))
		return 1;
	counts = bpfbroker_result_map(res, "counts");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_RO && counts->fd >= 0, "counts not ro");
	CHECK(counts->map_flags & BPF_F_MMAPABLE, "map_flags %#x lack BPF_F_MMAPABLE",
	      counts->map_flags);
	CHECK(!counts->frozen, "counts frozen without being asked to");
	CHECK((fcntl(counts->fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "counts fd not O_RDONLY");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, counts->fd, 0);
	CHECK(p == MAP_FAILED && errno == EACCES, "writable mapping of an ro fd: %m");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, counts->fd, 0);
	CHECK(p == MAP_FAILED && errno == EINVAL, "read-only mapping of an ro fd: %m");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, counts->fd, 0);
	CHECK(p == MAP_FAILED && errno == EINVAL, "private mapping of an ro fd: %m");
	k = bpfbroker_map_mmap(counts, &p, &len);
	CHECK(k == -EACCES, "bpfbroker_map_mmap of an unfrozen ro map: %d", k);
	bpfbroker_result_free(res);
	return 0;
}

/*
 * ro of a frozen mmapable array: an O_RDWR fd of a map no fd writes. It maps
 * read-only and shows the counters live; every way to write is refused.
 */
static int client_mmap_frozen(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *counts;
	volatile const uint64_t *v;
	uint32_t key = 0;
	uint64_t value = 7;
	void *p = NULL, *q;
	size_t len = 0;
	int k, sock, prog;

	if (load_unnamed("counts", &res))
		return 1;
	counts = bpfbroker_result_map(res, "counts");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_RO && counts->frozen && counts->fd >= 0,
	      "counts not ro and frozen");
	CHECK((fcntl(counts->fd, F_GETFL) & O_ACCMODE) == O_RDWR, "frozen ro fd not O_RDWR");
	k = bpfbroker_map_mmap(counts, &p, &len);
	CHECK(k == 0, "bpfbroker_map_mmap: %s", strerror(-k));
	CHECK(len == (size_t)sysconf(_SC_PAGESIZE), "mapped %zu bytes", len);
	v = p;

	/* Live: what the program counts shows at once, no system call per read. */
	prog = take_prog(res);
	sock = udp_open(prog);
	CHECK(sock >= 0, "socket: %s", strerror(-sock));
	for (uint64_t i = 1; i <= 5; i++) {
		CHECK(udp_ping(sock, 16) == 0, "ping: %m");
		CHECK(v[COUNT_PACKETS] == i, "mapping shows %llu packets after %llu",
		      (unsigned long long)v[COUNT_PACKETS], (unsigned long long)i);
	}

	/* The fd writes nothing: not through bpf(), not through any mapping. */
	CHECK(bpf_map_update_elem(counts->fd, &key, &value, BPF_ANY) < 0 && errno == EPERM,
	      "update through the frozen fd: %m");
	CHECK(bpf_map_freeze(counts->fd) < 0 && errno == EPERM, "freeze again: %m");
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, counts->fd, 0);
	CHECK(q == MAP_FAILED && errno == EPERM, "writable mapping of a frozen map: %m");
	CHECK(mprotect(p, len, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
	      "mprotect made the read-only mapping writable: %m");
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, counts->fd, 0);
	CHECK(q == MAP_FAILED && errno == EINVAL, "private mapping: %m");
	CHECK(v[COUNT_PACKETS] == 5 && lookup_count(counts->fd, COUNT_PACKETS) == 5,
	      "counters changed");
	munmap(p, len);
	close(sock);
	close(prog);
	bpfbroker_result_free(res);
	return 0;
}

/* rw: a shared writable mapping, both ways. wo: no mapping at all (mmap needs read access). */
static int client_mmap_rw(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *counts;
	volatile uint64_t *v;
	void *p = NULL;
	size_t len = 0;
	int k;

	if (load_unnamed(NULL, &res))
		return 1;
	counts = bpfbroker_result_map(res, "counts");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_RW, "counts not rw");
	k = bpfbroker_map_mmap(counts, &p, &len);
	CHECK(k == 0, "bpfbroker_map_mmap: %s", strerror(-k));
	v = p;
	v[COUNT_DISCARDED] = 42;
	CHECK(lookup_count(counts->fd, COUNT_DISCARDED) == 42, "write through the mapping lost");
	munmap(p, len);
	bpfbroker_result_free(res);
	return 0;
}

static int client_mmap_wo(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *counts;
	void *p = NULL;
	size_t len = 0;

	if (load_unnamed(NULL, &res))
		return 1;
	counts = bpfbroker_result_map(res, "counts");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_WO, "counts not wo");
	CHECK(bpfbroker_map_mmap(counts, &p, &len) == -EACCES, "wo mapped");
	p = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, counts->fd, 0);
	CHECK(p == MAP_FAILED && errno == EACCES, "the kernel mapped a wo fd: %m");
	bpfbroker_result_free(res);
	return 0;
}

/*
 * Globals too: libbpf makes .bss and .rodata mmapable arrays, and freezes
 * .rodata itself (asking again is no error).
 */
static int client_freeze_globals(void *arg)
{
	static const char *const freeze[] = {"configur.bss", "configur.rodata"};
	static const struct bpfbroker_map_size sizes[] = {{"sized_later", 1}};
	static const struct bpfbroker_program_select progs[] = {{"cfg_prog"}};
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts),
					   .map_sizes = sizes,
					   .n_map_sizes = 1,
					   .programs = progs,
					   .n_programs = 1,
					   .freeze = freeze,
					   .n_freeze = 2};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *bss;
	struct bpfbroker *b;
	void *p = NULL;
	size_t len = 0;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_file(b, harness_object("configurable"), &opts, &res, &err);
	bpfbroker_close(b);
	CHECK(k == 0, "load: %s", message_of(err, k));
	bss = bpfbroker_result_map(res, "configur.bss");
	CHECK(bss && bss->access == BPFBROKER_ACCESS_RO && bss->frozen, ".bss not ro and frozen");
	k = bpfbroker_map_mmap(bss, &p, &len);
	CHECK(k == 0, "bpfbroker_map_mmap: %s", strerror(-k));
	CHECK(*(volatile uint64_t *)p == 0, "bss_counter is not 0");
	munmap(p, len);
	bss = bpfbroker_result_map(res, "configur.rodata");
	CHECK(bss && bss->frozen && bpfbroker_map_mmap(bss, &p, &len) == 0, ".rodata not mapped");
	munmap(p, len);
	bpfbroker_result_free(res);
	return 0;
}

static void test_mmap_arrays(void **state)
{
	assert_int_equal(harness_as_user(&consumer, client_mmap_ro, NULL), 0);
	assert_int_equal(harness_as_user(&consumer, client_mmap_frozen, NULL), 0);
	assert_int_equal(harness_as_user(&rw_user, client_mmap_rw, NULL), 0);
	assert_int_equal(harness_as_user(&wo_user, client_mmap_wo, NULL), 0);
	assert_int_equal(harness_as_user(&ro_user, client_freeze_globals, NULL), 0);
	/* A map that is not there is named in the error; nothing is loaded. */
	assert_int_equal(
		ctl(&consumer, "check", harness_object("ringbuf"), "--freeze", "nosuch", NULL), 2);
}

/* ---- ring buffers not granted consume ---- */

static int client_no_consume(void *arg)
{
	struct bpfbroker_result *res = NULL;
	const struct bpfbroker_map *events;

	if (load_unnamed(NULL, &res))
		return 1;
	events = bpfbroker_result_map(res, "events");
	CHECK(events && events->access == BPFBROKER_ACCESS_NONE && events->fd < 0,
	      "a ring buffer not granted consume came as %s (fd %d)",
	      events ? bpfbroker_access_to_string(events->access) : "?", events ? events->fd : -1);
	bpfbroker_result_free(res);
	return 0;
}

static void test_ringbuf_not_granted(void **state)
{
	assert_int_equal(harness_as_user(&ro_user, client_no_consume, NULL), 0);
	assert_int_equal(harness_as_user(&wo_user, client_no_consume, NULL), 0);
	assert_int_equal(harness_as_user(&rw_user, client_no_consume, NULL), 0);
	/* bpfctl run passes no fd for it either. */
	assert_int_equal(ctl(&rw_user, "run", harness_object("ringbuf"), "--", "/bin/sh", "-c",
			     "echo \"$LISTEN_FDNAMES\"", NULL),
			 0);
	assert_null(strstr(out, "events"));
	assert_non_null(strstr(out, "map/counts"));
}

/* ---- consuming ---- */

struct expect {
	uint64_t next_seq; /* the next record's packet number at least (discards skip) */
	uint64_t records;
	size_t payload; /* the UDP payload every packet carries */
	int bad; /* first mismatch found, for the message */
	char why[160];
};

static int check_record(void *ctx, const void *data, size_t size)
{
	struct expect *x = ctx;
	struct event e = {};

	if (size < 12 || size > sizeof(e)) {
		snprintf(x->why, sizeof(x->why), "record of %zu bytes", size);
		return -EBADMSG;
	}
	memcpy(&e, data, size);
	if (e.seq < x->next_seq || e.seq % 7 == 6 || size != 12 + (e.seq & 3) * 4 ||
	    e.len != x->payload + 8) {
		snprintf(x->why, sizeof(x->why),
			 "record seq %llu (expected at least %llu), %zu bytes, len %u",
			 (unsigned long long)e.seq, (unsigned long long)x->next_seq, size, e.len);
		return -EBADMSG;
	}
	for (size_t i = 0; i + 12 < size; i++)
		if (e.fill[i] != (uint8_t)(e.seq + i)) {
			snprintf(x->why, sizeof(x->why), "record seq %llu: byte %zu is %u",
				 (unsigned long long)e.seq, 12 + i, e.fill[i]);
			return -EBADMSG;
		}
	x->next_seq = e.seq + 1;
	x->records++;
	return 0;
}

/* Packets that make a record (every seventh is discarded) among seq first..first+n-1. */
static uint64_t records_for(uint64_t first, uint64_t n)
{
	uint64_t r = 0;

	for (uint64_t s = first; s < first + n; s++)
		r += s % 7 != 6;
	return r;
}

static int client_consume(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_ringbuf *rb = NULL;
	const struct bpfbroker_map *events, *counts;
	struct expect x = {.payload = 32};
	uint64_t sent = 0, lost;
	int k, sock, prog, n;

	if (load_unnamed(NULL, &res))
		return 1;
	events = bpfbroker_result_map(res, "events");
	counts = bpfbroker_result_map(res, "counts");
	CHECK(events && events->access == BPFBROKER_ACCESS_CONSUME && events->fd >= 0,
	      "events not granted consume");
	CHECK((fcntl(events->fd, F_GETFL) & O_ACCMODE) == O_RDWR, "consume fd not O_RDWR");
	CHECK(strcmp(events->type, "ringbuf") == 0 && events->max_entries == 4096,
	      "events is %s of %u", events->type, events->max_entries);
	/* A wrong size would read past the ring: refused. */
	CHECK(bpfbroker_ringbuf_new(events->fd, 8192, check_record, &x, &rb) == -EINVAL,
	      "ring buffer of the wrong size accepted");
	CHECK(bpfbroker_ringbuf_new(counts->fd, 4096, check_record, &x, &rb) == -EINVAL,
	      "an array accepted as a ring buffer");
	k = bpfbroker_ringbuf_new(events->fd, events->max_entries, check_record, &x, &rb);
	CHECK(k == 0, "bpfbroker_ringbuf_new: %s", strerror(-k));
	/* The consumer holds its own fd: the result's may go. */
	prog = take_prog(res);
	sock = udp_open(prog);
	CHECK(sock >= 0, "socket: %s", strerror(-sock));
	CHECK(bpfbroker_ringbuf_poll(rb, 10) == 0, "records before any packet");

	/* Ten rounds of 100 packets (about 2.5 KiB of records each): the 4 KiB ring wraps. */
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 100; i++, sent++)
			CHECK(udp_ping(sock, x.payload) == 0, "ping: %m");
		n = bpfbroker_ringbuf_poll(rb, 1000);
		CHECK(n >= 0, "round %d: %s %s", round, strerror(-n), x.why);
		CHECK(x.records == records_for(0, sent), "round %d: %llu records of %llu", round,
		      (unsigned long long)x.records, (unsigned long long)records_for(0, sent));
	}
	CHECK(lookup_count(counts->fd, COUNT_LOST) == 0, "records lost with a consumer keeping up");
	CHECK(lookup_count(counts->fd, COUNT_SUBMITTED) == x.records, "submitted %llu, got %llu",
	      (unsigned long long)lookup_count(counts->fd, COUNT_SUBMITTED),
	      (unsigned long long)x.records);
	CHECK(bpfbroker_ringbuf_consume(rb) == 0, "records left over");

	/* More than fits: the ring fills, the rest is lost, what is there comes in order. */
	for (int i = 0; i < 400; i++, sent++)
		CHECK(udp_ping(sock, x.payload) == 0, "ping: %m");
	n = bpfbroker_ringbuf_consume(rb);
	CHECK(n > 100 && n < 200, "a full ring gave %d records (%s)", n, x.why);
	lost = lookup_count(counts->fd, COUNT_LOST);
	CHECK(lost > 0 && x.records + lost == records_for(0, sent),
	      "%llu records and %llu lost of %llu", (unsigned long long)x.records,
	      (unsigned long long)lost, (unsigned long long)records_for(0, sent));

	/* And it goes on where it left off. */
	for (int i = 0; i < 50; i++, sent++)
		CHECK(udp_ping(sock, x.payload) == 0, "ping: %m");
	n = bpfbroker_ringbuf_poll(rb, 1000);
	CHECK(n == (int)records_for(sent - 50, 50), "after the overflow: %d records (%s)", n,
	      x.why);
	CHECK(x.next_seq >= sent - 1, "the last record was seq %llu of %llu",
	      (unsigned long long)x.next_seq - 1, (unsigned long long)sent);
	bpfbroker_ringbuf_free(rb);
	close(sock);
	close(prog);
	bpfbroker_result_free(res);
	return 0;
}

static void test_ringbuf_consume(void **state)
{
	assert_int_equal(harness_as_user(&consumer, client_consume, NULL), 0);
}

/*
 * Where the caller can't use bpf() at all (before 6.5 with
 * unprivileged_bpf_disabled set; here a seccomp filter): events through the
 * library's consumer and counters through a mapping still work, since
 * neither needs bpf(); the ring's size comes from the broker's reply and its
 * type from fdinfo.
 */
static int client_without_bpf(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_ringbuf *rb = NULL;
	const struct bpfbroker_map *events, *counts;
	struct expect x = {.payload = 32};
	volatile const uint64_t *v;
	void *p = NULL;
	size_t len = 0;
	int k, sock, prog, n;

	CHECK(bpf_map_get_next_key(-1, NULL, NULL) < 0 && errno == EPERM, "bpf() is allowed");
	if (load_unnamed("counts", &res))
		return 1;
	events = bpfbroker_result_map(res, "events");
	counts = bpfbroker_result_map(res, "counts");
	CHECK(events && events->access == BPFBROKER_ACCESS_CONSUME && events->fd >= 0,
	      "events not granted consume");
	CHECK(counts && counts->frozen, "counts not frozen");
	k = bpfbroker_map_mmap(counts, &p, &len);
	CHECK(k == 0, "bpfbroker_map_mmap: %s", strerror(-k));
	v = p;
	k = bpfbroker_ringbuf_new(events->fd, events->max_entries, check_record, &x, &rb);
	CHECK(k == 0, "bpfbroker_ringbuf_new: %s", strerror(-k));
	/* Attaching a socket filter is setsockopt(), not bpf(). */
	prog = take_prog(res);
	sock = udp_open(prog);
	CHECK(sock >= 0, "socket: %s", strerror(-sock));
	for (uint64_t i = 1; i <= 20; i++)
		CHECK(udp_ping(sock, x.payload) == 0, "ping: %m");
	n = bpfbroker_ringbuf_poll(rb, 1000);
	CHECK(n >= 0, "poll: %s %s", strerror(-n), x.why);
	CHECK(x.records == records_for(0, 20), "%llu records of %llu",
	      (unsigned long long)x.records, (unsigned long long)records_for(0, 20));
	CHECK(v[COUNT_PACKETS] == 20 && v[COUNT_SUBMITTED] == x.records,
	      "the mapping shows %llu packets, %llu submitted",
	      (unsigned long long)v[COUNT_PACKETS], (unsigned long long)v[COUNT_SUBMITTED]);
	bpfbroker_ringbuf_free(rb);
	munmap(p, len);
	close(sock);
	close(prog);
	bpfbroker_result_free(res);
	return 0;
}

static void test_without_bpf(void **state)
{
	H.client_setup = harness_deny_bpf;
	assert_int_equal(harness_as_user(&consumer, client_without_bpf, NULL), 0);
}

/* ---- what a consume fd can do, on this kernel ---- */

static int count_records(void *ctx, const void *data, size_t size)
{
	(*(int *)ctx)++;
	return 0;
}

static int client_kernel_claims(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_ringbuf *rb = NULL;
	const struct bpfbroker_map *events, *counts;
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned long *cons;
	const volatile unsigned long *prod;
	uint8_t key[8] = {}, value[8] = {};
	int k, sock, prog, fd, seen = 0;
	uint64_t packets;
	void *p;

	if (load_unnamed(NULL, &res))
		return 1;
	events = bpfbroker_result_map(res, "events");
	counts = bpfbroker_result_map(res, "counts");
	CHECK(events && events->fd >= 0 && counts, "no events fd");
	fd = events->fd;

	/* 1. No element operations on a ring buffer, whatever the fd's mode. */
	CHECK(bpf_map_lookup_elem(fd, key, value) < 0, "lookup on a ring buffer worked");
	CHECK(bpf_map_update_elem(fd, key, value, BPF_ANY) < 0, "update on a ring buffer worked");
	CHECK(bpf_map_delete_elem(fd, key) < 0, "delete on a ring buffer worked");
	CHECK(bpf_map_get_next_key(fd, NULL, key) < 0 && errno == ENOTSUPP, "next key: %m");
	CHECK(bpf_map_lookup_and_delete_elem(fd, NULL, value) < 0 && errno == ENOTSUPP,
	      "lookup and delete: %m");

	/* 2. Only the consumer page maps writable: not the producer page, not the data. */
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	CHECK(p == MAP_FAILED && errno == EPERM, "producer page mapped writable: %m");
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 2 * page);
	CHECK(p == MAP_FAILED && errno == EPERM, "data page mapped writable: %m");
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p == MAP_FAILED && errno == EPERM, "consumer and producer page mapped writable: %m");
	p = mmap(NULL, page + 2 * 4096, PROT_READ, MAP_SHARED, fd, page);
	CHECK(p != MAP_FAILED, "read-only mapping of the producer and data pages: %m");
	prod = p;
	CHECK(mprotect(p, page + 2 * 4096, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
	      "mprotect made the data writable: %m");

	/*
	 * 3. The consumer position is all a consumer writes, and it only decides
	 * what this ring's producers see as free: set wrong, records of this map
	 * are lost (or would overwrite unread ones), the program runs on.
	 */
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(cons != MAP_FAILED, "consumer page: %m");
	prog = take_prog(res);
	sock = udp_open(prog);
	CHECK(sock >= 0, "socket: %s", strerror(-sock));
	*cons = *prod + (1ul << 20);
	for (int i = 0; i < 20; i++)
		CHECK(udp_ping(sock, 8) == 0, "ping: %m");
	packets = lookup_count(counts->fd, COUNT_PACKETS);
	CHECK(packets == 20 && lookup_count(counts->fd, COUNT_LOST) == records_for(0, 20),
	      "with a wild consumer position: %llu packets, %llu lost", (unsigned long long)packets,
	      (unsigned long long)lookup_count(counts->fd, COUNT_LOST));
	/* The library refuses to read a ring whose consumer position makes no sense. */
	k = bpfbroker_ringbuf_new(fd, 4096, count_records, &seen, &rb);
	CHECK(k == 0, "bpfbroker_ringbuf_new: %s", strerror(-k));
	CHECK(bpfbroker_ringbuf_consume(rb) == -EBADMSG, "a wild consumer position was read");
	*cons = *prod + 3;
	CHECK(bpfbroker_ringbuf_consume(rb) == -EBADMSG, "a misaligned position was read");
	/* Put right, the ring works again. */
	*cons = *prod;
	for (int i = 0; i < 5; i++)
		CHECK(udp_ping(sock, 8) == 0, "ping: %m");
	CHECK(bpfbroker_ringbuf_consume(rb) == (int)records_for(20, 5) && seen == 4,
	      "after repair: %d records", seen);

	/*
	 * 4. BPF_MAP_FREEZE works on a consume fd (it is O_RDWR) and stops later
	 * consumers of this map from mapping it: a holder can spoil delivery
	 * to the holders of this one map, nothing else. Not while mapped.
	 */
	CHECK(bpf_map_freeze(fd) < 0 && errno == EBUSY, "froze a ring buffer being consumed: %m");
	bpfbroker_ringbuf_free(rb);
	munmap((void *)cons, page);
	CHECK(bpf_map_freeze(fd) == 0, "freeze: %m");
	CHECK(bpfbroker_ringbuf_new(fd, 4096, count_records, &seen, &rb) == -EPERM,
	      "consumed a frozen ring buffer");
	munmap(p, page + 2 * 4096);
	close(sock);
	close(prog);
	bpfbroker_result_free(res);
	return 0;
}

static void test_ringbuf_kernel_claims(void **state)
{
	assert_int_equal(harness_as_user(&consumer, client_kernel_claims, NULL), 0);
}

/*
 * 5. Into a map of maps a ring buffer would take records from the programs
 * of whoever inserted it. Without maps_of_maps there is no map of maps to
 * insert into; with it, the broker (the only one who inserts) refuses ring
 * buffers, and frozen maps (whose O_RDWR fd may be an ro grant).
 */
static int client_nester(void *arg)
{
	struct bpfbroker_result *rb = NULL, *frozen = NULL, *mim = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *events, *counts;
	struct bpfbroker *b;
	uint32_t key = 0;
	int k;

	if (load_unnamed(NULL, &rb) || load_unnamed("counts", &frozen))
		return 1;
	k = load_ringbuf("mapinmap", "rbmim", NULL, NULL, 0, &mim, &err);
	CHECK(k == 0, "load mapinmap: %s", message_of(err, k));
	events = bpfbroker_result_map(rb, "events");
	counts = bpfbroker_result_map(frozen, "counts");
	CHECK(events && events->access == BPFBROKER_ACCESS_CONSUME, "events not consume");
	CHECK(counts && counts->access == BPFBROKER_ACCESS_RW && counts->frozen &&
		      (fcntl(counts->fd, F_GETFL) & O_ACCMODE) == O_RDWR,
	      "frozen counts not an O_RDWR fd");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_map_insert(b, "rbmim", "outer", &key, sizeof(key), events->fd, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "ring buffer"),
	      "ring buffer insert: %d %s", k, message_of(err, k));
	bpfbroker_error_free(err);
	err = NULL;
	k = bpfbroker_map_insert(b, "rbmim", "outer", &key, sizeof(key), counts->fd, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0 &&
		      strstr(err->message, "frozen"),
	      "frozen insert: %d %s", k, message_of(err, k));
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	bpfbroker_result_free(rb);
	bpfbroker_result_free(frozen);
	bpfbroker_result_free(mim);
	return 0;
}

static void test_ringbuf_map_of_maps(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, outer_opts);
	int inner, other, outer, value;
	uint32_t key = 0;

	/* The kernel itself takes a ring buffer into a map of maps made for one. */
	inner = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "rb_inner", 0, 0, 4096, NULL);
	other = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "rb_other", 0, 0, 4096, NULL);
	assert_true(inner >= 0 && other >= 0);
	outer_opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "rb_outer", 4, 4, 1, &outer_opts);
	assert_true(outer >= 0);
	value = other;
	assert_int_equal(bpf_map_update_elem(outer, &key, &value, BPF_ANY), 0);
	close(outer);
	close(other);
	close(inner);

	/* The consumer has no maps_of_maps: no map of maps at all. */
	assert_int_equal(ctl(&consumer, "check", harness_object("mapinmap"), NULL), 1);
	assert_non_null(strstr(out, "map of maps"));
	assert_int_equal(harness_as_user(&nester, client_nester, NULL), 0);
	assert_int_equal(ctl(&nester, "unload", "rbmim", NULL), 0);
}

/*
 * 6. Reusing a ring buffer pinned by name makes the new object's programs
 * write records into it, so it needs more than ro: consume (the pin is the
 * caller's own ring, which they read anyway) or wo/rw (write) will do.
 */
static void test_ringbuf_pinned_reuse(void **state)
{
	assert_int_equal(ctl(&consumer, "check", harness_object("ringbuf_pinned"), NULL), 0);
	assert_non_null(strstr(out, "access consume"));
	for (int i = 0; i < 2; i++)
		assert_int_equal(ctl(&consumer, "run", harness_object("ringbuf_pinned"), "--",
				     "/bin/true", NULL),
				 0);
	assert_int_equal(
		ctl(&ro_user, "run", harness_object("ringbuf_pinned"), "--", "/bin/true", NULL), 0);
	assert_int_equal(
		ctl(&ro_user, "run", harness_object("ringbuf_pinned"), "--", "/bin/true", NULL), 1);
}

/* ---- named objects: fds, shares, admins, bpfctl ---- */

/* The owner makes records: n packets through its named object's filter. */
static int client_owner_emits(void *arg)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *events;
	int k = fds_of("rbshare", &res, &err), sock, prog;

	CHECK(k == 0, "fds: %s", message_of(err, k));
	events = bpfbroker_result_map(res, "events");
	CHECK(events && events->access == BPFBROKER_ACCESS_CONSUME && events->fd >= 0,
	      "owner's events not consume");
	prog = take_prog(res);
	sock = udp_open(prog);
	CHECK(sock >= 0, "socket: %s", strerror(-sock));
	for (int i = 0; i < *(int *)arg; i++)
		CHECK(udp_ping(sock, 8) == 0, "ping: %m");
	close(sock);
	close(prog);
	bpfbroker_result_free(res);
	return 0;
}

static int client_owner_loads(void *arg)
{
	static const struct bpfbroker_share too_much[] = {
		{.map = "events", .user = "4405", .access = BPFBROKER_ACCESS_RW},
	};
	static const struct bpfbroker_share consume[] = {
		{.map = "events", .user = "4405", .access = BPFBROKER_ACCESS_CONSUME},
	};
	static const struct bpfbroker_share shares[] = {
		{.map = "counts", .user = "4405", .access = BPFBROKER_ACCESS_RO},
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k;

	/* The owner's own access to a ring buffer is consume: rw is more. */
	k = load_ringbuf("ringbuf", "rbshare", NULL, too_much, 1, &res, &err);
	CHECK(k < 0 && err && strcmp(err->code, "policy-denied") == 0, "shared rw: %d %s", k,
	      message_of(err, k));
	bpfbroker_error_free(err);
	/* And consume is not shared: it would take the records from every other consumer. */
	k = load_ringbuf("ringbuf", "rbshare", NULL, consume, 1, &res, &err);
	CHECK(k < 0 && err && strcmp(err->code, "invalid-request") == 0, "shared consume: %d %s", k,
	      message_of(err, k));
	bpfbroker_error_free(err);
	k = load_ringbuf("ringbuf", "rbshare", NULL, shares, 1, &res, &err);
	CHECK(k == 0, "load: %s", message_of(err, k));
	bpfbroker_result_free(res);
	return 0;
}

/* Who gets what of nobody's rbshare: expected access of events and counts, by uid. */
struct expect_fds {
	enum bpfbroker_access events, counts;
	bool owner;
};

static int client_fds(void *arg)
{
	const struct expect_fds *x = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *events, *counts;
	int k = fds_of("nobody/rbshare", &res, &err);

	CHECK(k == 0, "fds: %s", message_of(err, k));
	events = bpfbroker_result_map(res, "events");
	counts = bpfbroker_result_map(res, "counts");
	if (x->events == BPFBROKER_ACCESS_NONE)
		CHECK(!events || (events->fd < 0 && events->access == BPFBROKER_ACCESS_NONE),
		      "events came as %s", bpfbroker_access_to_string(events->access));
	else
		CHECK(events && events->access == x->events && events->fd >= 0 &&
			      (fcntl(events->fd, F_GETFL) & O_ACCMODE) == O_RDWR,
		      "events not consume");
	CHECK(counts && counts->access == x->counts, "counts came as %s, not %s",
	      counts ? bpfbroker_access_to_string(counts->access) : "nothing",
	      bpfbroker_access_to_string(x->counts));
	/* Others' fds never write: a frozen mmapable array's is O_RDWR, and writes nothing. */
	CHECK(counts->fd < 0 || x->owner || counts->fd_access == BPFBROKER_ACCESS_RO,
	      "counts came with a %s fd", bpfbroker_access_to_string(counts->fd_access));
	bpfbroker_result_free(res);
	return 0;
}

static void test_ringbuf_named(void **state)
{
	static const struct expect_fds for_sharee = {BPFBROKER_ACCESS_NONE, BPFBROKER_ACCESS_RO};
	static const struct expect_fds for_policy_sharee = {BPFBROKER_ACCESS_NONE,
							    BPFBROKER_ACCESS_RW};
	static const struct expect_fds for_owner = {BPFBROKER_ACCESS_CONSUME, BPFBROKER_ACCESS_RO,
						    true};
	int packets = 5;
	char line[64];

	assert_int_equal(harness_as_user(&consumer, client_owner_loads, NULL), 0);
	assert_int_equal(harness_as_user(&consumer, client_fds, (void *)&for_owner), 0);
	/* The owner's share: counts ro; a ring buffer goes to nobody but its owner. */
	assert_int_equal(harness_as_user(&sharee, client_fds, (void *)&for_sharee), 0);
	/* The policy's rw share of every map: a ring buffer is not among them. */
	assert_int_equal(harness_as_user(&policy_sharee, client_fds, (void *)&for_policy_sharee),
			 0);
	assert_int_equal(ctl(&consumer, "show", "rbshare", NULL), 0);
	assert_non_null(strstr(out, "consume"));

	/* bpfctl ringbuf prints what the owner's filter recorded, for whom it may consume. */
	assert_int_equal(harness_as_user(&consumer, client_owner_emits, &packets), 0);
	assert_int_equal(ctl(&sharee, "ringbuf", "nobody/rbshare/events", "--count", "1", NULL), 1);
	assert_int_equal(ctl(&consumer, "ringbuf", "rbshare/events", "--count", "3", NULL), 0);
	/* seq 0: 12 bytes, seq 1: 16 bytes, seq 2: 20 bytes; hex, one record a line. */
	assert_non_null(strstr(out, "00 00 00 00 00 00 00 00 10 00 00 00\n"));
	snprintf(line, sizeof(line), "01 00 00 00 00 00 00 00 10 00 00 00 01 02 03 04\n");
	assert_non_null(strstr(out, line));
	assert_int_equal(ctl(&consumer, "ringbuf", "rbshare/events", "--count", "2", "-j", NULL),
			 0);
	assert_non_null(strstr(out, "{\"size\":24,\"data\":\"0300000000000000100000000304050607"
				    "08090a0b0c0d0e\"}"));
	assert_non_null(strstr(out, "\"size\":12"));
	/* Without --count it follows the ring until interrupted, and SIGINT ends it cleanly. */
	{
		char bpfctl[512];
		char *const argv[] = {"/usr/bin/timeout",
				      "--preserve-status",
				      "-s",
				      "INT",
				      "0.5",
				      bpfctl,
				      "--socket",
				      H.socket,
				      "ringbuf",
				      "rbshare/events",
				      NULL};

		snprintf(bpfctl, sizeof(bpfctl), "%s/client/bpfctl", H.build_dir);
		assert_int_equal(harness_exec_as(&consumer, argv), 0);
	}
	/* Not for the policy's rw sharee, nor for root, to whom nothing is shared. */
	assert_int_equal(
		ctl(&policy_sharee, "ringbuf", "nobody/rbshare/events", "--count", "1", NULL), 1);
	assert_int_equal(ctl(&root, "ringbuf", "nobody/rbshare/events", "--count", "1", NULL), 1);
	/* Nor through the map commands: the kernel has no element operations on it. */
	assert_int_not_equal(ctl(&consumer, "map", "dump", "rbshare/events", NULL), 0);
	assert_int_equal(ctl(&consumer, "unload", "rbshare", NULL), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[4096];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"pinning\": true,"
		 "   \"maps\": [{\"name\": \"*events\", \"access\": \"consume\"},"
		 "            {\"name\": \"counts\", \"access\": \"ro\"},"
		 "            {\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"pinning\": true, \"maps\": [{\"name\": \"*\", \"access\": "
		 "\"ro\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"wo\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps_of_maps\": true,"
		 "   \"maps\": [{\"name\": \"events\", \"access\": \"consume\"},"
		 "            {\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"shared\": [{\"owner\": \"%d\", \"object\": \"rbshare\", \"map\": "
		 "\"*\", \"access\": \"rw\"}]}}"
		 "]}",
		 UID_CONSUMER, UID_RW, UID_RO, UID_WO, UID_NESTER, UID_SHAREE, UID_POLICY_SHAREE,
		 UID_CONSUMER);
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_arrays),
		cmocka_unit_test(test_ringbuf_not_granted),
		cmocka_unit_test(test_ringbuf_consume),
		cmocka_unit_test_teardown(test_without_bpf, harness_clear_client_setup),
		cmocka_unit_test(test_ringbuf_kernel_claims),
		cmocka_unit_test(test_ringbuf_map_of_maps),
		cmocka_unit_test(test_ringbuf_pinned_reuse),
		cmocka_unit_test(test_ringbuf_named),
	};

	return cmocka_run_group_tests_name("ringbuf", tests, setup, harness_group_teardown);
}
