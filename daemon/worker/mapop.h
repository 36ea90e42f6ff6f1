/* SPDX-License-Identifier: MIT */
/*
 * Map operations done by the broker on a caller's behalf (method "map",
 * proto/NAMED.md): for callers whose own bpf() calls fail, as on kernels
 * before 6.5 with kernel.unprivileged_bpf_disabled set, where even a lookup
 * on a map fd the broker handed out is EPERM. The caller's access decides,
 * exactly as the mode of an fd would: ro reads, wo writes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "proto/proto.h"
#include "reply.h"

/* How the broker treats a map type (by the kernel's type number). */
enum mapop_class {
	MAPOP_DATA, /* keys and values are plain bytes: every op */
	MAPOP_FD_VALUES, /* values are fds (prog_array, maps of maps, sockmap, ...): no update */
	MAPOP_FD_KEYS, /* keys are fds (sk_storage, task_storage, ...): info only */
	MAPOP_OTHER, /* no keys (queue, ring buffer, ...) or unknown: info only */
};

enum mapop_class mapop_class_of(unsigned map_type);
/* Per-CPU maps: a value is round_up(value_size, 8) for every possible CPU. */
bool mapop_type_is_percpu(unsigned map_type);

/*
 * Whether a caller with access may do op on a map of this type through the
 * broker: 0, or -EPERM (the access doesn't allow it) or -EOPNOTSUPP (the type
 * doesn't), with a sentence for the caller in msg.
 */
int mapop_check(enum proto_map_op op, unsigned map_type, bool map_of_maps, enum map_access access,
		const char *name, char *msg, size_t size);

/*
 * The BTF the caller may know for the map (named.c decides: the object's for
 * the owner, only the shared maps' types for others) and the map's key and
 * value type ids in it, which op info reports instead of the kernel's.
 */
struct mapop_btf {
	const void *data; /* for op btf; NULL: none */
	size_t size;
	uint32_t key_type_id, value_type_id; /* 0: none */
};

/*
 * Do req on map_fd (the broker's own fd of the map, named name) for a caller
 * whose effective access is access (not NONE), which the policy key
 * access_key grants ("maps" or "shared", named in a refusal). most is the
 * most access any grant of that key gives this caller for a map of its type:
 * a refusal for an access beyond it names no key. Raises CAP_BPF around its
 * bpf() calls only (needed before Linux 6.5 with unprivileged BPF disabled).
 * 0 when r holds the result, > 0 when it holds an error (reply.h), or a
 * negative errno (then r gets an "internal" error).
 */
int mapop_run(int map_fd, const struct mapop_btf *btf, const char *name, enum map_access access,
	      enum map_access most, const char *access_key, const struct proto_map_request *req,
	      struct reply *r);
