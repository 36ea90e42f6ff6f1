/* SPDX-License-Identifier: MIT */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"
#include "common/json.h"
#include "common/macro.h"
#include "peer_unit.h"
#include "policy/verdict.h"
#include "proto/method.h"
#include "rate.h"
#include "daemon/shared/log.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; newer than these headers */
#endif

#define CONN_SNDBUF (4 * 1024 * 1024)

struct conn {
	struct server *server;
	int fd;
	sd_event_source *io;
	sd_event_source *idle; /* drops the connection after idle_timeout_usec without a request */
	/* Identity, captured once at accept and never re-read. */
	struct ucred cred;
	gid_t *groups;
	size_t n_groups; /* at most SERVER_MAX_GROUPS */
	size_t n_groups_over; /* more than that: how many; every request is refused */
	int pidfd;
	struct peer_unit unit; /* read only while some rule matches on units */
	char *cgroup; /* peer_cgroup_read()'s, or NULL: protected links (NAMED.md) */
	/* At most one request in flight: while busy, we stop reading the socket. */
	struct worker_job *job;
	int64_t job_id;
	uint64_t id; /* never reused: the worker pool binds a worker to it (worker.h) */
	struct conn *prev, *next;
};

struct listener {
	struct server *server;
	int fd;
	sd_event_source *io;
	struct listener *next;
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

static struct conn *conn_free(struct conn *c)
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
	free(c->groups);
	peer_unit_done(&c->unit);
	free(c->cgroup);
	free(c);
	return NULL;
}

static int conn_send(struct conn *c, json_object *msg, const int *fds, size_t n_fds)
{
	int k = proto_send(c->fd, msg, fds, n_fds, PROTO_MAX_REPLY_BYTES);

	if (k < 0)
		log_info("uid %u pid %d: cannot send reply: %s", (unsigned)c->cred.uid,
			 (int)c->cred.pid, strerror(-k));
	return k;
}

/*
 * Send an error reply: code (> 0, "answered", as a worker's reply_error()
 * returns it), or -errno when it could not be sent (the caller then drops
 * the connection).
 */
static int conn_send_error(struct conn *c, int64_t id, enum proto_error code, int err,
			   const char *message)
{
	json_object *e = proto_error_new(id, proto_error_code(code), err, message);
	int k;

	if (!e)
		return -ENOMEM;
	k = conn_send(c, e, NULL, 0);
	json_object_put(e);
	return k < 0 ? k : (int)code;
}

/*
 * A refusal answered by the event loop itself, worded and keyed as the
 * workers' (daemon/worker/denial.h): the message ends with "(policy key KEY)", and
 * the error carries "reasons" and "denials".
 */
static int conn_send_denial(struct conn *c, int64_t id, enum proto_error code, int err,
			    const char *key, const char *message)
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

static json_object *identity_json(const struct conn *c)
{
	json_object *o = json_object_new_object(), *g = json_object_new_array();

	for (size_t i = 0; g && i < c->n_groups; i++)
		json_object_array_add(g, json_object_new_int64(c->groups[i]));
	json_object_object_add(o, "uid", json_object_new_int64(c->cred.uid));
	json_object_object_add(o, "gid", json_object_new_int64(c->cred.gid));
	json_object_object_add(o, "pid", json_object_new_int64(c->cred.pid));
	json_object_object_add(o, "groups", g);
	if (o)
		(void)peer_unit_to_json(&c->unit, o);
	if (o && c->cgroup)
		json_object_object_add(o, "peer_cgroup", json_object_new_string(c->cgroup));
	return o;
}

static struct policy_identity conn_identity(const struct conn *c)
{
	struct policy_identity id = {.uid = c->cred.uid,
				     .gid = c->cred.gid,
				     .groups = c->groups,
				     .n_groups = c->n_groups};

