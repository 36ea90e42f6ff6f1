/* SPDX-License-Identifier: MIT */
/*
 * A struct_ops map with its struct_ops program, and a socket filter: loading
 * only the socket filter leaves the map without a program to load, which
 * libbpf 1.1.2 dereferences NULL over (the broker refuses it first).
 */
#include "bpf_test.h"

/* Only the names matter here; libbpf matches the kernel's types by them. */
struct tcp_congestion_ops {
	void (*init)(void *sk);
	char name[16];
};

SEC("struct_ops/broker_init")
void broker_init(void *sk)
{
}

SEC(".struct_ops")
struct tcp_congestion_ops broker_cc = {
	.init = (void *)broker_init,
	.name = "broker_cc",
};

SEC("socket")
int plain_filter(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
