/* SPDX-License-Identifier: MIT */
/* A ring buffer pinned by name: a second load reuses it, and its program writes records there. */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pinned_events SEC(".maps");

SEC("socket")
int report_pinned(struct __sk_buff *skb)
{
	__u32 len = skb->len;

	bpf_ringbuf_output(&pinned_events, &len, sizeof(len), 0);
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
