/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a map the kernel will not create: an LPM trie must be created
 * without preallocation (BPF_F_NO_PREALLOC), and this one is not.
 */
#include "bpf_test.h"

struct lpm_key {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 16);
	__type(key, struct lpm_key);
	__type(value, __u32);
} prefixes SEC(".maps");

SEC("socket")
int match(struct __sk_buff *skb)
{
	struct lpm_key k = {.prefixlen = 32, .addr = skb->remote_ip4};

	return bpf_map_lookup_elem(&prefixes, &k) ? skb->len : 0;
}

char LICENSE[] SEC("license") = "GPL";
