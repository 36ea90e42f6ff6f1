/* SPDX-License-Identifier: MIT */
/* An object of one map and no program: loadable without any program type granted. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} only_map SEC(".maps");

char LICENSE[] SEC("license") = "Dual MIT/GPL";
