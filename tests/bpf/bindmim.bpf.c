/* SPDX-License-Identifier: MIT */
/*
 * A socket filter with a map of maps whose inner template is socket-bind's rule array
 * without BPF_F_RDONLY_PROG: a holder of any fd to a bind_allow map puts it in "outer"
 * (map_insert) and writes rule 0 from this program, frozen or not. With the flag on
 * bind_allow the kernel refuses the insert (the template's flags differ); bindmim_ro has
 * the flag on its template, and the verifier refuses its write.
 */
#include "bpf_test.h"

struct rule {
	__u8 used, family, protocol, pad;
	__u16 port_min, port_max;
};

#ifndef INNER_FLAGS
#define INNER_FLAGS 0
#endif

struct inner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 128);
	__uint(map_flags, INNER_FLAGS);
	__type(key, __u32);
	__type(value, struct rule);
} inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct inner_map);
} outer SEC(".maps") = {
	.values = {&inner},
};

/* Rule 0 of the map in outer: any port of any family and protocol. */
SEC("socket")
int write_rule(struct __sk_buff *skb)
{
	__u32 key = 0;
	struct rule any = {.used = 1, .port_min = 1, .port_max = 65535};
	void *m = bpf_map_lookup_elem(&outer, &key);

	if (m)
		bpf_map_update_elem(m, &key, &any, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