	peer_unit_to_policy_identity(&c->unit, &id);
	return id;
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

static void conn_set_busy(struct conn *c, bool busy)
{
	/* While a job runs, only watch for the client hanging up, so it can't queue more. */
	sd_event_source_set_io_events(c->io, busy ? EPOLLRDHUP : EPOLLIN | EPOLLRDHUP);
	conn_idle_arm(c, !busy);
}

static void on_job_done(void *userdata, struct proto_raw *reply, int error)
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

/* A job for a worker: who asks (taken at accept) and the id its reply must carry. */
static json_object *job_new(const struct conn *c, int64_t id)
{
	json_object *job = json_object_new_object();

	if (!job)
		return NULL;
	json_object_object_add(job, "identity", identity_json(c));
	json_object_object_add(job, "id", json_object_new_int64(id));
	return job;
}

static int handle_hello(struct conn *c, int64_t id)
{
	json_object *result = json_object_new_object(), *versions = json_object_new_array();
	json_object *methods = json_object_new_array(), *reply;
	int k;

	/* Both taken, whatever fails. */
	k = json_add(result, "versions", versions);
	if (json_add(result, "methods", methods) < 0)
		k = -ENOMEM;
	if (k >= 0)
		k = json_append(versions, json_object_new_int(PROTO_VERSION));
	for (size_t i = 0; k >= 0 && i < ARRAY_SIZE(proto_methods); i++)
		k = json_append(methods, json_object_new_string(proto_methods[i].name));
	if (k >= 0)
		k = json_add(result, "identity", identity_json(c));
	if (k < 0) {
		json_object_put(result);
		return k;
	}
	reply = proto_reply_new(id, result);
	if (!reply)
		return -ENOMEM;
	k = conn_send(c, reply, NULL, 0);
	json_object_put(reply);
	return k;
}

/* Queue job for a worker (job and fds taken); an answered refusal if it can't be. */
static int conn_submit(struct conn *c, int64_t id, const struct worker_request *req,
		       json_object *job, int *fds, size_t n_fds)
{
	char buf[160];
	int k = worker_pool_submit(c->server->pool, req, job, fds, n_fds, on_job_done, c, &c->job);

	if (k == -EMSGSIZE) {
		snprintf(buf, sizeof(buf),
			 "the request with your identity is over the %u bytes a worker takes",
			 WORKER_MAX_JOB_BYTES);
		return conn_send_error(c, id, PROTO_ERR_TOO_LARGE, EMSGSIZE, buf);
	}
	if (k < 0)
		return conn_send_error(c, id, PROTO_ERR_INTERNAL, -k, "cannot queue the request");
	c->job_id = id;
	conn_set_busy(c, true);
	return 0;
}

/*
 * The object a request names, for the audit trail: "OWNER/NAME" ("NAME" is
 * the caller's own), bounded like the worker's.
 */
static void request_object_format(const struct conn *c, const char *ref, char *buf, size_t size)
{
	audit_format_object(buf, size, c->cred.uid, ref, NULL);
}

/* The named-object methods' reference ("object"). */
static void request_object(const struct conn *c, json_object *params, char *buf, size_t size)
{
	const char *ref = NULL;

	if (proto_get_string(params, "object", false, &ref, NULL) < 0)
		ref = NULL;
	request_object_format(c, ref, buf, size);
}

/* Queue job with the message's fds and, if extra_fd >= 0, that one last (taken). */
static int submit_job(struct conn *c, int64_t id, const struct proto_method *m, json_object *params,
		      json_object *job, struct proto_msg *msg, int extra_fd)
{
	char object[160];
	struct worker_request req = {.uid = c->cred.uid,
				     .pid = c->cred.pid,
				     .conn = c->id,
				     .event = m->name,
				     .object = object,
				     .changes_state = proto_method_when(m->changes_state, params)};
	int *fds = NULL;
	size_t n = msg->n_fds + (extra_fd >= 0);

	if (n > 0) {
		fds = calloc(n, sizeof(int));
		if (!fds) {
			json_object_put(job);
			safe_close(extra_fd);
			return -ENOMEM;
		}
		for (size_t i = 0; i < msg->n_fds; i++)
			fds[i] = proto_msg_take_fd(msg, i);
		if (extra_fd >= 0)
			fds[n - 1] = extra_fd;
	}
	request_object(c, params, object, sizeof(object));
	if (!object[0])
		req.object = NULL;
	return conn_submit(c, id, &req, job, fds, n);
}

/*
 * The caller's network namespace: that of its end of the connection, which
 * the kernel creates the accepted socket in (unix_stream_connect()). Bound to
 * the connection as SO_PEERCRED is, so no pid can have been reused, and no
 * /proc: SIOCGSKNS needs CAP_NET_ADMIN (which we hold for SO_SNDBUFFORCE),
 * not the CAP_SYS_PTRACE that /proc/PID/ns/net or PIDFD_GET_NET_NAMESPACE
 * would (ptrace access to another user's process).
 */
static int conn_open_netns(struct conn *c)
{
	static const cap_value_t net_admin[] = {CAP_NET_ADMIN};
	int fd, k = caps_set_effective(net_admin, 1);

	if (k < 0)
		return k;
	fd = ioctl(c->fd, SIOCGSKNS);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	return k;
}

/*
 * max_loads_per_minute: loads and attaches count, across all of a user's
 * connections, before they cost a worker. 0 to go on, > 0 answered (the
 * refusal's code), or -errno (the connection is dropped).
 */
static int conn_rate_take(struct conn *c, int64_t id)
{
	struct policy_identity ident = conn_identity(c);
	struct policy_grant *g = NULL;
	uint64_t now = 0;
	uint64_t count = 0, max;
	char buf[384], note[128] = "";
	const char *key;
	bool matched;
	int k;

	k = policy_resolve(*c->server->cfg.policy, &ident, &g);
	if (k < 0)
		return conn_send_error(c, id, PROTO_ERR_INTERNAL, -k, "cannot resolve the policy");
	/* Users no rule matches are refused by the worker; they still may not flood it. */
	matched = g->matched;
	max = matched ? g->limits.max_loads_per_minute : POLICY_DEFAULT_MAX_LOADS_PER_MINUTE;
	policy_grant_free(g);
	/* The loop's own clock for this iteration: no system call per request. */
	(void)sd_event_now(c->server->event, CLOCK_MONOTONIC, &now);
	k = rate_take(c->server->rate, c->cred.uid, max, now, &count);
	if (k == -EDQUOT) {
		/*
		 * No rule's limit applies to a user no rule matches, so a rule
		 * matching them ("match") is what would change; past the hard
		 * ceiling nothing would.
		 */
		key = matched ? policy_limit_key("max_loads_per_minute", count + 1, note,
						 sizeof(note))
			      : "match";
		snprintf(buf, sizeof(buf),
			 "you reached your quota max_loads_per_minute (loads and attaches): %llu "
			 "in the last minute, your limit is %llu%s%s",
			 (unsigned long long)count, (unsigned long long)max,
			 matched ? "" : " (the default: no rule of the policy matches you)", note);
		return conn_send_denial(c, id, PROTO_ERR_QUOTA, EDQUOT, key, buf);
	}
	if (k < 0)
		return conn_send_error(c, id, PROTO_ERR_INTERNAL, -k, "cannot count your requests");
	return 0;
}

/* A named-object method: {"identity", "method", "params"} to a worker. */
static int handle_worker_method(struct conn *c, int64_t id, const struct proto_method *m,
				json_object *params, struct proto_msg *msg)
{
	json_object *job;

	if (msg->n_fds > m->fds_max) {
		char buf[96];

		snprintf(buf, sizeof(buf), "the request carries %zu fds; %s takes at most %u",
			 msg->n_fds, m->name, m->fds_max);
		return conn_send_error(c, id, PROTO_ERR_FDS, EBADF, buf);
	}
	if (params && !json_object_is_type(params, json_type_object))
		return conn_send_error(c, id, PROTO_ERR_INVALID, EINVAL,
				       "\"params\" must be an object");
	if (proto_method_when(m->rate_limited, params)) {
		int k = conn_rate_take(c, id);

		if (k != 0)
			return k;
	}
	job = job_new(c, id);
	if (!job)
		return -ENOMEM;
	json_object_object_add(job, "method", json_object_new_string(m->name));
	json_object_object_add(job, "params",
			       params ? json_object_get(params) : json_object_new_object());
	/*
	 * Attaching to a network interface happens in the caller's network
	 * namespace, which the worker enters through this fd. Its index is in
	 * the job, out of the client's reach. Without one, interface targets
	 * fail in the worker with a clear error; the rest works.
	 */
	if (strcmp(m->name, "attach") == 0) {
		int netns = conn_open_netns(c);

		/* A uprobe's process is the worker's to look at (worker/uprobe.h). */
		if (netns < 0)
			log_debug("uid %u: no network namespace for attach: %s",
				  (unsigned)c->cred.uid, strerror(-netns));
		if (netns >= 0) {
			json_object_object_add(job, "netns", json_object_new_int((int)msg->n_fds));
			return submit_job(c, id, m, params, job, msg, netns);
		}
	}
	return submit_job(c, id, m, params, job, msg, -1);
}

/* Validate here too, so bad requests never cost a worker; then re-encode with the fd at 0. */
static int load_params_decode(const struct conn *c, const struct proto_method *m,
			      json_object *params, size_t n_fds, json_object **ret,
			      bool *ret_check_only, char *ret_object, size_t object_size,
			      char **error)
{
	int k;

	ret_object[0] = '\0';
	if (m->id == PROTO_METHOD_LOAD_INSNS) {
		struct proto_insns_request req = {};

		k = proto_insns_request_decode(params, n_fds, &req, error);
		if (k < 0)
			return k;
		req.insns_fd = 0;
		*ret_check_only = req.check_only;
		*ret = proto_insns_request_encode(&req);
		/* For the audit trail, should its worker give no answer. */
		request_object_format(c, req.name, ret_object, object_size);
		proto_insns_request_done(&req);
	} else {
		struct proto_load_request req = {};

		k = proto_load_request_decode(params, n_fds, &req, error);
		if (k < 0)
			return k;
		req.object_fd = 0;
		*ret_check_only = req.check_only;
		*ret = proto_load_request_encode(&req);
		request_object_format(c, req.name, ret_object, object_size);
		proto_load_request_done(&req);
	}
	return *ret ? 0 : -ENOMEM;
}

/* "load" (an ELF object) and "load_insns" (raw instructions): one fd, to a worker. */
static int handle_load(struct conn *c, int64_t id, const struct proto_method *m,
		       json_object *params, struct proto_msg *msg)
{
	_cleanup_free_ char *error = NULL;
	json_object *job, *job_params = NULL;
	bool check_only = false;
	char object[160];
	struct worker_request req = {
		.uid = c->cred.uid, .pid = c->cred.pid, .conn = c->id, .object = object};
	int *fds, k;

	k = load_params_decode(c, m, params, msg->n_fds, &job_params, &check_only, object,
			       sizeof(object), &error);
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return conn_send_error(c, id, k == -EBADF ? PROTO_ERR_FDS : PROTO_ERR_INVALID, -k,
				       error);
	if (msg->n_fds < m->fds_min || msg->n_fds > m->fds_max) {
		char buf[96];

		json_object_put(job_params);
		snprintf(buf, sizeof(buf), "the request carries %zu fds; %s takes exactly %u",
			 msg->n_fds, m->name, m->fds_min);
		return conn_send_error(c, id, PROTO_ERR_FDS, EBADF, buf);
	}
	if (proto_method_when(m->rate_limited, params)) {
		k = conn_rate_take(c, id);
		if (k != 0) {
			json_object_put(job_params);
			return k;
		}
	}
	job = job_new(c, id);
	fds = calloc(1, sizeof(int));
	if (!job || !job_params || !fds) {
		json_object_put(job);
		json_object_put(job_params);
		free(fds);
		return -ENOMEM;
	}
	json_object_object_add(job, "params", job_params);
	if (m->id != PROTO_METHOD_LOAD)
		json_object_object_add(job, "method", json_object_new_string(m->name));
	fds[0] = proto_msg_take_fd(msg, 0);
	/* A check decides and loads nothing; a load may keep objects and pins. */
	req.event = check_only ? "check" : "load";
	req.changes_state = proto_method_when(m->changes_state, params);
	if (!object[0])
		req.object = NULL;
	return conn_submit(c, id, &req, job, fds, 1);
}

static int conn_dispatch(struct conn *c, struct proto_msg *msg)
{
	_cleanup_free_ char *error = NULL;
	const struct proto_method *m;
	const char *method;
	json_object *params;
	int64_t id = 0;
	int k;

	k = proto_request_check(msg->json, &id, &method, &params, &error);
	if (k < 0)
		return conn_send_error(
			c, id, k == -EPROTONOSUPPORT ? PROTO_ERR_VERSION : PROTO_ERR_INVALID, -k,
			error);
	/*
	 * Refused request by request, not at accept: a client that sends its
	 * request at once would see only ECONNRESET (closing a connection with
	 * unread data resets it), never an error sent before the close.
	 */
	if (c->n_groups_over) {
		char buf[256];

		snprintf(buf, sizeof(buf),
			 "your process has %zu supplementary groups; the broker takes at most %u "
			 "(it leaves none out: the policy and owners' shares grant by group)",
			 c->n_groups_over, SERVER_MAX_GROUPS);
		log_info("uid %u pid %d: refused, %zu supplementary groups", (unsigned)c->cred.uid,
			 (int)c->cred.pid, c->n_groups_over);
		return conn_send_error(c, id, PROTO_ERR_TOO_LARGE, E2BIG, buf);
	}
	m = proto_method_find(method);
	if (m && m->checked_by_loop)
		return handle_load(c, id, m, params, msg);
	if (m && m->in_worker)
		return handle_worker_method(c, id, m, params, msg);
	if (msg->n_fds > (m ? m->fds_max : 0)) {
		char buf[96];

		snprintf(buf, sizeof(buf), "the request carries %zu fds; %.16s takes none",
			 msg->n_fds, method);
		return conn_send_error(c, id, PROTO_ERR_FDS, EBADF, buf);
	}
	if (m && m->id == PROTO_METHOD_HELLO)
		return handle_hello(c, id);
	{
		char buf[128];

		snprintf(buf, sizeof(buf), "unknown method \"%.64s\"", method);
		return conn_send_error(c, id, PROTO_ERR_METHOD, EOPNOTSUPP, buf);
	}
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

static int conn_read_identity(struct conn *c)
{
	socklen_t len = sizeof(c->cred);
	gid_t small[64];
	gid_t *groups = small;
	_cleanup_free_ gid_t *big = NULL;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0)
		return negative_errno();
	if (len != sizeof(c->cred) || c->cred.uid == (uid_t)-1)
		return -EPERM;

	len = sizeof(small);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, small, &len) < 0) {
		if (errno != ERANGE)
			return negative_errno();
		/* ERANGE says how many there are: bounded before anything is made for them. */
		if (len > SERVER_MAX_GROUPS * sizeof(gid_t)) {
			c->n_groups_over = len / sizeof(gid_t);
			len = 0;
		} else {
			big = malloc(len);
			if (!big)
				return -ENOMEM;
			if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, big, &len) < 0)
				return negative_errno();
			groups = big;
		}
	}
	c->groups = malloc(len + sizeof(gid_t));
	if (!c->groups)
		return -ENOMEM;
	memcpy(c->groups, groups, len);
	c->n_groups = len / sizeof(gid_t);

	/* A pidfd pins the peer process, for later checks that must not race pid reuse. */
	len = sizeof(c->pidfd);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) < 0)
		c->pidfd = -EBADF;
	/* One read of /proc/PID/cgroup: who may change a protected link (NAMED.md). */
	if (peer_cgroup_read(c->cred.pid, c->pidfd, &c->cgroup) < 0)
		c->cgroup = NULL;
	/* The systemd unit costs a dozen small reads: only when a rule can use it. */
	if (policy_uses_units(*c->server->cfg.policy))
		return peer_unit_read(c->fd, c->cred.pid, c->cred.uid, c->pidfd, &c->unit);
	return 0;
}

