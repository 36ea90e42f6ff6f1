/* SPDX-License-Identifier: MIT */
/*
 * A cgroup egress filter whose rule lives in a map pinned by name: "verdict"
 * (1 lets packets pass). Any other load of the same user that names the map
 * reuses it (tests/integration/test_protect_attacks.c).
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} verdict SEC(".maps");

SEC("cgroup_skb/egress")
int filter_egress(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&verdict, &key);

	return v && *v == 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
