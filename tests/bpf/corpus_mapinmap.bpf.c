/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a map of maps declared without an inner template, as a service
 * manager's per-cgroup sets are: the loader creates the inner map and gives
 * it (bpf_map__set_inner_map_fd) before load.
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u32);
} cgroup_sets SEC(".maps");

SEC("cgroup_skb/egress")
int check_set(struct __sk_buff *skb)
{
	__u64 cgroup = bpf_skb_cgroup_id(skb);
	__u32 proto = skb->protocol;
	void *set = bpf_map_lookup_elem(&cgroup_sets, &cgroup);

	if (!set)
		return 1;
	return bpf_map_lookup_elem(set, &proto) ? 0 : 1;
}

char LICENSE[] SEC("license") = "GPL";
