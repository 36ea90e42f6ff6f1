/* SPDX-License-Identifier: MIT */
/*
 * Corpus: sections newer than libbpf 1.1.2 knows. Loaders built on such a
 * libbpf set the program's type and the kernel's attach type themselves.
 */
#include "bpf_test.h"

SEC("cgroup/sendmsg_unix")
int unix_sendmsg(struct bpf_sock_addr *ctx)
{
	return 1;
}

SEC("tcx/ingress")
int tcx_in(struct __sk_buff *skb)
{
	return skb->len > 1500 ? 2 : 0;
}

SEC("netkit/primary")
int nk_primary(struct __sk_buff *skb)
{
	return -1;
}

char LICENSE[] SEC("license") = "GPL";
