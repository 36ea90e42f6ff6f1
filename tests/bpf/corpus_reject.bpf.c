/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a program the verifier refuses (an index into a map value that
 * nothing bounds), next to one it accepts.
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[8]);
} table SEC(".maps");

SEC("socket")
int unbounded(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *row = bpf_map_lookup_elem(&table, &key);

	if (!row)
		return 0;
	return row[skb->len];
}

SEC("socket")
int bounded(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *row = bpf_map_lookup_elem(&table, &key);

	if (!row)
		return 0;
	return row[skb->len & 7];
}

char LICENSE[] SEC("license") = "GPL";
