/* SPDX-License-Identifier: MIT */
/*
 * What /proc/self/fdinfo/FD says about a BPF map fd: map_type, max_entries,
 * map_flags, frozen. The one place the kernel tells whether a map is frozen
 * (struct bpf_map_info has no field for it), and readable without bpf(), so
 * the client library can check a ring buffer fd it was given.
 */
#pragma once

#include <stdint.h>

/*
 * The number on fd's fdinfo line "KEY:\tVALUE" (decimal, or hex with 0x as
 * map_flags is shown). 0 and *ret; -ENODATA if there is no such line (for
 * map keys: fd is no BPF map); -EINVAL for a value that is not a number; the
 * error of opening the fdinfo file otherwise (-ENOENT for a closed fd, or
 * without /proc).
 */
int fdinfo_get_u64(int fd, const char *key, uint64_t *ret);
