/* SPDX-License-Identifier: MIT */
/* A tracepoint program counting new processes (sched:sched_process_fork). */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) forks SEC(".maps");

SEC("tracepoint/sched/sched_process_fork")
int count_forks(void *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&forks, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
