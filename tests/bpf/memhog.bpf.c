/* SPDX-License-Identifier: MIT */
/*
 * A socket filter with a plain array and a per-CPU array, both sized by the
 * test (map_sizes): kernel memory the broker must count, named or not, per
 * possible CPU for the second.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) big SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_PERCPU_ARRAY, 1) percpu SEC(".maps");

SEC("socket")
int touch_maps(struct __sk_buff *skb)
{
	__u32 key = 0;

	return (bpf_map_lookup_elem(&big, &key) ? 1 : 0) +
	       (bpf_map_lookup_elem(&percpu, &key) ? 1 : 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
