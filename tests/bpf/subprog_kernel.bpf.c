/* SPDX-License-Identifier: MIT */
/*
 * The program itself calls no privileged helper; its subprogram in .text
 * does (bpf_probe_read_kernel). Inspection must see through the call. The
 * verifier would reject this for a socket filter, which is fine: policy
 * denies it before load.
 */
#include "bpf_test.h"

static __noinline __u64 peek(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), p);
	return v;
}

SEC("socket")
int uses_subprog(struct __sk_buff *skb)
{
	return peek((const void *)(unsigned long)skb->len) != 0;
}

char LICENSE[] SEC("license") = "GPL";
