/* SPDX-License-Identifier: MIT */
/*
 * Corpus: networking programs of the kinds service meshes, firewalls and
 * load balancers load, with the maps they redirect through: sockets in
 * sockmaps and sockhashes, devices, CPUs and AF_XDP sockets, socket storage.
 */
#include "bpf_test.h"

#define FD_MAP(map_type, n)                                                                        \
	struct {                                                                                   \
		__uint(type, map_type);                                                            \
		__uint(max_entries, n);                                                            \
		__type(key, __u32);                                                                \
		__type(value, __u32);                                                              \
	}

FD_MAP(BPF_MAP_TYPE_SOCKMAP, 8) socks SEC(".maps");
FD_MAP(BPF_MAP_TYPE_SOCKHASH, 8) sockhash SEC(".maps");
FD_MAP(BPF_MAP_TYPE_DEVMAP, 4) ports SEC(".maps");
FD_MAP(BPF_MAP_TYPE_CPUMAP, 2) cpus SEC(".maps");
FD_MAP(BPF_MAP_TYPE_XSKMAP, 4) xsks SEC(".maps");
FD_MAP(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, 4) reuse SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sk_bytes SEC(".maps");

SEC("tc")
int tc_mark(struct __sk_buff *skb)
{
	skb->mark = 1;
	return 0;
}

SEC("sockops")
int sockops_track(struct bpf_sock_ops *ops)
{
	__u32 key = ops->local_port & 7;

	if (ops->op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		bpf_sock_map_update(ops, &socks, &key, BPF_ANY);
	return 1;
}

SEC("sk_msg")
int msg_redirect(struct sk_msg_md *msg)
{
	return bpf_msg_redirect_map(msg, &socks, 0, 0);
}

SEC("sk_skb/stream_verdict")
int skb_verdict(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_sk_redirect_hash(skb, &sockhash, &key, 0);
}

SEC("sk_lookup")
int lookup_pass(struct bpf_sk_lookup *ctx)
{
	return SK_PASS;
}

SEC("flow_dissector")
int dissect(struct __sk_buff *skb)
{
	return BPF_OK;
}

SEC("cgroup/sysctl")
int sysctl_ro(struct bpf_sysctl *ctx)
{
	return !ctx->write;
}

SEC("cgroup/getsockopt")
int getsockopt_pass(struct bpf_sockopt *ctx)
{
	return 1;
}

SEC("cgroup/sock_create")
int sock_create(struct bpf_sock *sk)
{
	return 1;
}

SEC("cgroup/connect4")
int connect4(struct bpf_sock_addr *ctx)
{
	return 1;
}

SEC("cgroup_skb/egress")
int count_bytes(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;
	__u64 *v;

	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return 1;
	v = bpf_sk_storage_get(&sk_bytes, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (v)
		*v += skb->len;
	return 1;
}

SEC("lwt_in")
int lwt_pass(struct __sk_buff *skb)
{
	return BPF_OK;
}

SEC("sk_reuseport")
int pick(struct sk_reuseport_md *md)
{
	__u32 key = md->hash & 3;

	return bpf_sk_select_reuseport(md, &reuse, &key, 0) == 0 ? SK_PASS : SK_DROP;
}

SEC("xdp")
int xdp_spread(struct xdp_md *ctx)
{
	__u32 q = ctx->rx_queue_index;

	if (bpf_map_lookup_elem(&xsks, &q))
		return bpf_redirect_map(&xsks, q, XDP_PASS);
	if (q & 1)
		return bpf_redirect_map(&cpus, 0, XDP_PASS);
	return bpf_redirect_map(&ports, 0, XDP_PASS);
}

char LICENSE[] SEC("license") = "GPL";
