/* SPDX-License-Identifier: MIT */
/*
 * Corpus: const volatile settings the loader writes before load (a pid
 * filter, a switch), and the verifier pruning code a setting turns off: with
 * strict set, a branch the verifier refuses becomes live.
 */
#include "bpf_test.h"

const volatile __u32 targ_pid = 0;
const volatile __u8 strict = 0;
const volatile __u64 scale = 1;

__u64 matched;

/* A hash: a lookup in an array by a constant key needs no null check on this kernel. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getpid")
int on_getpid(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u32 key = 0;
	__u64 *v;

	if (targ_pid && pid != targ_pid)
		return 0;
	v = bpf_map_lookup_elem(&slots, &key);
	if (strict)
		/* No null check: refused by the verifier, once the branch is live. */
		return *(__u64 *)((char *)v + 0) != 0;
	if (v)
		*v += scale;
	__sync_fetch_and_add(&matched, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
