/* SPDX-License-Identifier: MIT */
/*
 * A request checked against the protocol's method table (proto/method.h) and
 * dispatched: hello answered here, load and load_insns decoded here too (so
 * bad ones never cost a worker), the other methods handed to a worker.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/macro.h"
#include "daemon/shared/log.h"

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
		k = json_add(result, "identity", jobmsg_identity_to_json(&c->ident));
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

/* A named-object method: its params as sent, to a worker. */
static int handle_worker_method(struct conn *c, int64_t id, const struct proto_method *m,
				json_object *params, struct proto_msg *msg)
{
	uint32_t flags = 0;

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
		flags |= JOBMSG_F_RATE_COUNTED;
	}
	/*
	 * Attaching to a network interface happens in the caller's network
	 * namespace, which the worker enters through this fd, the last: a flag
	 * of the job says so, out of the client's reach. Without one, interface targets
	 * fail in the worker with a clear error; the rest works.
	 */
	if (m->id == PROTO_METHOD_ATTACH) {
		int netns = conn_open_netns(c);

		/* Without it an xdp or tc attach is refused by the worker; others need none. */
		if (netns < 0)
			log_debug("uid %u: no network namespace for attach: %s",
				  (unsigned)c->cred.uid, strerror(-netns));
		if (netns >= 0)
			return conn_submit_job(c, id, m, flags | JOBMSG_F_NETNS, params, msg,
					       netns);
	}
	return conn_submit_job(c, id, m, flags, params, msg, -1);
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
		conn_object_format(c, req.name, ret_object, object_size);
		proto_insns_request_done(&req);
	} else {
		struct proto_load_request req = {};

		k = proto_load_request_decode(params, n_fds, &req, error);
		if (k < 0)
			return k;
		if (!req.system_object)
			req.object_fd = 0;
		*ret_check_only = req.check_only;
		*ret = proto_load_request_encode(&req);
		conn_object_format(c, req.name, ret_object, object_size);
		proto_load_request_done(&req);
	}
	return *ret ? 0 : -ENOMEM;
}

/* "load" (an ELF object) and "load_insns" (raw instructions): one fd, to a worker. */
static int handle_load(struct conn *c, int64_t id, const struct proto_method *m,
		       json_object *params, struct proto_msg *msg)
{
	_cleanup_free_ char *error = NULL;
	_cleanup_json_ json_object *job_params = NULL;
	uint32_t flags = 0;
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

		snprintf(buf, sizeof(buf), "the request carries %zu fds; %s takes %s %u",
			 msg->n_fds, m->name, m->fds_min == m->fds_max ? "exactly" : "at most",
			 m->fds_max);
		return conn_send_error(c, id, PROTO_ERR_FDS, EBADF, buf);
	}
	if (proto_method_when(m->rate_limited, params)) {
		k = conn_rate_take(c, id);
		if (k != 0)
			return k;
		flags |= JOBMSG_F_RATE_COUNTED;
	}
	/* A system object's load carries none (the decoder saw to it). */
	fds = msg->n_fds > 0 ? calloc(1, sizeof(int)) : NULL;
	if (msg->n_fds > 0 && !fds)
		return -ENOMEM;
	if (fds)
		fds[0] = proto_msg_take_fd(msg, 0);
	/* A check decides and loads nothing; a load may keep objects and pins. */
	req.event = check_only ? "check" : "load";
	req.changes_state = proto_method_when(m->changes_state, params);
	if (!object[0])
		req.object = NULL;
	return conn_submit(c, id, &req, m->id, flags, job_params, fds, fds ? 1 : 0);
}

int conn_dispatch(struct conn *c, struct proto_msg *msg)
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
