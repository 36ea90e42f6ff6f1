/* SPDX-License-Identifier: MIT */
/*
 * Corpus: one probe written twice, as fentry and as kprobe, and a program
 * whose attach target the loader gives: tools load the variant the kernel
 * supports and turn autoload off for the other.
 */
#include "bpf_test.h"
#include <bpf/bpf_tracing.h>

__u64 calls;

SEC("fentry/do_unlinkat")
int BPF_PROG(unlink_fentry, int dfd)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

SEC("kprobe/do_unlinkat")
int unlink_kprobe(void *ctx)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

SEC("fentry")
int BPF_PROG(any_fentry)
{
	__sync_fetch_and_add(&calls, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
