/* SPDX-License-Identifier: MIT */
/*
 * Names the broker must refuse: a map whose name has 200 characters (over
 * INSPECT_MAX_NAME), and two maps, dup_a (a plain array) and dup_b (an
 * array of maps), whose BTF name the integration test rewrites in memory so
 * that both are called dup_a.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1)
mxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
	SEC(".maps");

SEC("socket")
int long_name(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(
		       &mxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,
		       &key)
		       ? 1
		       : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
