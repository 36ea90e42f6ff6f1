/* SPDX-License-Identifier: MIT */
/* A uprobe program that reads kernel memory: needs helper class read_kernel_memory. */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) peeks SEC(".maps");

SEC("uprobe")
int peek_kernel(void *ctx)
{
	__u32 key = 0;
	__u64 word = 0, *v = bpf_map_lookup_elem(&peeks, &key);

	bpf_probe_read_kernel(&word, sizeof(word), ctx);
	if (v)
		*v = word;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
