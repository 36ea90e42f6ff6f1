/* SPDX-License-Identifier: MIT */
/*
 * Maps for the broker's map operations (method "map"): arrays and hashes a
 * policy grants ro, wo, rw and none, a hash larger than one dump page, a
 * per-CPU array (values padded to 8 bytes per CPU), a map with a struct
 * value (BTF pretty-printing) and a prog array (values are fds). The
 * program only makes sure each map is used.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 4) counts SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) config_map SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) secret SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_HASH, 16) events_wo SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_HASH, 300) big SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} pcpu SEC(".maps");

struct point {
	__u32 x;
	__u32 y;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct point);
} points SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} progs SEC(".maps");

SEC("socket")
int touch_maps(struct __sk_buff *skb)
{
	__u32 key = 0, *p;
	__u64 one = 1;
	__u64 *v;
	struct point *pt;

	v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	v = bpf_map_lookup_elem(&config_map, &key);
	if (v && *v)
		return 0;
	v = bpf_map_lookup_elem(&secret, &key);
	if (v && *v)
		return 0;
	v = bpf_map_lookup_elem(&big, &key);
	if (v && *v)
		return 0;
	p = bpf_map_lookup_elem(&pcpu, &key);
	if (p)
		*p += 1;
	pt = bpf_map_lookup_elem(&points, &key);
	if (pt && pt->x)
		return 0;
	bpf_map_update_elem(&events_wo, &key, &one, BPF_ANY);
	bpf_tail_call(skb, &progs, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
