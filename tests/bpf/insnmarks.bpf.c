/* SPDX-License-Identifier: MIT */
/*
 * Socket filters whose code the integration tests rewrite in memory into
 * instructions a compiler would not emit: each holds a 64-bit load of a
 * marker constant (and a call) the test finds and changes, e.g. into a
 * BPF_PSEUDO_BTF_ID load of a kernel function without a relocation, or a
 * call encoded as BPF_JMP32. Base helpers only.
 */
#include "bpf_test.h"

/*
 * r1 = marker, returned: as a kernel function's address the verifier
 * refuses to return it ("leaks addr"), after printing the load in its log.
 */
SEC("socket")
int marked_fail(struct __sk_buff *skb)
{
	long v;

	asm volatile("r1 = 0x1122334455667788 ll;"
		     "%0 = r1;"
		     : "=r"(v)::"r1");
	return v;
}

/* A helper call right after the marker, which the test re-encodes. */
SEC("socket")
int marked_call(struct __sk_buff *skb)
{
	asm volatile("r1 = 0x1122334455667788 ll;"
		     "call 5;" /* bpf_ktime_get_ns */
		     ::
			     : "r0", "r1", "r2", "r3", "r4", "r5");
	return 0;
}

/*
 * A constant that looks like a kernel address, dereferenced: the verifier
 * refuses the load through a scalar, and its log prints the constant.
 */
SEC("socket")
int kernelish_constant(struct __sk_buff *skb)
{
	long v;

	asm volatile("r1 = 0xffffffff81234560 ll;"
		     "%0 = *(u64 *)(r1 + 0);"
		     : "=r"(v)::"r1");
	return v;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
