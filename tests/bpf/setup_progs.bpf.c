/* SPDX-License-Identifier: MIT */
/*
 * Programs real loaders set up beyond what their section says: a
 * cgroup_sock_addr program in a section libbpf 1.1.2 does not know (its
 * attach type, cgroup_unix_sendmsg, is newer), and a tp_btf program whose
 * BTF attach target the loader sets.
 */
#include "bpf_test.h"

SEC("cgroup/sendmsg_unix")
int unix_sendmsg(struct bpf_sock_addr *ctx)
{
	return 1;
}

/* tp_btf without a target: the loader names the tracepoint (sched_process_fork here). */
SEC("tp_btf")
int on_fork(__u64 *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
