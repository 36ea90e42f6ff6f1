/* SPDX-License-Identifier: MIT */
/*
 * An array whose key is 8 bytes: the policy has nothing against it, libbpf
 * asks the kernel to create it, and the kernel refuses (an array's key is a
 * 4-byte index), once with BTF and once without.
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u64);
	__type(value, __u64);
} causes_bad SEC(".maps");

SEC("socket")
int use_bad(struct __sk_buff *skb)
{
	__u64 key = 0, *v = bpf_map_lookup_elem(&causes_bad, &key);

	return v ? (int)*v : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
