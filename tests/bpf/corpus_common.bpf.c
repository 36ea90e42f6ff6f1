/* SPDX-License-Identifier: MIT */
/*
 * Corpus: what most objects have and must just load: .rodata, .data and
 * .bss, several programs sharing maps, a static subprogram, a bpf_loop
 * callback, tail calls through a program array, a per-CPU array and an LRU
 * hash, a hash without preallocation, a global function and bpf_printk (its
 * format strings in .rodata.str1.1).
 */
#include "bpf_test.h"

const volatile __u32 sample_rate = 1;
__u64 packets = 0;
__u64 threshold = 64;
char tag[8] = "corpus";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} percpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u64);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} jumps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} sparse SEC(".maps");

/* A global function: verified on its own, for any scalar argument. */
__attribute__((noinline)) int remember(__u32 hash)
{
	__u64 one = 1;

	return bpf_map_update_elem(&sparse, &hash, &one, BPF_ANY) == 0;
}

static __attribute__((noinline)) int account(__u32 len)
{
	__u32 key = len > threshold;
	__u64 *v = bpf_map_lookup_elem(&percpu_stats, &key);

	if (v)
		*v += len;
	return key;
}

static int add_cb(__u32 index, void *data)
{
	*(__u64 *)data += index;
	return 0;
}

SEC("socket")
int classify(struct __sk_buff *skb)
{
	__u64 sum = 0, one = 1;
	__u32 hash = skb->hash;

	__sync_fetch_and_add(&packets, 1);
	if (sample_rate > 1 && packets % sample_rate)
		return 0;
	bpf_loop(4, add_cb, &sum, 0);
	bpf_map_update_elem(&flows, &hash, &one, BPF_ANY);
	bpf_tail_call(skb, &jumps, account(skb->len));
	return sum > 100 ? 0 : skb->len;
}

SEC("socket")
int small(struct __sk_buff *skb)
{
	account(skb->len);
	return skb->len;
}

SEC("socket")
int large(struct __sk_buff *skb)
{
	__u32 hash = skb->hash;

	bpf_map_delete_elem(&flows, &hash);
	if (!remember(hash))
		bpf_printk("corpus: %u not remembered", hash);
	return tag[0] ? skb->len : 0;
}

char LICENSE[] SEC("license") = "GPL";
