/* SPDX-License-Identifier: MIT */
/*
 * The caller's systemd unit and slices, read once at accept in the event
 * loop (with libsystemd's sd_peer_get_*() on the connection), kept only as
 * far as they prove something: see policy/POLICY.md ("units") and SECURITY.md.
 *
 *  - A system unit counts only if every cgroup above it (the root and the
 *    slices) can be written by root alone: then nobody else can have created
 *    a cgroup by that name or moved a process into it. A process in a
 *    user's delegated subtree (user@UID.service, or any cgroup an
 *    administrator chowned to a user) has that subtree's unit, never a name
 *    the user made up inside it.
 *  - A user unit (and user slices) counts only inside the caller's own user
 *    manager, user@UID.service with UID the caller's uid: the user names
 *    those as they like, so policies pair them with the uid.
 *  - Without SO_PEERPIDFD the pid could have been reused before we read
 *    /proc/PID/cgroup, and a cgroup that changes while we read is not one
 *    answer: in both cases there is no unit identity at all.
 */
#pragma once

#include <sys/types.h>

#include "daemon/shared/peer_unit_job.h"

/*
 * Read the unit identity of sock's peer: pid and uid as SO_PEERCRED gave
 * them, pidfd from SO_PEERPIDFD (or -EBADF). Whatever cannot be established is
 * left NULL; that is never an error. 0, or -ENOMEM.
 */
int peer_unit_read(int sock, pid_t pid, uid_t uid, int pidfd, struct peer_unit *ret);

/*
 * The cgroup v2 path (in the broker's cgroup namespace) of the peer, pid as
 * SO_PEERCRED gave it and pidfd from SO_PEERPIDFD: read from /proc/PID/cgroup
 * and kept only if the process is still alive after the read. -ESRCH without a
 * pidfd or once it exited, or the read's error.
 */
int peer_cgroup_read(pid_t pid, int pidfd, char **ret);
