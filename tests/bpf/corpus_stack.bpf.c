/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a profiler's shape. The stack-trace map declares only its key:
 * the loader sets its value size (stack depth x 8 bytes) and its entries at
 * run time, as profilers that take the depth as an option do, and a
 * filter map keyed by task names whose key size the loader sets.
 */
#include "bpf_test.h"
#include <linux/bpf_perf_event.h>

#define STACK_FLAGS (BPF_F_USER_STACK)

struct key_t {
	__u32 pid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__type(key, __u32);
} stackmap SEC(".maps");

/* Task names to sample, filled by user space: the loader sets the key size (TASK_COMM_LEN). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__uint(key_size, 8);
	__uint(value_size, 1);
} comm_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct key_t);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	struct key_t key = {.pid = bpf_get_current_pid_tgid() >> 32};
	__u64 one = 1, *v;

	key.user_stack_id = bpf_get_stackid(ctx, &stackmap, STACK_FLAGS);
	key.kern_stack_id = bpf_get_stackid(ctx, &stackmap, 0);
	v = bpf_map_lookup_elem(&counts, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
