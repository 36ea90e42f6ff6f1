/* SPDX-License-Identifier: MIT */
/*
 * The example system object: counts the packets and bytes a cgroup receives and sends
 * ("counters", read-only to its user), and drops every packet while "config"[0] is 1 (set by
 * its user). The smallest vetted object that can be loaded, attached and read end to end.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

/* Per direction (0 ingress, 1 egress): packets and bytes. */
struct counter {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct counter);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} config SEC(".maps");

static __always_inline int count(struct __sk_buff *skb, __u32 dir)
{
	struct counter *c = bpf_map_lookup_elem(&counters, &dir);
	__u32 key = 0;
	__u32 *drop = bpf_map_lookup_elem(&config, &key);

	if (c) {
		__sync_fetch_and_add(&c->packets, 1);
		__sync_fetch_and_add(&c->bytes, skb->len);
	}
	return drop && *drop == 1 ? 0 : 1;
}

SEC("cgroup_skb/ingress")
int count_ingress(struct __sk_buff *skb)
{
	return count(skb, 0);
}

SEC("cgroup_skb/egress")
int count_egress(struct __sk_buff *skb)
{
	return count(skb, 1);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
