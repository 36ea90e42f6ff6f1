/* SPDX-License-Identifier: MIT */
/*
 * Things a client configures between open and load: a .rodata constant, a
 * map without a size (max_entries 0 must be set at run time, or the kernel
 * refuses to create it), and a program in a section libbpf does not know,
 * whose type must be set explicitly. .bss and .data give the object's
 * internal maps.
 */
#include "bpf_test.h"

const volatile __u64 cfg_value = 0;
__u64 bss_counter;
__u64 data_value = 7;

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 0) sized_later SEC(".maps");

SEC("socket")
int cfg_prog(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 v = cfg_value + data_value;

	bpf_map_update_elem(&sized_later, &key, &v, BPF_ANY);
	__sync_fetch_and_add(&bss_counter, 1);
	return 0;
}

SEC("bpfbroker_custom")
int custom_prog(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
