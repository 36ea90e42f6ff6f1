/* SPDX-License-Identifier: MIT */
/*
 * SocketBindAllow=/SocketBindDeny= for one cgroup: cgroup bind4 and bind6 programs that let a
 * bind() through if it matches a rule of "bind_allow", refuse it with EPERM if it then
 * matches one of "bind_deny", and let it through otherwise (systemd's order).
 */
#include <linux/bpf.h>
#include <linux/socket.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "net_maps.h"

#define AF_INET 2
#define AF_INET6 10

/* Read-only to programs (one holding them through a map of maps too): see ip_firewall.bpf.c. */
struct rules {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NET_BIND_RULES_MAX);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, struct net_bind_rule);
};
struct rules bind_allow SEC(".maps");
struct rules bind_deny SEC(".maps");

static __always_inline int matches(const struct net_bind_rule *r, __u32 family, __u32 protocol,
				   __u16 port)
{
	return (r->family == 0 || r->family == family) &&
	       (r->protocol == 0 || r->protocol == protocol) && port >= r->port_min &&
	       port <= r->port_max;
}

/* Whether a rule of the list matches; the list ends at its first unused entry. */
static __always_inline int any_matches(void *rules, __u32 family, __u32 protocol, __u16 port)
{
	for (__u32 i = 0; i < NET_BIND_RULES_MAX; i++) {
		__u32 key = i;
		const struct net_bind_rule *r = bpf_map_lookup_elem(rules, &key);

		if (!r || !r->used)
			return 0;
		if (matches(r, family, protocol, port))
			return 1;
	}
	return 0;
}

static __always_inline int bind_check(struct bpf_sock_addr *ctx, __u32 family)
{
	__u32 protocol = ctx->protocol;
	/* user_port holds the port in network byte order in its low 16 bits. */
	__u16 port = bpf_ntohs((__u16)ctx->user_port);

	/* Only the socket's own family is checked, as systemd does. */
	if (ctx->user_family != family || ctx->family != family)
		return 1;
	if (any_matches(&bind_allow, family, protocol, port))
		return 1;
	return any_matches(&bind_deny, family, protocol, port) ? 0 : 1;
}

SEC("cgroup/bind4")
int bind4(struct bpf_sock_addr *ctx)
{
	return bind_check(ctx, AF_INET);
}

SEC("cgroup/bind6")
int bind6(struct bpf_sock_addr *ctx)
{
	return bind_check(ctx, AF_INET6);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