static unsigned server_conns_of_uid(const struct server *s, uid_t uid)
{
	unsigned n = 0;

	for (const struct conn *c = s->conns; c; c = c->next)
		n += c->cred.uid == uid;
	return n;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct listener *l = userdata;
	struct server *s = l->server;
	struct conn *c;
	int cfd, sndbuf = CONN_SNDBUF, k;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warning("accept failed: %m");
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		safe_close(cfd);
		return 0;
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
		return 0;
	}
	if (s->n_conns > s->cfg.max_connections ||
	    server_conns_of_uid(s, c->cred.uid) > s->cfg.max_connections_per_uid) {
		char buf[128];

		snprintf(buf, sizeof(buf),
			 "too many connections (at most %u in total, %u per user)",
			 s->cfg.max_connections, s->cfg.max_connections_per_uid);
		conn_send_error(c, 0, PROTO_ERR_BUSY, EUSERS, buf);
		conn_free(c);
		return 0;
	}
	(void)caps_sndbuf_force(cfd, sndbuf);
	k = sd_event_add_io(s->event, &c->io, cfd, EPOLLIN | EPOLLRDHUP, on_conn_io, c);
	if (k < 0) {
		conn_free(c);
		return 0;
	}
	conn_idle_arm(c, true);
	log_debug("connection from uid %u gid %u pid %d", (unsigned)c->cred.uid,
		  (unsigned)c->cred.gid, (int)c->cred.pid);
	return 0;
}

