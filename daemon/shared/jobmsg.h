/* SPDX-License-Identifier: MIT */
/*
 * The job the event loop hands a worker, typed: which method, the client's
 * request id, the caller's identity as taken at accept, flags, and the
 * request's params as JSON text; one encoder and one strict decoder, used by
 * both processes.
 *
 * Layout (host byte order: both ends are this machine's, built together):
 *
 *   struct jobmsg_header   magic, version, method, flags, id, the two lengths
 *   identity part          struct jobmsg_ident_header, n_groups gid_t, then
 *                          the unit's strings, each NUL-terminated, in order:
 *                          cgroup, unit, user_unit, peer_cgroup (those
 *                          present), slices, user_slices
 *   params                 params_len bytes of JSON text, then one NUL
 *
 * The identity part is encoded once per connection (jobmsg_identity_encode(),
 * at accept) and copied into each of its jobs. Every length is checked
 * against the message's; nothing is left over, nothing is missing.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/shared/peer_unit_job.h"

#define JOBMSG_MAGIC 0x4a424642u /* "BFBJ" */
#define JOBMSG_VERSION 1
/* The pool's own job (not a client method): sweep a user's store after a worker died. */
#define JOBMSG_SWEEP 0x100
/*
 * Supplementary groups a caller may have (SERVER_MAX_GROUPS in the event
 * loop, which refuses callers with more): every group goes with each job.
 */
#define JOBMSG_MAX_GROUPS 4096

enum {
	/* The last fd after the client's is the caller's network namespace (attach). */
	JOBMSG_F_NETNS = 1u << 0,
	/*
	 * The request counted against max_loads_per_minute in the event loop:
	 * for the record only, no worker decides by it.
	 */
	JOBMSG_F_RATE_COUNTED = 1u << 1,
	_JOBMSG_F_ALL = JOBMSG_F_NETNS | JOBMSG_F_RATE_COUNTED,
};

struct jobmsg_header {
	uint32_t magic;
	uint16_t version;
	uint16_t method; /* enum proto_method_id of a method in_worker, or JOBMSG_SWEEP */
	uint32_t flags; /* JOBMSG_F_* */
	uint32_t ident_len; /* the identity part */
	int64_t id; /* the client's request id: the worker stamps its reply with it */
	uint32_t params_len; /* without the NUL after them */
	uint32_t reserved; /* 0 */
};

enum {
	JOBMSG_UNIT_CGROUP = 1u << 0,
	JOBMSG_UNIT_UNIT = 1u << 1,
	JOBMSG_UNIT_USER_UNIT = 1u << 2,
	/* Not the unit's: the cgroup the caller connected from (protected links, NAMED.md). */
	JOBMSG_UNIT_PEER_CGROUP = 1u << 3,
	_JOBMSG_UNIT_ALL = JOBMSG_UNIT_CGROUP | JOBMSG_UNIT_UNIT | JOBMSG_UNIT_USER_UNIT |
			   JOBMSG_UNIT_PEER_CGROUP,
};

struct jobmsg_ident_header {
	uint32_t uid;
	uint32_t gid; /* (gid_t)-1 only in a sweep */
	int32_t pid; /* 0 in a sweep */
	uint32_t n_groups;
	uint16_t unit_present; /* JOBMSG_UNIT_*: which of the single strings are there */
	uint16_t n_slices;
	uint16_t n_user_slices;
	uint16_t reserved; /* 0 */
	uint32_t unit_len; /* the unit's strings, NULs included */
};

/* Who asks, as the kernel said at accept (SO_PEERCRED, SO_PEERGROUPS) and their unit. */
struct jobmsg_identity {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t *groups; /* n_groups of them (allocated one more, never NULL once decoded) */
	size_t n_groups;
	struct peer_unit unit;
	/*
	 * The cgroup v2 path the caller connected from (in the broker's cgroup
	 * namespace), or NULL if it could not be established: who a protected
	 * link confines (NAMED.md). Read whether or not the policy uses units.
	 */
	char *peer_cgroup;
};

struct jobmsg {
	unsigned method; /* enum proto_method_id, or JOBMSG_SWEEP */
	uint32_t flags;
	int64_t id;
	struct jobmsg_identity ident;
	const char *params; /* NUL-terminated, borrowed from the buffer decoded; "" in a sweep */
	size_t params_len;
};

void jobmsg_identity_done(struct jobmsg_identity *i);
void jobmsg_done(struct jobmsg *j);

/* The identity part of every job of a connection, in *ret (malloc'd). 0, -E2BIG or -ENOMEM. */
int jobmsg_identity_encode(const struct jobmsg_identity *i, char **ret, size_t *ret_len);
/*
 * A whole job: the header, ident (as jobmsg_identity_encode() made it) and
 * params_len bytes of params, in *ret (malloc'd). 0, -EINVAL (an unknown
 * method or flag) or -ENOMEM; the size is the pool's to bound.
 */
int jobmsg_encode(unsigned method, uint32_t flags, int64_t id, const char *ident, size_t ident_len,
		  const char *params, size_t params_len, char **ret, size_t *ret_len);
/*
 * Decode len bytes of buf, strictly: a wrong magic or version, an unknown
 * method or flag, a length that does not add up, a string that is empty or
 * runs past its part, params with a NUL inside: -EBADMSG. ret->params points
 * into buf, which must outlive ret. 0, -EBADMSG or -ENOMEM.
 */
int jobmsg_decode(const void *buf, size_t len, struct jobmsg *ret);

/*
 * The identity as clients see it (hello's and policy's "identity"): uid,
 * gid, pid, groups, and the unit's fields that are known. NULL: -ENOMEM.
 */
json_object *jobmsg_identity_to_json(const struct jobmsg_identity *i);
