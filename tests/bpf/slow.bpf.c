/* SPDX-License-Identifier: MIT */
/*
 * A socket filter that is slow to verify: a bounded loop the verifier walks
 * iteration by iteration. With CAP_BPF alone (the broker's socket filter
 * loads) it also explores speculative paths and gives up after some 0.4 s,
 * well past the verifier time limit the tests set.
 */
#include "bpf_test.h"

#ifndef SLOW_ITERATIONS
#define SLOW_ITERATIONS 60000
#endif

SEC("socket")
int slow_verify(struct __sk_buff *skb)
{
	__u32 len = skb->len;
	__u64 sum = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < SLOW_ITERATIONS; i++)
		sum += (__u64)(i ^ len) * (i | 1);
	return sum & 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
