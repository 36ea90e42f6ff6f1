/* SPDX-License-Identifier: MIT */
/*
 * A socket filter that reports every packet it sees: one record per packet
 * into the ring buffer "events" (12, 16, 20 or 24 bytes, so records are not
 * all multiples of 8; every seventh reserved and discarded), and counts into
 * the mmapable array "counts": [0] packets, [1] records submitted, [2]
 * records lost to a full ring, [3] records discarded. The ring is one page,
 * so a client wraps around it after about 150 records.
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct event {
	__u64 seq; /* the packet's number, from 0 */
	__u32 len; /* its length */
	__u8 fill[12]; /* byte i is (seq + i) & 0xff */
};

static void count(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("socket")
int report_packets(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *packets = bpf_map_lookup_elem(&counts, &key);
	struct event e = {};
	struct event *r;
	__u64 seq;

	if (!packets)
		return skb->len;
	/* The client sends one packet at a time, so a plain read is the sequence number. */
	seq = *packets;
	__sync_fetch_and_add(packets, 1);
	e.seq = seq;
	e.len = skb->len;
	for (int i = 0; i < 12; i++)
		e.fill[i] = (__u8)(seq + i);
	if (seq % 7 == 6) {
		/* Not a record either way: a full ring is not counted as a loss here. */
		r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
		if (!r)
			return skb->len;
		r->seq = seq;
		bpf_ringbuf_discard(r, 0);
		count(3);
		return skb->len;
	}
	if (bpf_ringbuf_output(&events, &e, 12 + (seq & 3) * 4, 0) == 0)
		count(1);
	else
		count(2);
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
