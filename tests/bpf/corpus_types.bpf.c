/* SPDX-License-Identifier: MIT */
/*
 * Corpus: one small program of each common type, all counting into one
 * shared map: the types loaders of every kind bring.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 8) hits SEC(".maps");

static __always_inline void hit(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &i);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tracepoint/sched/sched_process_fork")
int tp_fork(void *ctx)
{
	hit(0);
	return 0;
}

SEC("raw_tracepoint/sys_enter")
int raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
	hit(1);
	return 0;
}

SEC("uprobe")
int user_probe(void *ctx)
{
	hit(2);
	return 0;
}

SEC("kprobe/do_unlinkat")
int kern_probe(void *ctx)
{
	hit(3);
	return 0;
}

SEC("cgroup_skb/ingress")
int skb_in(struct __sk_buff *skb)
{
	hit(4);
	return 1;
}

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	hit(5);
	return XDP_PASS;
}

SEC("socket")
int sock_count(struct __sk_buff *skb)
{
	hit(6);
	return skb->len;
}

SEC("cgroup/dev")
int dev_allow(struct bpf_cgroup_dev_ctx *ctx)
{
	hit(7);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
