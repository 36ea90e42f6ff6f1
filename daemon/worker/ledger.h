/* SPDX-License-Identifier: MIT */
/*
 * The per-user ledger of kernel objects: every map and program the broker
 * created for a user, named or not, pinned or held only by a client's fd,
 * counted against the user's quotas for as long as the kernel keeps it.
 *
 *   <state_dir>/<uid>/ledger     a header, then fixed-size records
 *
 * Records are appended as objects are made, and dropped when the ledger is
 * *pruned*: every id is looked up (BPF_*_GET_FD_BY_ID) and checked against
 * its stamp (a program's load time; a map's type and size; a BTF's size),
 * so an object the kernel has freed stops counting, and an id the kernel
 * reused for another object is counted only if it looks the same (which
 * can only count too much). Dead records only ever count
 * too much, so the ledger is pruned when a count is about to refuse
 * something, when it is reported, and when it has grown to twice what was
 * alive at the last pruning: a load costs one read and one append, not a
 * lookup per object the user has.
 *
 * A map is charged what the kernel reports for it (fdinfo "memlock") or,
 * where that is less, what it can grow to (policy_map_memory_estimate():
 * per-CPU copies, hash maps filled up); a cpumap, one kernel thread per
 * entry; the BTF an object brings (or a non-owner's filtered view of one),
 * five times its size.
 *
 * Run only in workers, under the user's store lock (store_lock_user()) when
 * it changes, so that checking the quota, creating the objects and
 * recording them is one step for each user. Lookups raise CAP_SYS_ADMIN for
 * their duration.
 */
#pragma once

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

struct ledger_entry {
	char kind; /* 'm' map, 'p' program, 'b' BTF */
	uint8_t reserved[3];
	uint32_t id;
	uint64_t stamp; /* program: load_time; map: type << 32 | max_entries; BTF: its size */
	uint64_t charge; /* bytes (maps and BTF) */
	uint64_t threads; /* kernel threads the map can start (cpumap entries) */
};

struct ledger {
	char path[4096];
	struct ledger_entry *entries;
	size_t n, cap;
	size_t n_stored; /* entries[0..n_stored) are in the file as it is */
	uint64_t live_at_prune; /* entries alive when the file was last pruned */
	bool rewrite; /* the file must be written whole (pruned, or new) */
};

struct ledger_usage {
	uint64_t maps, programs, kernel_threads;
	uint64_t map_bytes; /* maps and BTF: what max_map_memory_bytes bounds */
	uint64_t btf_bytes; /* the part that is BTF */
};

/*
 * Read the user's ledger, pruned if prune (or if it has grown enough to be
 * worth it). A missing ledger, or one that does not read as one (a torn
 * append included), starts over from the user's pins, so that nothing
 * pinned goes uncounted. -errno only for
 * out of memory or capabilities that can't be raised.
 */
int ledger_open(const struct store_config *c, uid_t uid, bool prune, struct ledger *ret);
/*
 * Prune the ledger as read (every object looked up again), without reading
 * the file again: under the user's lock nobody else changed it. For a count
 * over a quota that is looked at again while the kernel frees what a client
 * closed. -errno only if the capabilities can't be raised.
 */
int ledger_prune_now(struct ledger *l);
/* The CPUs the kernel allocates per-CPU values for (at least 1). */
unsigned ledger_possible_cpus(void);
void ledger_usage(const struct ledger *l, struct ledger_usage *ret);
/* Record the map (fd) at the most of the kernel's memlock and what it can grow to. */
int ledger_add_map(struct ledger *l, int fd);
int ledger_add_prog(struct ledger *l, int fd);
/* The same with the object's info as the kernel gave it for fd (read once per load). */
int ledger_add_map_info(struct ledger *l, int fd, const struct bpf_map_info *info);
int ledger_add_prog_info(struct ledger *l, const struct bpf_prog_info *info);
/* Record BTF (fd) the kernel keeps for the user's objects: its size, and its parsed copy. */
int ledger_add_btf(struct ledger *l, int fd);
/* Write what changed: the new records appended, or the whole file (temporary file, rename). */
int ledger_commit(struct ledger *l);
void ledger_done(struct ledger *l);
