/* SPDX-License-Identifier: MIT */
/*
 * Two maps the integration test renames alike in the object's BTF (dup_b
 * becomes dup_a): a plain array, and an array of maps, which the broker
 * never hands out writable. Relocations still bind each by its offset.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) dup_a SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner);
} dup_b SEC(".maps");

SEC("socket")
int two_maps(struct __sk_buff *skb)
{
	__u32 key = 0;
	void *inner = bpf_map_lookup_elem(&dup_b, &key);

	if (inner && bpf_map_lookup_elem(inner, &key))
		return 1;
	return bpf_map_lookup_elem(&dup_a, &key) ? 1 : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
