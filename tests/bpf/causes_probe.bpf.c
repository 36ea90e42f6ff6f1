/* SPDX-License-Identifier: MIT */
/*
 * Probes whether a kernel type exists, as tracing tools do to pick a code
 * path, and uses the answer. No kernel has struct causes_nope: libbpf finds
 * no candidate in vmlinux and, in 1.1.2, goes on to look in modules' BTF.
 */
#include "bpf_test.h"
#include <bpf/bpf_core_read.h>

struct causes_nope {
	int x;
};

SEC("socket")
int probe_type(struct __sk_buff *skb)
{
	if (bpf_core_type_exists(struct causes_nope))
		return 2;
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
