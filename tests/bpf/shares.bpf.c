/* SPDX-License-Identifier: MIT */
/*
 * A victim's socket filter for the sharing tests (test_shares.c): it
 * tail-calls through a prog array, counts into a map it shares, and keeps a
 * map and a ring buffer it does not share. The names are distinctive, so a
 * test can look for them in what a non-owner receives.
 */
#include "bpf_test.h"

struct victim_point {
	__u32 victim_x;
	__u32 victim_y;
};

struct victim_secret_value {
	__u64 victim_secret_field;
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} victim_jump SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct victim_point);
} victim_data SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct victim_secret_value);
} victim_secret_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} victim_events SEC(".maps");

SEC("socket")
int victim_filter(struct __sk_buff *skb)
{
	__u32 key = 0, *rec;
	struct victim_point *p = bpf_map_lookup_elem(&victim_data, &key);
	struct victim_secret_value *s =
		bpf_map_lookup_elem(&victim_secret_map, &key); /* victim_source_line_marker */

	if (p)
		__sync_fetch_and_add(&p->victim_x, 1);
	if (s && s->victim_secret_field)
		return 0;
	rec = bpf_ringbuf_reserve(&victim_events, sizeof(*rec), 0);
	if (rec) {
		*rec = skb->len;
		bpf_ringbuf_submit(rec, 0);
	}
	bpf_tail_call(skb, &victim_jump, 0);
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
