/* SPDX-License-Identifier: MIT */
/*
 * The BTF anyone but an object's owner gets: only the types of the maps
 * shared with them. An object's BTF holds the names of all its maps,
 * programs and global variables, its source lines and file names (for line
 * info); a non-owner learns none of that, only the key and value types of
 * what they may read or write, to pretty-print it.
 *
 * Pure: bytes in, bytes out, no kernel. The input is the kernel's own (read
 * back from a loaded BTF), but is checked as hostile input all the same.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Largest BTF filtered (the kernel's own limit for a loaded BTF is 16 MiB). */
#define BTFFILTER_MAX_BYTES (16u * 1024 * 1024)

/*
 * A new raw BTF (header, types, strings) with only the types reachable from
 * the type ids in ids[0..n_ids), renumbered from 1 in their old order, and
 * only the strings those types name. ids is rewritten with the new ids.
 * An id is dropped (becomes 0, and brings no type) if what it reaches is
 * not plain data: a FUNC, VAR, DATASEC (the value of a global-data map) or
 * DECL_TAG, which name the object's functions and variables. Id 0 (none)
 * stays 0.
 *
 * *ret (free() it) and *ret_size are set on success; when no id is left
 * *ret is NULL and *ret_size 0: there is nothing to hand out. Errors:
 * -EBADMSG malformed input (bad header, type or string offset, unknown
 * kind, an id out of range), -E2BIG over BTFFILTER_MAX_BYTES, -ENOMEM.
 */
int btffilter_build(const void *btf, size_t size, uint32_t *ids, size_t n_ids, void **ret,
		    size_t *ret_size);
