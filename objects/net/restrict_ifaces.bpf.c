/* SPDX-License-Identifier: MIT */
/*
 * RestrictNetworkInterfaces= for one cgroup: cgroup_skb programs on ingress and egress that
 * pass a packet whose interface index is listed in "ifaces" (allow list) or is not (deny
 * list), as "ifaces_mode" says; the loader fills both before attaching.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "net_maps.h"

/*
 * BPF_F_RDONLY_PROG on both: programs only read them, and no program (one that holds them
 * through a map of maps too) may write them once the loader froze them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NET_IFACES_MAX);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, __u8);
} ifaces SEC(".maps");

/* A map rather than a constant so that the loader sets it after the load, with the list. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, __u32);
} ifaces_mode SEC(".maps");

static __always_inline int restrict_ifaces(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ifindex, zero = 0;
	__u32 *mode = bpf_map_lookup_elem(&ifaces_mode, &zero);
	int listed = bpf_map_lookup_elem(&ifaces, &ifindex) != NULL;

	if (mode && *mode == NET_IFACES_ALLOW_LIST)
		return listed;
	return !listed;
}

SEC("cgroup_skb/ingress")
int ifaces_ingress(struct __sk_buff *skb)
{
	return restrict_ifaces(skb);
}

SEC("cgroup_skb/egress")
int ifaces_egress(struct __sk_buff *skb)
{
	return restrict_ifaces(skb);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
