/* SPDX-License-Identifier: MIT */
/*
 * Capabilities of the broker's processes. Workers keep in their permitted set
 * only what loading can need and raise into the effective set only what the
 * request's program type needs, for as short as it needs it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/capability.h>

/*
 * At startup: bounding and permitted sets reduced to what the daemon needs
 * (caps.c names each and why), none effective, no ambient or inheritable,
 * no_new_privs, securebits locked; then read back from /proc/self/status.
 */
int caps_daemon_init(void);
/* The sets, as /proc/PID/status masks, for checks and tests. */
uint64_t caps_daemon_mask(void);
uint64_t caps_worker_mask(void);
/* Is permitted exactly this, effective/inheritable/ambient empty, no_new_privs on? */
int caps_verify(uint64_t permitted);
/*
 * In the child about to exec bpfbroker-worker: permitted, inheritable and
 * ambient set to what workers may hold, so that exactly that survives exec.
 */
int caps_exec_prepare(void);
/*
 * Reduce the worker spawner, once: permitted set = what loading may need,
 * effective, inheritable and ambient empty; read back. Every worker it forks
 * inherits this.
 */
int caps_spawner_init(bool assume_old_kernel);
/*
 * What a worker's effective set is between raises: empty, or CAP_BPF where
 * the kernel wants it for every bpf() command (before 6.5, with
 * unprivileged BPF disabled: probed by caps_spawner_init(), or assumed).
 */
uint64_t caps_worker_effective_mask(void);
/* A worker's own cheap re-check of what it inherited (capget, no_new_privs). */
int caps_worker_check(void);
/* Make exactly these capabilities effective (others dropped from the effective set). */
int caps_set_effective(const cap_value_t *caps, int n);
/*
 * SO_SNDBUFFORCE on each of fds, which needs CAP_NET_ADMIN (raised once for
 * all): a SOCK_SEQPACKET reply must fit the send buffer whole, and replies
 * may be larger than wmem_max.
 */
int caps_sndbuf_force(const int *fds, size_t n_fds, int size);
/* Map types whose creation needs CAP_NET_ADMIN (map_create() in kernel/bpf/syscall.c). */
bool caps_map_type_needs_net_admin(int map_type);
/* Drop every effective capability. */
int caps_clear_effective(void);
/* Is cap in the effective set right now? (for tests and self-checks) */
bool caps_is_effective(cap_value_t cap);
