/* SPDX-License-Identifier: MIT */
/*
 * A weak typed __ksym extern that no kernel has, checked before use as
 * tools do: libbpf resolves it to 0 and the object loads.
 */
#include "bpf_test.h"

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

extern const int causes_no_such_var __ksym __weak;

SEC("socket")
int read_if_there(struct __sk_buff *skb)
{
	if (&causes_no_such_var)
		return causes_no_such_var;
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
