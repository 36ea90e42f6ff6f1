/* SPDX-License-Identifier: MIT */
/*
 * A map of maps pinned by name. Reusing it would let this object's programs
 * reach the maps in it, which needs write access, and no grant gives write
 * access to a map of maps: a second load is refused with no policy key.
 */
#include "bpf_test.h"

struct pinned_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pinned_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct pinned_inner);
} pinned_outer SEC(".maps");

SEC("socket")
int pinned_mim_prog(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 one = 1;
	void *m = bpf_map_lookup_elem(&pinned_outer, &key);

	if (m)
		bpf_map_update_elem(m, &key, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
