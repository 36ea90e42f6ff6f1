/* SPDX-License-Identifier: MIT */
/*
 * Several programs in several sections sharing .text, to test reachability
 * per program: multi_a -> middle (static) -> deep (global) -> get_prandom_u32;
 * multi_b calls ktime_get_ns itself and nothing in .text; multi_c calls
 * nothing.
 */
#include "bpf_test.h"

__noinline int deep(int x)
{
	return x + (int)(bpf_get_prandom_u32() & 1);
}

static __noinline int middle(int x)
{
	return deep(x) + 1;
}

SEC("socket")
int multi_a(struct __sk_buff *skb)
{
	return middle(skb->len) & 1;
}

SEC("socket")
int multi_b(struct __sk_buff *skb)
{
	return bpf_ktime_get_ns() & 1;
}

SEC("raw_tracepoint/sys_enter")
int multi_c(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
