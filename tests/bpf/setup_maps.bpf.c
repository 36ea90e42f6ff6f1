/* SPDX-License-Identifier: MIT */
/*
 * Maps that real loaders reshape between open and load: a stack-trace map
 * whose value size (the stack depth) is set at run time, a ring buffer and a
 * perf event array declared with the value type of their records, and a map
 * of maps declared without an inner template (the loader gives it one).
 */
#include "bpf_test.h"

#define MAX_DEPTH 8

struct event {
	__u32 pid;
	__u64 when;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
	__type(value, struct event);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__type(value, struct event);
} perf_events SEC(".maps");

/* No __array(values, ...): the loader creates the inner map and gives its fd. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} per_cpu_tables SEC(".maps");

SEC("socket")
int count(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&per_cpu_tables, &key) ? 1 : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
