/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a ring buffer declared with the record's type as its value, as
 * tools that write one source for ring and perf buffers do. The kernel wants
 * no value size on a ring buffer: the loader resets it to 0 before load.
 */
#include "bpf_test.h"

struct event {
	__u32 pid;
	__u32 len;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
	__type(value, struct event);
} rb SEC(".maps");

SEC("socket")
int to_ring(struct __sk_buff *skb)
{
	struct event *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);

	if (!e)
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->len = skb->len;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
