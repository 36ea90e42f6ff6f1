/* SPDX-License-Identifier: MIT */
/* Corpus: a map pinned by name, shared between loads of the same tool. */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} corpus_shared SEC(".maps");

SEC("socket")
int pin_count(struct __sk_buff *skb)
{
	__u32 key = skb->protocol;
	__u64 one = 1;

	bpf_map_update_elem(&corpus_shared, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
