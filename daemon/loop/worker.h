/* SPDX-License-Identifier: MIT */
/*
 * The worker pool: worker processes, forked ahead of demand by the spawner
 * (bpfbroker-worker, exec'd) so fork() is off the request path, and which job
 * goes to which. A worker is bound to the connection of its first job and
 * serves only that connection's later jobs (so one uid's, with one identity),
 * up to max_jobs_per_worker, putting itself back in order between two
 * (daemon/worker/hygiene.h); it exits when the connection closes, when it
 * idles too long, or when the pool needs its place for someone else. No
 * worker ever serves two connections, so never two users.
 */
#pragma once

#include <json-c/json.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/shared/spawn.h"
#include "proto/proto.h"

struct worker_pool;
struct worker_job;

/*
 * Called once per submitted job: with the worker's reply as it came (bytes
 * and fds, still owned by the pool), or an error. The job's request id is what the
 * worker stamps its reply with, so the reply can be relayed unparsed.
 */
typedef void (*worker_done_fn)(void *userdata, struct proto_raw *reply, int error);

/*
 * What the event loop knows of a request: for the audit record the pool
 * writes when it ends without the worker's answer (the worker crashed, was
 * killed at its time limit, or never got it), and whether a worker that dies
 * in it may leave a half-made change in the user's store to sweep.
 */
struct worker_request {
	uid_t uid; /* whose: no user may hold more than max_jobs_per_uid workers */
	pid_t pid; /* the client's, as the kernel said at accept */
	const char *event; /* the audit event: "load", "check", "unload", ... (copied) */
	const char *object; /* "OWNER/NAME" the request names, or NULL (copied) */
	bool changes_state; /* load (not check), unload, attach, detach, map writes */
	uint64_t conn; /* the client's connection (never reused), 0: none (a one-off worker) */
};

struct worker_pool_config {
	unsigned max_workers; /* jobs running at once */
	unsigned max_jobs_per_uid; /* of those, at most this many one user's (0: no limit) */
	uint64_t job_timeout_usec; /* a worker running longer is killed */
	unsigned max_jobs_per_worker; /* jobs of one connection a worker serves; 1: single-use */
	uint64_t worker_idle_usec; /* a bound worker with no job this long exits */
	unsigned spawner_max_workers; /* workers one spawner forks (0: the default, worker.c) */
	/*
	 * The spawner: bpfbroker-worker, opened (and checked) once at startup,
	 * exec'd by fd (so a package upgrade never mixes a new worker with this
	 * daemon), with these arguments (argv[0] included, NULL-terminated),
	 * which tell it max_jobs_per_worker too.
	 */
	int worker_exe_fd;
	char *const *worker_argv;
	/* The current policy as read (a sealed memfd, SPAWN_POLICY_FD): replaced on reload. */
	const int *policy_fd;
};

int worker_pool_new(sd_event *event, const struct worker_pool_config *cfg,
		    struct worker_pool **ret);
struct worker_pool *worker_pool_free(struct worker_pool *p);

/*
 * Queue a job: msg, len bytes encoded by jobmsg_encode() (daemon/shared/jobmsg.h),
 * which the pool hands on as it is, and fds (both taken). Jobs start in order, except that a user
 * already running max_jobs_per_uid jobs waits while others go. The callback
 * runs later, never from inside this call. -EMSGSIZE, at once, for a job
 * larger than WORKER_MAX_JOB_BYTES: no worker could take it.
 */
int worker_pool_submit(struct worker_pool *p, const struct worker_request *req, char *msg,
		       size_t len, int *fds, size_t n_fds, worker_done_fn done, void *userdata,
		       struct worker_job **ret);
/*
 * The client went away. A job still waiting is dropped: nothing has started.
 * A running one is left to finish (it may be changing state that must not be
 * left half-made): its reply is dropped, it still counts against its user's
 * workers, and the job timeout still bounds it. No callback follows.
 */
void worker_job_orphan(struct worker_job *j);
/* The connection closed: the worker bound to it (if any) exits, once its job is done. */
void worker_pool_conn_closed(struct worker_pool *p, uint64_t conn);
/* Policy changed: idle workers hold the old one, replace them. */
void worker_pool_refresh(struct worker_pool *p);
/*
 * Shutting down: start nothing more (waiting jobs get -ESHUTDOWN), let every
 * running worker finish (each bounded by the job timeout), then call
 * drained(userdata), once.
 */
void worker_pool_drain(struct worker_pool *p, void (*drained)(void *userdata), void *userdata);

unsigned worker_pool_n_idle(const struct worker_pool *p);
unsigned worker_pool_n_busy(const struct worker_pool *p);
/*
 * Log every worker the pool still has and what it is doing: when a stop
 * takes longer than it should, what it waits for.
 */
void worker_pool_log_workers(const struct worker_pool *p);
