/* SPDX-License-Identifier: MIT */
/*
 * A tracepoint program reading the file name of every openat(), whoever
 * calls it, with bpf_probe_read_user (class read_user_memory). In a
 * tracepoint the current task is anyone's: read_user_memory alone must not
 * grant this (read_user_memory_any_task does).
 */
#include "bpf_test.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[64]);
} names SEC(".maps");

struct sys_enter_openat {
	__u64 common;
	__s32 nr;
	__u64 dfd;
	const char *filename;
};

SEC("tracepoint/syscalls/sys_enter_openat")
int read_open_names(struct sys_enter_openat *ctx)
{
	__u32 key = 0;
	char *v = bpf_map_lookup_elem(&names, &key);

	if (v)
		bpf_probe_read_user_str(v, 64, ctx->filename);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
