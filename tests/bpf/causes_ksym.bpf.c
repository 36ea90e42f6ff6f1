/* SPDX-License-Identifier: MIT */
/*
 * A typed __ksym extern that no kernel has and that is not weak: libbpf
 * refuses the load with ESRCH, naming the symbol.
 */
#include "bpf_test.h"

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

extern const int causes_no_such_var __ksym;

SEC("socket")
int read_missing(struct __sk_buff *skb)
{
	return causes_no_such_var;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
