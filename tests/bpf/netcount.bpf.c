/* SPDX-License-Identifier: MIT */
/* XDP and tc programs counting the packets an interface receives: pkts[0] and pkts[1]. */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 2) pkts SEC(".maps");

static __always_inline void count(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&pkts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	count(0);
	return XDP_PASS;
}

SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	count(1);
	return 0; /* TC_ACT_OK, TCX_PASS */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
