/* SPDX-License-Identifier: MIT */
/*
 * A socket filter touching four maps, so that policies can grant each a
 * different access mode (config_map read, counts read-write, secret none,
 * events_wo write). Base helpers only: map lookup and update.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) config_map SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 4) counts SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) secret SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_HASH, 16) events_wo SEC(".maps");

SEC("socket")
int count_packets(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 one = 1, *cfg, *cnt, *sec;

	cfg = bpf_map_lookup_elem(&config_map, &key);
	cnt = bpf_map_lookup_elem(&counts, &key);
	if (cnt)
		__sync_fetch_and_add(cnt, cfg ? *cfg : 1);
	sec = bpf_map_lookup_elem(&secret, &key);
	if (sec)
		one = *sec;
	bpf_map_update_elem(&events_wo, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
