/* SPDX-License-Identifier: MIT */
/*
 * A hash map that doesn't preallocate, with one entry of about 2 MiB: the
 * kernel's fdinfo memlock says 2 MiB, but each element takes 4 MiB (a power
 * of two of pages) and the map's allocator caches elements on every
 * possible CPU as soon as it exists.
 */
#include "bpf_test.h"

struct big_value {
	char d[2097104];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct big_value);
} lazy SEC(".maps");

SEC("socket")
int touch_lazy(struct __sk_buff *skb)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&lazy, &key) ? 1 : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
