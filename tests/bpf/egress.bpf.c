/* SPDX-License-Identifier: MIT */
/*
 * cgroup_skb egress counter: counts the packets a cgroup sends into
 * "counts" (read back through an ro fd), lets every packet pass. "config" is
 * a second map for per-map sharing tests.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) counts SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) config SEC(".maps");

SEC("cgroup_skb/egress")
int count_egress(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
