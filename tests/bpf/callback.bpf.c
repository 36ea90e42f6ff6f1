/* SPDX-License-Identifier: MIT */
/*
 * Helpers reached only through a bpf_loop callback (an ld_imm64 of a
 * function address, BPF_PSEUDO_FUNC once libbpf relocated it): the program
 * calls bpf_loop, the callback calls get_prandom_u32 and ktime_get_ns.
 */
#include "bpf_test.h"

struct loop_ctx {
	__u64 sum;
};

static int loop_cb(__u32 index, void *data)
{
	struct loop_ctx *ctx = data;

	ctx->sum += bpf_get_prandom_u32() ^ bpf_ktime_get_ns();
	return 0;
}

SEC("socket")
int loop_prog(struct __sk_buff *skb)
{
	struct loop_ctx ctx = {};

	bpf_loop(4, loop_cb, &ctx, 0);
	return ctx.sum & 1;
}

char LICENSE[] SEC("license") = "GPL";
