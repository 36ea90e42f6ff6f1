/* SPDX-License-Identifier: MIT */
/*
 * Requests turned into jobs for the worker pool: the typed job (jobmsg.h)
 * with the caller's identity as encoded at accept, the fds it carries, and
 * what the pool's audit record says of a request that ends without its
 * worker's answer.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/macro.h"
#include "daemon/shared/audit.h"

/*
 * The job: the method, the request's id and params, and the identity part
 * as encoded at accept (conn_read_identity()), so that nothing of who asks
 * is built again per request.
 */
static int job_encode(const struct conn *c, int64_t id, unsigned method, uint32_t flags,
		      json_object *params, char **ret, size_t *ret_len)
{
	const char *text = "{}";
	size_t len = 2;

	if (params) {
		text = json_object_to_json_string_length(params, PROTO_JSON_FLAGS, &len);
		if (!text)
			return -ENOMEM;
	}
	return jobmsg_encode(method, flags, id, c->ident_wire, c->ident_wire_len, text, len, ret,
			     ret_len);
}

int conn_submit(struct conn *c, int64_t id, const struct worker_request *req, unsigned method,
		uint32_t flags, json_object *params, int *fds, size_t n_fds)
{
	char buf[160], *job = NULL;
	size_t len = 0;
	int k = job_encode(c, id, method, flags, params, &job, &len);

	if (k < 0) {
		close_many(fds, n_fds);
		free(fds);
		return k;
	}
	k = worker_pool_submit(c->server->pool, req, job, len, fds, n_fds, conn_job_done, c,
			       &c->job);

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
void conn_object_format(const struct conn *c, const char *ref, char *buf, size_t size)
{
	audit_format_object(buf, size, c->cred.uid, ref, NULL);
}

/* The named-object methods' reference ("object"). */
static void request_object(const struct conn *c, json_object *params, char *buf, size_t size)
{
	const char *ref = NULL;

	if (proto_get_string(params, "object", false, &ref, NULL) < 0)
		ref = NULL;
	conn_object_format(c, ref, buf, size);
}

int conn_submit_job(struct conn *c, int64_t id, const struct proto_method *m, uint32_t flags,
		    json_object *params, struct proto_msg *msg, int extra_fd)
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
	return conn_submit(c, id, &req, m->id, flags, params, fds, n);
}
