/* SPDX-License-Identifier: MIT */
/*
 * What the event loop's connection files share (server.c, conn.c,
 * conn_identity.c, conn_rate.c, dispatch.c, jobs.c): the server, a client's
 * connection and the functions one file gives the others.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "daemon/shared/jobmsg.h"
#include "policy/policy.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "server.h"
#include "worker.h"

struct conn {
	struct server *server;
	int fd;
	sd_event_source *io;
	sd_event_source *idle; /* drops the connection after idle_timeout_usec without a request */
	/* Identity, captured once at accept and never re-read. */
	struct ucred cred;
	/*
	 * The same as every job carries it: uid, gid and pid as in cred, the
	 * groups (at most SERVER_MAX_GROUPS), the unit (read only while some
	 * rule matches on units); and encoded once, for every job (jobmsg.h).
	 */
	struct jobmsg_identity ident;
	char *ident_wire;
	size_t ident_wire_len;
	size_t n_groups_over; /* more than SERVER_MAX_GROUPS: how many; every request is refused */
	int pidfd;
	/* At most one request in flight: while busy, we stop reading the socket. */
	struct worker_job *job;
	int64_t job_id;
	uint64_t id; /* never reused: the worker pool binds a worker to it (worker.h) */
	struct conn *prev, *next;
};

struct server {
	sd_event *event;
	struct worker_pool *pool;
	struct server_config cfg;
	struct listener *listeners;
	struct conn *conns;
	unsigned n_conns;
	uint64_t last_conn_id;
	struct rate_limiter *rate; /* loads and attaches per user per minute */
	bool draining; /* shutting down: no new requests, answer the running ones */
};

/* conn.c: a connection's life, its I/O and its replies. */
/* A connection for the accepted cfd (taken), its identity read: 0, or -errno (cfd closed). */
int conn_new(struct server *s, int cfd, struct conn **ret);
struct conn *conn_free(struct conn *c);
/* Start reading requests (after the connection limits passed). */
int conn_start(struct conn *c);
int conn_send(struct conn *c, json_object *msg, const int *fds, size_t n_fds);
/*
 * Send an error reply: code (> 0, "answered", as a worker's reply_error()
 * returns it), or -errno when it could not be sent (the caller then drops
 * the connection).
 */
int conn_send_error(struct conn *c, int64_t id, enum proto_error code, int err,
		    const char *message);
/*
 * A refusal answered by the event loop itself, worded and keyed as the
 * workers' (daemon/worker/denial.h): the message ends with "(policy key KEY)", and
 * the error carries "reasons" and "denials".
 */
int conn_send_denial(struct conn *c, int64_t id, enum proto_error code, int err, const char *key,
		     const char *message);
/* A job runs: only watch for a hang-up, no idle clock (or the reverse). */
void conn_set_busy(struct conn *c, bool busy);
/* Called by the pool with the worker's reply (relayed as it is) or an error. */
void conn_job_done(void *userdata, struct proto_raw *reply, int error);

/* conn_identity.c: who is at the other end, taken once at accept. */
int conn_read_identity(struct conn *c);
/* The caller's network namespace (SIOCGSKNS): an fd, or -errno. */
int conn_open_netns(struct conn *c);
/* The caller as the policy sees it (pointing into c). */
struct policy_identity conn_identity(const struct conn *c);

/* conn_rate.c: max_loads_per_minute, before a request costs a worker. */
int conn_rate_take(struct conn *c, int64_t id);

/* dispatch.c: a request checked against the method table and handled or handed on. */
int conn_dispatch(struct conn *c, struct proto_msg *msg);

/* jobs.c: requests turned into typed jobs (jobmsg.h) for the worker pool. */
/*
 * The audit trail's "OWNER/NAME" for ref ("NAME" is the caller's own),
 * bounded like the worker's.
 */
void conn_object_format(const struct conn *c, const char *ref, char *buf, size_t size);
/*
 * Queue a job of method with flags (JOBMSG_F_*) and params (borrowed; NULL:
 * none) and fds (taken) for a worker: 0, an answered refusal (> 0) if it
 * can't be, or -errno.
 */
int conn_submit(struct conn *c, int64_t id, const struct worker_request *req, unsigned method,
		uint32_t flags, json_object *params, int *fds, size_t n_fds);
/*
 * A named-object method's job with the message's fds and, if extra_fd >= 0,
 * that one last (taken; JOBMSG_F_NETNS in flags says what it is).
 */
int conn_submit_job(struct conn *c, int64_t id, const struct proto_method *m, uint32_t flags,
		    json_object *params, struct proto_msg *msg, int extra_fd);
