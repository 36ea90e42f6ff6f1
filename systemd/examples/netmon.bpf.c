/* SPDX-License-Identifier: MIT */
/*
 * The per-user service example's BPF side: a socket filter that counts the
 * datagrams (and their bytes) its socket receives, and drops those longer
 * than config_max_len allows. Under the example policy
 * (examples/policy.d/50-example.json) "config_max_len" comes back read-only
 * (config*) and "stats" read-write.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

/* stats[0]: datagrams counted, stats[1]: their bytes, stats[2]: dropped as too long. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* config_max_len[0]: longest datagram kept, in bytes of the skb (0: no limit). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} config_max_len SEC(".maps");

static void stats_add(__u32 key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("socket")
int netmon_count(struct __sk_buff *skb)
{
	__u32 zero = 0;
	__u64 *max = bpf_map_lookup_elem(&config_max_len, &zero);

	if (max && *max && skb->len > *max) {
		stats_add(2, 1);
		return 0; /* drop */
	}
	stats_add(0, 1);
	stats_add(1, skb->len);
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
