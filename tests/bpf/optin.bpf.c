/* SPDX-License-Identifier: MIT */
/*
 * libbpf's opt-in programs: SEC("?socket") is not loaded unless the loader
 * turns its autoload on (bpf_program__set_autoload(), or the broker's
 * "programs" list naming it). optin_always loads by default.
 */
#include "bpf_test.h"

SEC("socket")
int optin_always(struct __sk_buff *skb)
{
	return 0;
}

SEC("?socket")
int optin_maybe(struct __sk_buff *skb)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
