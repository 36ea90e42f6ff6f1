/* SPDX-License-Identifier: MIT */
/*
 * Shared by the BPF test objects: UAPI and libbpf helper definitions only
 * (no vmlinux.h, so the objects build on any kernel's headers), plus a
 * shorthand for the BTF-defined u32 -> u64 maps most tests use.
 */
#pragma once

#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#define U32_U64_MAP(map_type, entries)                                                             \
	struct {                                                                                   \
		__uint(type, map_type);                                                            \
		__uint(max_entries, entries);                                                      \
		__type(key, __u32);                                                                \
		__type(value, __u64);                                                              \
	}
