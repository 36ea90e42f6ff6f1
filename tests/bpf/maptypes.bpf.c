/* SPDX-License-Identifier: MIT */
/*
 * A socket filter with maps of types beyond plain data: a cpumap (each
 * entry a user writes starts a kernel thread) and a prog_array (values are
 * programs). Granted only by name in a policy's map_types.
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} jumps SEC(".maps");

/* Programs can't use a cpumap outside XDP; libbpf creates it anyway, and the fd writes it. */
SEC("socket")
int filter_with_maps(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &jumps, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
