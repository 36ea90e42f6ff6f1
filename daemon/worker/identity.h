/* SPDX-License-Identifier: MIT */
/*
 * Identities inside a worker: the client's, as the event loop captured it at
 * accept (SO_PEERCRED, SO_PEERGROUPS) and passed in the job, and other users'
 * (an object's owner), looked up from the user database.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "daemon/shared/peer_unit_job.h"
#include "policy/policy.h"

struct identity {
	struct policy_identity id; /* id.groups points into groups, id's unit fields into unit */
	gid_t *groups;
	pid_t pid; /* the caller's process at accept (for the audit trail), or 0 */
	struct peer_unit unit; /* the caller's systemd unit, as far as known (peer_unit.h) */
	/*
	 * The cgroup v2 path (the broker's cgroup namespace) the caller connected
	 * from, read at accept (loop/peer_unit.h peer_cgroup_read()), or NULL if
	 * unknown: decides who a protected link confines (named_protect.c).
	 */
	char *peer_cgroup;
};

void identity_done(struct identity *i);
/* From the job's "identity" object. -EINVAL if malformed. */
int identity_from_job(json_object *job, struct identity *ret);
/* A user by uid: primary and supplementary groups from the user database (no unit). */
int identity_of_uid(uid_t uid, struct identity *ret);
bool identity_in_group(const struct policy_identity *id, gid_t gid);
/*
 * A user or group given as a name or a decimal number (common/parse.h's
 * parse_uid(), parse_gid()). -ENOENT if there is none; -EINVAL, -ERANGE for
 * what is neither a valid name nor a number up to 4294967294.
 */
int identity_parse_user(const char *s, uid_t *ret);
int identity_parse_group(const char *s, gid_t *ret);
