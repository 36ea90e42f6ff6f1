/* SPDX-License-Identifier: MIT */
/*
 * An fentry program whose target function no kernel has (as if it were in a
 * module that is not loaded): libbpf looks in vmlinux, then in modules' BTF,
 * and refuses the load with ESRCH, naming the function.
 */
#include "bpf_test.h"

SEC("fentry/causes_no_such_func")
int trace_missing(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