int server_listen_fd(struct server *s, int fd)
{
	struct listener *l = calloc(1, sizeof(*l));
	int k;

	if (!l)
		return -ENOMEM;
	l->server = s;
	l->fd = fd;
	k = sd_event_add_io(s->event, &l->io, fd, EPOLLIN, on_accept, l);
	if (k < 0) {
		free(l);
		return k;
	}
	l->next = s->listeners;
	s->listeners = l;
	return 0;
}

int server_listen_path(struct server *s, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	char *slash;
	int k;

	if (!dir)
		return -ENOMEM;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return negative_errno();
	}
	/* A stale socket from an earlier run would make bind fail; never remove anything else. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return negative_errno();
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	/* Anyone may connect: the policy, not the socket's mode, decides what they get. */
	if (chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0)
		return negative_errno();
	k = server_listen_fd(s, fd);
	if (k < 0)
		return k;
	TAKE_FD(fd);
	return 0;
}

int server_new(sd_event *event, struct worker_pool *pool, const struct server_config *cfg,
	       struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->rate = rate_limiter_new();
	if (!s->rate) {
		free(s);
		return -ENOMEM;
	}
	s->event = sd_event_ref(event);
	s->pool = pool;
	s->cfg = *cfg;
	*ret = s;
	return 0;
}

static void server_close_listeners(struct server *s)
{
	while (s->listeners) {
		struct listener *l = s->listeners;

		s->listeners = l->next;
		sd_event_source_disable_unref(l->io);
		safe_close(l->fd);
		free(l);
	}
}

void server_drain(struct server *s)
{
	struct conn *next;

	s->draining = true;
	server_close_listeners(s);
	/* Busy ones only watch for a hang-up (conn_set_busy()); on_job_done() closes them. */
	for (struct conn *c = s->conns; c; c = next) {
		next = c->next;
		if (!c->job)
			conn_free(c);
	}
}

struct server *server_free(struct server *s)
{
	if (!s)
		return NULL;
	while (s->conns)
		conn_free(s->conns);
	s->rate = rate_limiter_free(s->rate);
	server_close_listeners(s);
	sd_event_unref(s->event);
	free(s);
	return NULL;
}

unsigned server_n_connections(const struct server *s)
{
	return s->n_conns;
}
