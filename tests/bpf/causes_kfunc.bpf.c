/* SPDX-License-Identifier: MIT */
/*
 * A kfunc no kernel has, not weak: libbpf refuses the load with ESRCH,
 * naming the function.
 */
#include "bpf_test.h"

extern void causes_no_such_kfunc(void) __ksym;

SEC("tp_btf/sys_enter")
int call_missing(void *ctx)
{
	causes_no_such_kfunc();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
