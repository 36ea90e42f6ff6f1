/* SPDX-License-Identifier: MIT */
/*
 * The maps of the network objects (ip_firewall, restrict_ifaces, socket_bind): their names,
 * keys and values, shared by the BPF programs and the user-space code that fills them.
 * README.md in this directory documents each map; keep the two in step.
 */
#pragma once

#include <linux/types.h>

/* ip_firewall.bpf.o: LPM tries of peer prefixes, and the accounting array. */
#define NET_MAP_IPV4_ALLOW "ipv4_allow"
#define NET_MAP_IPV4_DENY "ipv4_deny"
#define NET_MAP_IPV6_ALLOW "ipv6_allow"
#define NET_MAP_IPV6_DENY "ipv6_deny"
#define NET_MAP_IP_ACCT "ip_acct"
#define NET_IP_PREFIXES_MAX 1024 /* entries of each trie */

/* The LPM trie keys: a prefix length in bits, then the address in network byte order. */
struct net_ipv4_key {
	__u32 prefixlen;
	__u8 addr[4];
};
struct net_ipv6_key {
	__u32 prefixlen;
	__u8 addr[16];
};
/* The tries' value: what a program reads is only whether a key matched. */
#define NET_IP_MATCH 1

/* ip_acct is an array indexed by direction; each entry counts what the filter let pass. */
enum net_ip_direction {
	NET_IP_INGRESS = 0,
	NET_IP_EGRESS = 1,
	NET_IP_DIRECTIONS = 2,
};
struct net_ip_acct {
	__u64 packets;
	__u64 bytes; /* skb->len: the IP packet, headers included, as IPAccounting= counts */
};

/* restrict_ifaces.bpf.o: interface indexes, and whether they are an allow or a deny list. */
#define NET_MAP_IFACES "ifaces"
#define NET_MAP_IFACES_MODE "ifaces_mode"
#define NET_IFACES_MAX 64
/* ifaces: __u32 ifindex -> __u8 NET_IFACE_LISTED. ifaces_mode: one __u32 at key 0. */
#define NET_IFACE_LISTED 1
enum net_ifaces_mode {
	NET_IFACES_DENY_LIST = 0, /* a zeroed map: nothing listed, nothing refused */
	NET_IFACES_ALLOW_LIST = 1,
};

/* socket_bind.bpf.o: two arrays of rules, each read from index 0 to its first unused entry. */
#define NET_MAP_BIND_ALLOW "bind_allow"
#define NET_MAP_BIND_DENY "bind_deny"
#define NET_BIND_RULES_MAX 128 /* systemd's limit per list */

struct net_bind_rule {
	__u8 used; /* 0: unused entry, and the end of the list */
	__u8 family; /* 0 (AF_UNSPEC): both; AF_INET or AF_INET6 */
	__u8 protocol; /* 0: any; IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad; /* zero */
	__u16 port_min; /* host byte order, inclusive; "any" is 0 to 65535 */
	__u16 port_max;
};
