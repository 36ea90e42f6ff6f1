/* SPDX-License-Identifier: MIT */
/*
 * The network objects' filled maps frozen (BPF_MAP_FREEZE: no fd writes them from user space
 * any more, whoever holds it and whenever they got it) and then read back against the
 * settings: a map written by anyone but the filler before the freeze is found, and refused.
 * For net_enforce: a process of the cgroup (the same uid) can get the object's map fds, writable,
 * from the load until the first protected attach; frozen and checked before that attach,
 * what it wrote or may write does not count.
 */
#pragma once

#include "objects/net/net_apply.h"

/* The four tries of net_ip_fill(), and the settings they must hold exactly. 0, -EEXIST with
 * *error if they hold anything else, or -errno. */
int net_ip_seal(const struct net_settings *s, const struct net_ip_map_fds *fds, char **error);

/* The maps of net_ifaces_fill() (names resolved again: one that changed meanwhile refuses). */
int net_ifaces_seal(const struct net_settings *s, int ifaces_fd, int mode_fd, char **error);

/* The maps of net_bind_fill(). */
int net_bind_seal(const struct net_settings *s, int allow_fd, int deny_fd, char **error);
