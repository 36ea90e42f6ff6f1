/* SPDX-License-Identifier: MIT */
/*
 * The daemon's own object, loaded once at startup so that libbpf probes the
 * kernel's features (BTF kinds, global data, mmapable arrays, program names,
 * memcg accounting, ...) before any worker is forked: libbpf caches the
 * answers per process, and workers inherit them instead of probing again on
 * every load. It uses what client objects typically use.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} warm_map SEC(".maps");

const volatile __u64 warm_rodata = 1;
__u64 warm_data = 2;
__u64 warm_bss;

static __attribute__((noinline)) int warm_sub(int x)
{
	return x + 1;
}

SEC("socket")
int warm(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&warm_map, &key);

	if (v)
		*v += warm_rodata + warm_data;
	warm_bss++;
	return warm_sub(skb->len) & 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
