/* SPDX-License-Identifier: MIT */
/*
 * Single-use worker processes. The event loop forks them ahead of demand so
 * fork() is off the request path; each serves exactly one job and exits, so
 * nothing one client's hostile ELF did survives into the next request.
 */
#pragma once

#include <json-c/json.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/load.h"
#include "proto/proto.h"

struct worker_pool;
struct worker_job;

/*
 * Called once per submitted job: with the worker's reply as it came (bytes
 * and fds, still owned by the pool), or an error. The job's "id" is what the
 * worker stamps its reply with, so the reply can be relayed unparsed.
 */
typedef void (*worker_done_fn)(void *userdata, struct proto_raw *reply, int error);

struct worker_pool_config {
	unsigned max_workers; /* jobs running at once */
	unsigned max_jobs_per_uid; /* of those, at most this many one user's (0: no limit) */
	uint64_t job_timeout_usec; /* a worker running longer is killed */
	const struct policy *const *policy; /* current policy, inherited by workers at fork */
	struct load_config load;
};

int worker_pool_new(sd_event *event, const struct worker_pool_config *cfg,
		    struct worker_pool **ret);
struct worker_pool *worker_pool_free(struct worker_pool *p);

/*
 * Queue a job of uid's (json and fds taken). Jobs start in order, except
 * that a user already running max_jobs_per_uid jobs waits while others go.
 * The callback runs later, never from inside this call.
 */
int worker_pool_submit(struct worker_pool *p, uid_t uid, json_object *job, int *fds, size_t n_fds,
		       worker_done_fn done, void *userdata, struct worker_job **ret);
/* The client went away: drop the job, killing its worker if it runs. No callback follows. */
void worker_job_cancel(struct worker_job *j);
/* Policy changed: idle workers hold the old one, replace them. */
void worker_pool_refresh(struct worker_pool *p);

unsigned worker_pool_n_idle(const struct worker_pool *p);
unsigned worker_pool_n_busy(const struct worker_pool *p);
