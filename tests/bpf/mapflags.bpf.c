/* SPDX-License-Identifier: MIT */
/*
 * Maps the broker must refuse for what they carry beyond their type: one
 * with BPF_F_TOKEN_FD (1 << 16) in its flags (the kernel would take a token
 * by fd from the worker's table), and an array of maps whose inner maps are
 * prog arrays (a type granted only by name).
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, 1u << 16);
	__type(key, __u32);
	__type(value, __u64);
} token_flag SEC(".maps");

struct inner_jumps {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_jumps);
} outer_jumps SEC(".maps");

SEC("socket")
int flagged(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&token_flag, &key) ? 1 : 0;
}

SEC("socket")
int nested(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&outer_jumps, &key) ? 1 : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
