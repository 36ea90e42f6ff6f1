/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a perf event array declared with the record's size as its value,
 * as tools that write one source for ring and perf buffers do. The kernel
 * wants 4 bytes (a perf event fd) there: the loader resets the value size.
 */
#include "bpf_test.h"

struct event {
	__u32 pid;
	__u32 len;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct event));
} pb SEC(".maps");

SEC("socket")
int to_perf(struct __sk_buff *skb)
{
	struct event e = {.len = skb->len};

	bpf_perf_event_output(skb, &pb, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
