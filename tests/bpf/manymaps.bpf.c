/* SPDX-License-Identifier: MIT */
/*
 * A socket filter with 64 maps whose names are 64 characters long (unique in
 * their first 15, the kernel's map name): a hundred of these make a list of
 * named objects larger than one reply may be, so listing must page.
 */
#include "bpf_test.h"

#define NAME_TAIL _a_long_but_legal_map_name_for_list_paging_in_the_broker_test
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define MAP(i) U32_U64_MAP(BPF_MAP_TYPE_ARRAY, 1) CAT(m##i, NAME_TAIL) SEC(".maps");

MAP(00)
MAP(01)
MAP(02)
MAP(03)
MAP(04)
MAP(05)
MAP(06)
MAP(07)
MAP(08)
MAP(09)
MAP(10)
MAP(11)
MAP(12)
MAP(13)
MAP(14)
MAP(15)
MAP(16)
MAP(17)
MAP(18)
MAP(19)
MAP(20)
MAP(21)
MAP(22)
MAP(23)
MAP(24)
MAP(25)
MAP(26)
MAP(27)
MAP(28)
MAP(29)
MAP(30)
MAP(31)
MAP(32)
MAP(33)
MAP(34)
MAP(35)
MAP(36)
MAP(37)
MAP(38)
MAP(39)
MAP(40)
MAP(41)
MAP(42)
MAP(43)
MAP(44)
MAP(45)
MAP(46)
MAP(47)
MAP(48)
MAP(49)
MAP(50)
MAP(51)
MAP(52)
MAP(53)
MAP(54)
MAP(55)
MAP(56)
MAP(57)
MAP(58)
MAP(59)
MAP(60)
MAP(61)
MAP(62)
MAP(63)

SEC("socket")
int many_maps(struct __sk_buff *skb)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&CAT(m00, NAME_TAIL), &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
