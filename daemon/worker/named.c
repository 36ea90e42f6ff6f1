/* SPDX-License-Identifier: MIT */
#include "named.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "daemon/shared/audit.h"
#include "proto/method.h"

#include "named_call.h"

/* The handlers, by the protocol's method table (proto/method.h); each gets its typed params. */
static int (*const handlers[PROTO_METHOD_COUNT])(struct call *c, struct reply *r) = {
	[PROTO_METHOD_LIST] = named_list,	  [PROTO_METHOD_SHOW] = named_show,
	[PROTO_METHOD_UNLOAD] = named_unload,	  [PROTO_METHOD_FDS] = named_fds,
	[PROTO_METHOD_ATTACH] = named_attach,	  [PROTO_METHOD_DETACH] = named_detach,
	[PROTO_METHOD_TEST_RUN] = named_test_run, [PROTO_METHOD_MAP_INSERT] = named_map_insert,
	[PROTO_METHOD_MAP] = named_map,		  [PROTO_METHOD_POLICY] = named_policy,
};

static int call_run(struct call *c, struct jobmsg *job, json_object *params,
		    const struct proto_method **ret_m, struct reply *r)
{
	int k;

	identity_from_job(job, &c->ident);
	c->params = params;
	/* jobmsg_decode() took only methods that run in a worker; these are the named ones. */
	if (job->method >= PROTO_METHOD_COUNT || !handlers[job->method] ||
	    !json_object_is_type(c->params, json_type_object))
		return reply_error(r, PROTO_ERR_INTERNAL, EINVAL, "malformed job from the broker");
	*ret_m = &proto_methods[job->method];
	/* The event loop appends the caller's netns to an attach, last, and says so in the job. */
	if (job->flags & JOBMSG_F_NETNS) {
		if (c->n_fds == 0)
			return reply_error(r, PROTO_ERR_INTERNAL, EINVAL,
					   "malformed job from the broker");
		c->netns = c->fds[--c->n_fds];
	}
	k = policy_resolve(c->policy, &c->ident.id, &c->grant);
	return k < 0 ? k : 0;
}

/*
 * The request's params as the method table types them, in c->req. Bad
 * params are answered here (invalid-request; too-large for hex over its
 * bound), so handlers never read the request's JSON.
 */
static int call_decode(struct call *c, const struct proto_method *m, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k;

	c->req = calloc(1, m->params_size ?: 1);
	if (!c->req)
		return -ENOMEM;
	k = proto_method_decode(m, c->params, c->n_fds, c->req, &error);
	if (k == -ENOMEM)
		return k;
	if (k == -E2BIG)
		return reply_error(r, PROTO_ERR_TOO_LARGE, E2BIG, "%s", error ?: "too large");
	if (k < 0)
		return reply_error(r, PROTO_ERR_INVALID, m->flat_errno ? EINVAL : -k, "%s",
				   error ?: "invalid request");
	c->req_method = m;
	return 0;
}

/* What an audit record names of a request. */
struct audit_names {
	const char *object, *program; /* program: the map's name for "map" */
	const char *op; /* "map": the operation */
	bool writes; /* "map": the operation changes the map */
	const struct proto_link_target *target; /* attach */
};

/* The names, from the request's typed params; none where they did not decode. */
static struct audit_names call_audit_names(const struct call *c)
{
	struct audit_names n = {};

