/* SPDX-License-Identifier: MIT */
/*
 * A socket filter reading a kernel variable through a typed __ksym extern:
 * libbpf turns the load into a BPF_PSEUDO_BTF_ID reference, which is
 * reading kernel memory (class read_kernel_memory), base helpers or not.
 */
#include "bpf_test.h"

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

extern const int max_threads __ksym;

SEC("socket")
int read_kernel_var(struct __sk_buff *skb)
{
	return max_threads;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
