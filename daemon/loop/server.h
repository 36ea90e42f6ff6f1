/* SPDX-License-Identifier: MIT */
/*
 * The event-loop side: listening sockets, client connections, identity taken
 * once at accept from the kernel (SO_PEERCRED, SO_PEERGROUPS, SO_PEERPIDFD),
 * request framing and dispatch. Never parses an ELF: loads go to workers.
 */
#pragma once

#include <systemd/sd-event.h>

#include "daemon/shared/jobmsg.h"
#include "policy/policy.h"
#include "worker.h"

/*
 * Supplementary groups a client may have: on a connection with more, every
 * request is answered "too-large" (an error sent at accept would reach a
 * client that sends at once as ECONNRESET). Every group goes to each worker
 * with the request (the policy and owners' shares match on them), so the
 * bound keeps each job within WORKER_MAX_JOB_BYTES; dropping groups instead
 * would silently take away what the policy or an owner grants by group.
 * Linux allows 65536; directory-backed users rarely have more than a thousand.
 */
#define SERVER_MAX_GROUPS JOBMSG_MAX_GROUPS

struct server_config {
	unsigned max_connections; /* in total */
	unsigned max_connections_per_uid; /* per client uid */
	uint64_t job_timeout_usec; /* for the message of a timed-out load */
	uint64_t idle_timeout_usec; /* a connection with no request this long is dropped */
	const struct policy *const *policy;
};

struct server;

int server_new(sd_event *event, struct worker_pool *pool, const struct server_config *cfg,
	       struct server **ret);
struct server *server_free(struct server *s);

/* Listen on a new socket at path (parent directory created 0755, socket 0666). */
int server_listen_path(struct server *s, const char *path);
/* Listen on an already bound and listening SOCK_SEQPACKET socket (socket activation). */
int server_listen_fd(struct server *s, int fd);
/*
 * Shutting down: stop listening and close idle connections; a connection
 * whose request runs gets its answer, then is closed. Nothing more is read.
 */
void server_drain(struct server *s);

unsigned server_n_connections(const struct server *s);
