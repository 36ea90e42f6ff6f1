/* SPDX-License-Identifier: MIT */
/*
 * A socket filter whose object also declares a struct_ops map (a TCP
 * congestion control registration), with no struct_ops program: writing
 * that map would register kernel-wide objects, and libbpf 1.1.2 dereferences
 * NULL loading such an object when nothing else makes it load kernel BTF.
 */
#include "bpf_test.h"

/* Only the name matters here; libbpf matches the kernel's type by it. */
struct tcp_congestion_ops {
	char name[16];
};

SEC(".struct_ops")
struct tcp_congestion_ops broker_cc = {
	.name = "broker_cc",
};

SEC("socket")
int plain_filter(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
