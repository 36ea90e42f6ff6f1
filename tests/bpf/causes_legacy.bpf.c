/* SPDX-License-Identifier: MIT */
/*
 * A map in the legacy "maps" section, which libbpf 1.0 and later refuse to
 * open: libbpf's own failure, named as such.
 */
#include "bpf_test.h"

struct causes_legacy_def {
	unsigned int type, key_size, value_size, max_entries, map_flags;
};

struct causes_legacy_def causes_old SEC("maps") = {
	.type = BPF_MAP_TYPE_ARRAY,
	.key_size = 4,
	.value_size = 8,
	.max_entries = 1,
};

SEC("socket")
int legacy(struct __sk_buff *skb)
{
	return 1;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
