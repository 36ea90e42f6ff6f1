/* SPDX-License-Identifier: MIT */
/*
 * Passes every policy check (socket filter, base helpers) but the verifier
 * rejects it: the map value is used without the NULL check. The client must
 * get the verifier's log back.
 */
#include "bpf_test.h"

/* A hash: newer verifiers know constant-key array lookups can't fail. */
U32_U64_MAP(BPF_MAP_TYPE_HASH, 1) unchecked SEC(".maps");

SEC("socket")
int reject_me(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&unchecked, &key);

	return (int)*v; /* no NULL check: "invalid mem access 'map_value_or_null'" */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
