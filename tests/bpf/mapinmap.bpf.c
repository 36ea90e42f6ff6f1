/* SPDX-License-Identifier: MIT */
/*
 * A socket filter with a map of maps. A client that could write "outer"
 * could store any map fd it holds there, read-only ones included (the kernel
 * ignores fd modes for that), and write that map from this program.
 */
#include "bpf_test.h"

struct inner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_map);
} outer SEC(".maps") = {
	.values = {&inner},
};

SEC("socket")
int write_inner(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 one = 1;
	void *m = bpf_map_lookup_elem(&outer, &key);

	if (m)
		bpf_map_update_elem(m, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
