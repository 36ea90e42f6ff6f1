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

#include <json-c/json.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"

struct peer_unit {
	char *cgroup; /* the cgroup v2 path as read, for display; NULL if unknown */
	char *unit; /* the trusted system unit, or NULL */
	char *user_unit; /* the unit in the caller's own user manager, or NULL */
	char **slices; /* trusted system slices, outermost first */
	size_t n_slices;
	char **user_slices; /* slices in the caller's own user manager, outermost first */
	size_t n_user_slices;
};

void peer_unit_done(struct peer_unit *u);

/*
 * Read the unit identity of sock's peer: pid and uid as SO_PEERCRED gave
 * them, pidfd from SO_PEERPIDFD (or -EBADF). Whatever cannot be established is
 * left NULL; that is never an error. 0, or -ENOMEM.
 */
int peer_unit_read(int sock, pid_t pid, uid_t uid, int pidfd, struct peer_unit *ret);

/* Add the known fields to an identity object: cgroup, unit, user_unit, slices, user_slices. */
int peer_unit_to_json(const struct peer_unit *u, json_object *identity);
/* The same fields back from an identity object (the worker's job). 0, -EINVAL or -ENOMEM. */
int peer_unit_from_json(json_object *identity, struct peer_unit *ret);
/* Point id's unit fields into u (which must outlive id). */
void peer_unit_to_policy_identity(const struct peer_unit *u, struct policy_identity *id);