	switch (c->req_method ? c->req_method->id : PROTO_METHOD_COUNT) {
	case PROTO_METHOD_SHOW:
	case PROTO_METHOD_UNLOAD:
	case PROTO_METHOD_FDS:
		n.object = ((const struct proto_object_params *)c->req)->object;
		break;
	case PROTO_METHOD_ATTACH: {
		const struct proto_attach_params *p = c->req;

		n = (struct audit_names){
			.object = p->object, .program = p->program, .target = &p->target};
		break;
	}
	case PROTO_METHOD_DETACH: {
		const struct proto_detach_params *p = c->req;

		n = (struct audit_names){.object = p->object, .program = p->program};
		break;
	}
	case PROTO_METHOD_TEST_RUN: {
		const struct proto_test_run_params *p = c->req;

		n = (struct audit_names){.object = p->object, .program = p->program};
		break;
	}
	case PROTO_METHOD_MAP_INSERT:
		n.object = ((const struct proto_map_insert_params *)c->req)->object;
		break;
	case PROTO_METHOD_MAP: {
		const struct proto_map_request *p = c->req;

		n = (struct audit_names){.object = p->object,
					 .program = p->map,
					 .op = proto_map_op_to_string(p->op),
					 .writes = proto_map_op_writes(p->op)};
		break;
	}
	default:
		break;
	}
	return n;
}

/* One audit record per request (list and show only when refused: they decide nothing). */
static void call_audit(struct call *c, const struct proto_method *m, struct reply *r)
{
	enum proto_error code = reply_error_code(r);
	const struct audit_names n = call_audit_names(c);
	char object[AUDIT_OBJECT_SIZE], target[192] = "";
	struct audit_record a = {.event = m->name,
				 .uid = c->ident.id.uid,
				 .pid = c->ident.pid,
				 .unit = c->ident.id.unit,
				 .user_unit = c->ident.id.user_unit};

	if (!code && (m->id == PROTO_METHOD_LIST || m->id == PROTO_METHOD_SHOW ||
		      m->id == PROTO_METHOD_POLICY))
		return;
	if (m->id == PROTO_METHOD_MAP) {
		/* Map reads decide nothing new (like show): only writes and refusals. */
		if (!code && !n.writes)
			return;
		if (n.op)
			snprintf(target, sizeof(target), "%.32s", n.op);
		a.target = target;
	}
	if (n.object) {
		/* OWNER/NAME (the caller's own when no owner is given), and /PROGRAM. */
		audit_format_object(object, sizeof(object), c->ident.id.uid, n.object, n.program);
		a.object = object;
	}
	if (n.target) {
		const char *type = n.target->type, *name = n.target->name,
			   *at = n.target->attach_type;

		snprintf(target, sizeof(target), "%.32s%s%.64s%s%.32s", type ? type : "?",
			 name ? " " : "", name ? name : "", at ? " " : "", at ? at : "");
		/* Where the request names no target (a uprobe's process), what the worker found. */
		if (c->target_desc[0])
			snprintf(target, sizeof(target), "%.64s%s%.120s", name ? name : "",
				 name ? " " : "", c->target_desc);
		a.target = target;
	}
	if (!code) {
		a.decision = "allow";
	} else {
		a.decision = code == PROTO_ERR_DENIED || code == PROTO_ERR_QUOTA ||
					     code == PROTO_ERR_NOT_FOUND
				     ? "deny"
				     : "error";
		a.reason = reply_error_message(r);
	}
	audit_log(&a);
}

int named_handle(const struct policy *policy, const struct load_config *cfg, struct jobmsg *job,
		 json_object *params, int *fds, size_t n_fds, json_object **ret_body, int **ret_fds,
		 size_t *ret_n_fds)
{
	struct call c = {.policy = policy,
			 .cfg = cfg,
			 .fds = fds,
			 .n_fds = n_fds,
			 .netns = -EBADF,
			 .target_status = -EBADF,
			 .target_status_error = ENOENT,
			 .lock = -EBADF};
	const struct proto_method *m = NULL;
	struct reply r = {};
	int k;

	k = call_run(&c, job, params, &m, &r);
	if (k == 0)
		k = call_decode(&c, m, &r);
	if (k == 0)
		k = handlers[m->id](&c, &r);
	if (k == 0 && m)
		k = reply_limit_fds(&r, m);
	/* A handler failing after it changed something (unload's commit, say) is on record too. */
	k = reply_fail(&r, k);
	if (k >= 0 && m)
		call_audit(&c, m, &r);
	call_done(&c);
	close_many(fds, n_fds);
	return reply_finish(&r, k, ret_body, ret_fds, ret_n_fds);
}
