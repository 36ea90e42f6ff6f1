/* SPDX-License-Identifier: MIT */
/*
 * A BPF ring buffer consumer that needs no bpf() system call: the fd the
 * broker handed out for consume is mapped and polled, nothing more.
 *
 * The kernel's layout (kernel/bpf/ringbuf.c), as seen through the fd:
 *   offset 0          the consumer page: consumer_pos, ours to advance
 *                     (the only page the kernel maps writable)
 *   offset 1 page     the producer page: producer_pos, read-only
 *   offset 2 pages    the data, size bytes, mapped a second time right after
 *                     itself, so a record that wraps around the end reads as
 *                     one contiguous piece
 * A record is an 8-byte header, { u32 len; u32 pg_off; }, then len bytes,
 * the whole rounded up to 8. The producer reserves a record by advancing
 * producer_pos with len | BPF_RINGBUF_BUSY_BIT in the header, and commits it
 * by clearing BUSY (setting BPF_RINGBUF_DISCARD_BIT if it threw it away).
 * Records are consumed in order: a BUSY one stops us until it is committed.
 *
 * Memory ordering: the producer stores the header, then producer_pos with
 * release; we load producer_pos with acquire, so the header of every record
 * below it is there. A commit clears BUSY with a full barrier (xchg) after
 * writing the data; we load the header with acquire, so once BUSY is clear
 * the data is there. We store consumer_pos with release after the callback
 * is done with the data, so the producer reuses that space only afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fdinfo.h"
#include "common/macro.h"
#include "libbpfbroker.h"

struct bpfbroker_ringbuf {
	int map_fd;
	int epoll_fd;
	size_t page_size;
	uint64_t size; /* of the data area: a power of two, whole pages */
	unsigned long *consumer_pos; /* mapped read-write, one page */
	void *producer; /* mapped read-only: the producer page, then the data twice */
	size_t producer_len;
	const unsigned long *producer_pos;
	const uint8_t *data;
	bpfbroker_ringbuf_fn fn;
	void *ctx;
};

/*
 * The fd must be a ring buffer of exactly size bytes: a wrong size would read
 * past the data. Its fdinfo says, where /proc can be read; without it the
 * kernel still refuses to map more than the ring.
 */
static int ringbuf_check_fd(int map_fd, uint32_t size)
{
	uint64_t type = 0, entries = 0;
	int k;

	if (fcntl(map_fd, F_GETFD) < 0)
		return -EBADF;
	k = fdinfo_get_u64(map_fd, "map_type", &type);
	if (k == -ENODATA)
		return -EINVAL; /* not a BPF map */
	if (k < 0)
		return 0;
	if (type != BPF_MAP_TYPE_RINGBUF)
		return -EINVAL;
	k = fdinfo_get_u64(map_fd, "max_entries", &entries);
	if (k == 0 && entries != size)
		return -EINVAL;
	return 0;
}

int bpfbroker_ringbuf_new(int map_fd, uint32_t size, bpfbroker_ringbuf_fn fn, void *ctx,
			  struct bpfbroker_ringbuf **ret)
{
	struct bpfbroker_ringbuf *rb;
	struct epoll_event ev = {.events = EPOLLIN};
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int k;

	if (map_fd < 0 || !fn || !ret || page <= 0)
		return -EINVAL;
	/* The kernel's own rule for max_entries of a ring buffer. */
	if (size == 0 || (size & (size - 1)) || size % (uint64_t)page)
		return -EINVAL;
	if ((uint64_t)size > (SIZE_MAX - (size_t)page) / 2)
		return -E2BIG;
	k = ringbuf_check_fd(map_fd, size);
	if (k < 0)
		return k;
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return -ENOMEM;
	rb->page_size = (size_t)page;
	rb->size = size;
	rb->fn = fn;
	rb->ctx = ctx;
	rb->epoll_fd = -EBADF;
	rb->producer = MAP_FAILED;
	rb->consumer_pos = MAP_FAILED;
	rb->map_fd = fcntl(map_fd, F_DUPFD_CLOEXEC, 3);
	if (rb->map_fd < 0)
		goto fail;
	p = mmap(NULL, rb->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, rb->map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	rb->consumer_pos = p;
	rb->producer_len = rb->page_size + 2 * (size_t)size;
	rb->producer = mmap(NULL, rb->producer_len, PROT_READ, MAP_SHARED, rb->map_fd,
			    (off_t)rb->page_size);
	if (rb->producer == MAP_FAILED)
		goto fail;
	rb->producer_pos = rb->producer;
	rb->data = (const uint8_t *)rb->producer + rb->page_size;
	rb->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (rb->epoll_fd < 0 || epoll_ctl(rb->epoll_fd, EPOLL_CTL_ADD, rb->map_fd, &ev) < 0)
		goto fail;
	*ret = rb;
	return 0;
fail:
	k = negative_errno();
	bpfbroker_ringbuf_free(rb);
	return k;
}

void bpfbroker_ringbuf_free(struct bpfbroker_ringbuf *rb)
{
	if (!rb)
		return;
	if (rb->producer != MAP_FAILED)
		munmap(rb->producer, rb->producer_len);
	if (rb->consumer_pos != MAP_FAILED)
		munmap(rb->consumer_pos, rb->page_size);
	safe_close(rb->epoll_fd);
	safe_close(rb->map_fd);
	free(rb);
}

int bpfbroker_ringbuf_epoll_fd(const struct bpfbroker_ringbuf *rb)
{
	return rb ? rb->epoll_fd : -EINVAL;
}

int bpfbroker_ringbuf_consume(struct bpfbroker_ringbuf *rb)
{
	unsigned long cons, prod;
	int n = 0;

	if (!rb)
		return -EINVAL;
	cons = __atomic_load_n(rb->consumer_pos, __ATOMIC_ACQUIRE);
	for (;;) {
		prod = __atomic_load_n(rb->producer_pos, __ATOMIC_ACQUIRE);
		if (cons == prod)
			return n;
		/*
		 * The kernel keeps the producer at most size ahead and records
		 * 8-aligned; anything else means someone else wrote the consumer
		 * page (another holder of this map's fd), and reading on could
		 * run past the mapping.
		 */
		if (prod - cons > rb->size || (cons & 7))
			return -EBADMSG;
		while (cons != prod) {
			const uint32_t *hdr = (const void *)(rb->data + (cons & (rb->size - 1)));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			uint64_t sz =
				len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			uint64_t total = (sz + BPF_RINGBUF_HDR_SZ + 7) & ~(uint64_t)7;
			int k = 0;

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n; /* reserved, not committed yet: the rest waits */
			if (total > prod - cons)
				return -EBADMSG;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				k = rb->fn(rb->ctx, (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ,
					   (size_t)sz);
				if (n < INT32_MAX)
					n++;
			}
			cons += total;
			__atomic_store_n(rb->consumer_pos, cons, __ATOMIC_RELEASE);
			if (k < 0)
				return k;
		}
	}
}

int bpfbroker_ringbuf_poll(struct bpfbroker_ringbuf *rb, int timeout_ms)
{
	struct epoll_event ev;
	int k;

	if (!rb)
		return -EINVAL;
	k = epoll_wait(rb->epoll_fd, &ev, 1, timeout_ms);
	if (k < 0)
		return negative_errno();
	return k == 0 ? 0 : bpfbroker_ringbuf_consume(rb);
}
