/* SPDX-License-Identifier: MIT */
/*
 * IPAddressAllow=/IPAddressDeny=/IPAccounting= for one cgroup: cgroup_skb programs on ingress
 * (the source address is checked) and egress (the destination address), systemd's rule (a
 * match in an allow trie passes, else a match in a deny trie drops, else the packet passes),
 * and per-direction counts of the packets and bytes that passed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "net_maps.h"

/*
 * Not pinned, not shared: each load has its own tries, so they act on its cgroup only.
 * BPF_F_NO_PREALLOC: the kernel requires it of LPM tries. BPF_F_RDONLY_PROG: no program
 * writes them, this one reads them, and the flag makes every program's verifier refuse a
 * write, one that holds them through a map of maps too (a frozen map is frozen to the
 * bpf() syscall only; any fd, a read-only one too, puts a map into a map of maps).
 */
#define LPM_TRIE(key_type)                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                                               \
		__uint(max_entries, NET_IP_PREFIXES_MAX);                                          \
		__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG);                          \
		__type(key, key_type);                                                             \
		__type(value, __u8);                                                               \
	}

LPM_TRIE(struct net_ipv4_key) ipv4_allow SEC(".maps");
LPM_TRIE(struct net_ipv4_key) ipv4_deny SEC(".maps");
LPM_TRIE(struct net_ipv6_key) ipv6_allow SEC(".maps");
LPM_TRIE(struct net_ipv6_key) ipv6_deny SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NET_IP_DIRECTIONS);
	__type(key, __u32);
	__type(value, struct net_ip_acct);
} ip_acct SEC(".maps");

/*
 * The verdict for a key: allow wins over deny. A key whose address could not be read has
 * prefixlen 0, which only a /0 entry ("any") matches: such a packet gets the verdict of
 * "any", as systemd's programs give it without looking at the address.
 */
static __always_inline int verdict(void *allow, void *deny, void *key)
{
	if (bpf_map_lookup_elem(allow, key))
		return 1;
	return bpf_map_lookup_elem(deny, key) ? 0 : 1;
}

static __always_inline int ipv4_verdict(struct __sk_buff *skb, __u32 offset)
{
	struct net_ipv4_key key = {.prefixlen = 32};

	if (bpf_skb_load_bytes(skb, offset, key.addr, sizeof(key.addr)) < 0) {
		key.prefixlen = 0;
		__builtin_memset(key.addr, 0, sizeof(key.addr));
	}
	return verdict(&ipv4_allow, &ipv4_deny, &key);
}

static __always_inline int ipv6_verdict(struct __sk_buff *skb, __u32 offset)
{
	struct net_ipv6_key key = {.prefixlen = 128};

	if (bpf_skb_load_bytes(skb, offset, key.addr, sizeof(key.addr)) < 0) {
		key.prefixlen = 0;
		__builtin_memset(key.addr, 0, sizeof(key.addr));
	}
	return verdict(&ipv6_allow, &ipv6_deny, &key);
}

static __always_inline int filter(struct __sk_buff *skb, __u32 direction)
{
	int pass = 1;
	struct net_ip_acct *acct;

	/* Other protocols pass unfiltered and uncounted, as in systemd. */
	if (skb->protocol == bpf_htons(ETH_P_IP))
		pass = ipv4_verdict(skb, direction == NET_IP_INGRESS
						 ? offsetof(struct iphdr, saddr)
						 : offsetof(struct iphdr, daddr));
	else if (skb->protocol == bpf_htons(ETH_P_IPV6))
		pass = ipv6_verdict(skb, direction == NET_IP_INGRESS
						 ? offsetof(struct ipv6hdr, saddr)
						 : offsetof(struct ipv6hdr, daddr));
	else
		return 1;
	if (!pass)
		return 0; /* dropped packets are not counted, as in systemd */
	acct = bpf_map_lookup_elem(&ip_acct, &direction);
	if (acct) {
		__sync_fetch_and_add(&acct->packets, 1);
		__sync_fetch_and_add(&acct->bytes, skb->len);
	}
	return 1;
}

SEC("cgroup_skb/ingress")
int ip_ingress(struct __sk_buff *skb)
{
	return filter(skb, NET_IP_INGRESS);
}

SEC("cgroup_skb/egress")
int ip_egress(struct __sk_buff *skb)
{
	return filter(skb, NET_IP_EGRESS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
