/* SPDX-License-Identifier: MIT */
/* A raw tracepoint program counting system calls into a map. */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) rawtp_counts SEC(".maps");

SEC("raw_tracepoint/sys_enter")
int rawtp_count(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&rawtp_counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
