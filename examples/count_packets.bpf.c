/* SPDX-License-Identifier: MIT */
/*
 * The quickstart's example: a socket filter that counts the packets its
 * socket receives. "config_step" is granted read-only by the example policy
 * (the owner of the object may read its configuration but not change it),
 * "counts" read-write.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} config_step SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("socket")
int count_packets(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *step = bpf_map_lookup_elem(&config_step, &key);
	__u64 *cnt = bpf_map_lookup_elem(&counts, &key);

	if (cnt)
		__sync_fetch_and_add(cnt, step && *step ? *step : 1);
	return skb->len; /* keep the whole packet */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
