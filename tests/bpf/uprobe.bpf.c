/* SPDX-License-Identifier: MIT */
/*
 * uprobe programs (kprobe type) for brokered uprobe attach: count calls of a
 * function and returns from it. The maps have no filter: the broker binds the
 * probe to one process, so only that process counts.
 */
#include "bpf_test.h"

U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) uprobe_calls SEC(".maps");
U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) uprobe_returns SEC(".maps");

static void count(void *map)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("uprobe")
int count_calls(void *ctx)
{
	count(&uprobe_calls);
	return 0;
}

SEC("uretprobe")
int count_returns(void *ctx)
{
	count(&uprobe_returns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
