/* SPDX-License-Identifier: MIT */
/*
 * A client's connection in the event loop: made at accept, its requests
 * read (one at a time, framing checked), its replies and errors sent, its
 * idle clock, the worker's reply relayed, and its end.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "policy/verdict.h"

#define CONN_SNDBUF (4 * 1024 * 1024)

struct conn *conn_free(struct conn *c)
{
	struct server *s;

	if (!c)
		return NULL;
	s = c->server;
	/* A request that started finishes without its client (worker.h). */
	worker_job_orphan(c->job);
	worker_pool_conn_closed(s->pool, c->id);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_conns--;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->idle);
	safe_close(c->fd);
	safe_close(c->pidfd);
	jobmsg_identity_done(&c->ident);
	free(c->ident_wire);
	free(c);
	return NULL;
}

int conn_send(struct conn *c, json_object *msg, const int *fds, size_t n_fds)
{
	int k = proto_send(c->fd, msg, fds, n_fds, PROTO_MAX_REPLY_BYTES);

	if (k < 0)
		log_info("uid %u pid %d: cannot send reply: %s", (unsigned)c->cred.uid,
			 (int)c->cred.pid, strerror(-k));
	return k;
}

int conn_send_error(struct conn *c, int64_t id, enum proto_error code, int err, const char *message)
{
	json_object *e = proto_error_new(id, proto_error_code(code), err, message);
	int k;

	if (!e)
		return -ENOMEM;
	k = conn_send(c, e, NULL, 0);
	json_object_put(e);
	return k < 0 ? k : (int)code;
}

int conn_send_denial(struct conn *c, int64_t id, enum proto_error code, int err, const char *key,
		     const char *message)
{
	_cleanup_free_ char *text = verdict_reason_format(key, "%s", message);
	json_object *e = text ? proto_error_new(id, proto_error_code(code), err, text) : NULL,
		    *error = NULL;
	int k;

	if (!e || !json_object_object_get_ex(e, "error", &error) ||
	    verdict_error_add(error, "object", NULL, text, key) < 0) {
		json_object_put(e);
		return -ENOMEM;
	}
	k = conn_send(c, e, NULL, 0);
	json_object_put(e);
	return k < 0 ? k : (int)code;
}

static int on_conn_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct conn *c = userdata;
	char buf[128];

	snprintf(buf, sizeof(buf), "no request for %llu s: the broker closes idle connections",
		 (unsigned long long)(c->server->cfg.idle_timeout_usec / 1000000));
	conn_send_error(c, 0, PROTO_ERR_TIMEOUT, ETIME, buf);
	conn_free(c);
	return 0;
}

/* (Re)start the idle clock; while a job runs there is none (the job has its own). */
static void conn_idle_arm(struct conn *c, bool on)
{
	uint64_t usec = c->server->cfg.idle_timeout_usec;

	if (usec == 0)
		return;
	if (!on) {
		sd_event_source_set_enabled(c->idle, SD_EVENT_OFF);
		return;
	}
	if (!c->idle) {
		if (sd_event_add_time_relative(c->server->event, &c->idle, CLOCK_MONOTONIC, usec, 0,
					       on_conn_idle, c) < 0)
			c->idle = NULL; /* without it the connection limits still bound us */
		return;
	}
	sd_event_source_set_time_relative(c->idle, usec);
	sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
}

void conn_set_busy(struct conn *c, bool busy)
{
	/* While a job runs, only watch for the client hanging up, so it can't queue more. */
	sd_event_source_set_io_events(c->io, busy ? EPOLLRDHUP : EPOLLIN | EPOLLRDHUP);
	conn_idle_arm(c, !busy);
}

void conn_job_done(void *userdata, struct proto_raw *reply, int error)
{
	struct conn *c = userdata;
	char buf[160];
	int k;

	c->job = NULL;
	if (reply) {
		/*
		 * Relayed as the worker wrote it, already stamped with this
		 * request's id: no parsing and re-encoding of up to 1 MiB here.
		 */
		k = proto_send_raw(c->fd, reply->buf, reply->len, reply->fds, reply->n_fds);
	} else if (error == -ETIME) {
		snprintf(buf, sizeof(buf),
			 "the request ran over the broker's limit of %llu s and was stopped",
			 (unsigned long long)(c->server->cfg.job_timeout_usec / 1000000));
		k = conn_send_error(c, c->job_id, PROTO_ERR_TIMEOUT, ETIME, buf);
	} else if (error == -ESHUTDOWN) {
		k = conn_send_error(c, c->job_id, PROTO_ERR_BUSY, ESHUTDOWN,
				    "the broker is shutting down; the request was not started");
	} else if (error == -EMSGSIZE) {
		k = conn_send_error(c, c->job_id, PROTO_ERR_TOO_LARGE, EMSGSIZE,
				    "the request could not be handed to a worker");
	} else {
		k = conn_send_error(c, c->job_id, PROTO_ERR_INTERNAL, -error,
				    "the broker's worker failed while handling the request");
	}
	if (k < 0 || c->server->draining) {
		conn_free(c);
		return;
	}
	conn_set_busy(c, false);
}

static int on_conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;
	struct proto_msg msg = {};
	_cleanup_free_ char *error = NULL;
	int k;

	if (c->job) {
		/* Busy and the client hung up: nobody is waiting for the answer. */
		if (revents & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			conn_free(c);
		return 0;
	}
	k = proto_recv(fd, PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &msg, &error);
	if (k == -EAGAIN)
		return 0;
	if (k == 0 || k == -ECONNRESET) {
		conn_free(c);
		return 0;
	}
	if (k < 0) {
		/* Framing is per packet, so a bad one doesn't desynchronize the stream. */
		k = conn_send_error(c, 0,
				    k == -EMSGSIZE	 ? PROTO_ERR_TOO_LARGE
				    : k == -ETOOMANYREFS ? PROTO_ERR_FDS
							 : PROTO_ERR_INVALID,
				    -k, error ? error : strerror(-k));
	} else {
		k = conn_dispatch(c, &msg);
	}
	proto_msg_done(&msg);
	if (k < 0)
		conn_free(c);
	else if (!c->job)
		conn_idle_arm(c, true);
	return 0;
}

int conn_new(struct server *s, int cfd, struct conn **ret)
{
	struct conn *c = calloc(1, sizeof(*c));
	int k;

	if (!c) {
		safe_close(cfd);
		return -ENOMEM;
	}
	c->server = s;
	c->fd = cfd;
	c->pidfd = -EBADF;
	c->id = ++s->last_conn_id;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->n_conns++;

	k = conn_read_identity(c);
	if (k < 0) {
		log_warning("cannot read peer credentials: %s", strerror(-k));
		conn_free(c);
		return k;
	}
	*ret = c;
	return 0;
}

int conn_start(struct conn *c)
{
	int k;

	(void)caps_sndbuf_force(&c->fd, 1, CONN_SNDBUF);
	k = sd_event_add_io(c->server->event, &c->io, c->fd, EPOLLIN | EPOLLRDHUP, on_conn_io, c);
	if (k < 0)
		return k;
	conn_idle_arm(c, true);
	return 0;
}
