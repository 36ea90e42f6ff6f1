/* SPDX-License-Identifier: MIT */
/*
 * A socket filter that stores a kernel address (the map value's own) into
 * the map. Without CAP_PERFMON the verifier refuses it ("leaks addr into
 * map"); with it, it loads: what the policy's load_with_perfmon grants.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) addrs SEC(".maps");

SEC("socket")
int leak_address(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&addrs, &key);

	if (v)
		*v = (__u64)v;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
