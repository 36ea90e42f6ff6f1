/* SPDX-License-Identifier: MIT */
/*
 * A CO-RE field access that is no probe: __sk_buff exists in the kernel's
 * BTF, its field causes_nope does not. libbpf 1.1.2 turns the instruction
 * into a call to unknown#195896080, the verifier refuses it when it is
 * reached, and libbpf rewrites that line of the log to name the relocation.
 */
#include "bpf_test.h"

struct __sk_buff___causes {
	__u32 causes_nope;
} __attribute__((preserve_access_index));

SEC("socket")
int read_missing_field(struct __sk_buff *skb)
{
	return ((struct __sk_buff___causes *)skb)->causes_nope;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
