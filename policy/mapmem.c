// SPDX-License-Identifier: MIT
/* Kernel memory a map takes when full, estimated from its shape, for the max_map_memory_bytes
 * quota. */
#include <bpf/libbpf.h>

#include "common/macro.h"
#include "policy.h"

static uint64_t pow2_ceil(uint64_t n)
{
	uint64_t r = 1;

	while (r < n && r < (1ull << 62))
		r <<= 1;
	return r < n ? UINT64_MAX : r;
}

static uint64_t kmalloc_size(uint64_t size)
{
	return size < 16 ? 16 : pow2_ceil(size);
}

/*
 * Elements a map that doesn't preallocate keeps cached per possible CPU
 * besides its entries: the kernel's bpf_mem_alloc() fills each CPU's cache
 * up to a high watermark of 96 elements of 256 bytes' worth, at least 3
 * (kernel/bpf/memalloc.c), as soon as the map exists.
 */
static uint64_t mem_alloc_cached(uint64_t unit)
{
	uint64_t n = unit ? 96 * 256 / unit : 96;

	return n < 3 ? 3 : n;
}

/* A hash table's buckets: a power of two of them, 16 bytes each. */
static uint64_t hash_buckets(uint64_t n)
{
	return u64_mul_sat(pow2_ceil(n ? n : 1), 16);
}

/*
 * What the kernel allocates for a map filled up, as measured on Linux 6.18
 * (fdinfo memlock, and the memory cgroup's kernel memory), on the generous
 * side: array-like maps a pointer or value per entry, per-CPU maps one value
 * per possible CPU and entry; hashed maps their buckets and an element of
 * key + value and about 64 bytes of header each (80 here); LPM tries two
 * nodes per entry (the intermediate nodes, which the kernel's own figure
 * leaves out); ring buffers their data plus header pages and the page
 * table. Maps that don't preallocate are counted as full, which they can
 * become, with kmalloc's sizes and the elements their allocator caches on
 * every CPU (per-CPU values in each of those too).
 */
uint64_t policy_map_memory_estimate(const struct object_map *m, unsigned n_cpus)
{
	uint64_t key = ((uint64_t)m->key_size + 7) & ~7ull;
	uint64_t value = ((uint64_t)m->value_size + 7) & ~7ull;
	uint64_t n = m->max_entries, cpus = n_cpus ? n_cpus : 1;

	switch (m->map_type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return u64_add_sat(8192, u64_mul_sat(n, value ? value : 8));
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return u64_add_sat(8192, u64_mul_sat(n, u64_add_sat(8, u64_mul_sat(value, cpus))));
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE: {
		uint64_t elem = kmalloc_size(key + 88), n_values = n;

		/* Without preallocation the elements and the per-CPU values are cached per CPU. */
		if (m->map_flags & BPF_F_NO_PREALLOC) {
			n = u64_add_sat(n, u64_mul_sat(cpus, mem_alloc_cached(elem)));
			n_values =
				u64_add_sat(n_values, u64_mul_sat(cpus, mem_alloc_cached(value)));
		}
		return u64_add_sat(u64_add_sat(8192, hash_buckets(m->max_entries)),
				   u64_add_sat(u64_mul_sat(n, elem),
					       u64_mul_sat(n_values, u64_mul_sat(value, cpus))));
	}
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return u64_add_sat(u64_add_sat(n, n / 256), 20480);
	case BPF_MAP_TYPE_LPM_TRIE: {
		uint64_t node = kmalloc_size(key + value + 48);

		/* LPM tries never preallocate: their nodes come from bpf_mem_alloc() too. */
		return u64_add_sat(
			8192, u64_mul_sat(u64_add_sat(u64_mul_sat(n, 2),
						      u64_mul_sat(cpus, mem_alloc_cached(node))),
					  node));
	}
	default: {
		uint64_t elem = kmalloc_size(key + value + 80);

		if (m->map_flags & BPF_F_NO_PREALLOC)
			n = u64_add_sat(n, u64_mul_sat(cpus, mem_alloc_cached(elem)));
		return u64_add_sat(u64_add_sat(8192, hash_buckets(m->max_entries)),
				   u64_mul_sat(n, elem));
	}
	}
}

/* A map of maps' inner map is estimated as a map of its own (inner_*). */
uint64_t policy_map_inner_memory_estimate(const struct object_map *m, unsigned n_cpus)
{
	const struct object_map inner = {
		.map_type = m->inner_map_type,
		.key_size = m->inner_key_size,
		.value_size = m->inner_value_size,
		.max_entries = m->inner_max_entries,
		.map_flags = m->inner_map_flags,
	};

	return m->inner_map_type ? policy_map_memory_estimate(&inner, n_cpus) : 0;
}
