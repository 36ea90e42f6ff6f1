/* SPDX-License-Identifier: MIT */
/* A kprobe program counting nanosleeps into a map. */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) kprobe_counts SEC(".maps");

SEC("kprobe/do_nanosleep")
int kprobe_count(void *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&kprobe_counts, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
