/* SPDX-License-Identifier: MIT */
/*
 * The per-user rate limit in the event loop: a load or attach counts against
 * the caller's max_loads_per_minute (policy) before it costs a worker.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>

#include "rate.h"

/*
 * max_loads_per_minute: loads and attaches count, across all of a user's
 * connections, before they cost a worker. 0 to go on, > 0 answered (the
 * refusal's code), or -errno (the connection is dropped).
 */
int conn_rate_take(struct conn *c, int64_t id)
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
