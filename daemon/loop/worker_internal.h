/* SPDX-License-Identifier: MIT */
/*
 * The worker pool's own types and what its three files (worker.c: the queue,
 * worker_proc.c: the worker processes, worker_spawner.c: the spawners) call
 * of one another; the event loop uses worker.h.
 */
#pragma once

#include "worker.h"

enum worker_state {
	WORKER_IDLE, /* fresh from the spawner, bound to no connection yet */
	WORKER_BUSY, /* running a job */
	WORKER_SETTLING, /* answered; putting itself back in order (hygiene.h) before the next */
	WORKER_BOUND, /* ready for its connection's next job */
	WORKER_LEAVING, /* told to go, or going: its exit not seen yet */
};

struct worker {
	struct worker_pool *pool;
	pid_t pid;
	int sock;
	int pidfd; /* workers are the spawner's children: we watch and kill them by pidfd */
	sd_event_source *io, *child, *timer;
	struct worker_job *job; /* running job, NULL when idle or finished */
	uint64_t started; /* CLOCK_MONOTONIC usec: when it was handed its job */
	enum worker_state state;
	uint64_t conn; /* the connection it serves from its first job on (0: none yet) */
	unsigned n_jobs; /* handed to it so far */
	unsigned generation; /* the pool's when it came: the policy it holds */
	unsigned spawner; /* the serial of the spawner that forked it (pool->spawner_serial) */
	uint64_t last_used; /* CLOCK_MONOTONIC usec: its last job ended */
	bool timed_out;
	bool lost_reply; /* its job ended with the socket closing, not a reply: say why at exit */
	struct worker *prev, *next; /* in pool->workers */
};

struct worker_job {
	struct worker_pool *pool;
	uid_t uid; /* whose: no user may hold more than max_jobs_per_uid workers */
	pid_t pid;
	uint64_t conn; /* whose connection: its bound worker, if any, takes it */
	char *event, *object; /* for the audit record if it ends without an answer */
	bool changes_state;
	bool internal; /* the pool's own sweep: no client waits for it */
	char *text; /* the job, encoded once when submitted */
	size_t len;
	int *fds;
	size_t n_fds;
	worker_done_fn done; /* NULL once orphaned: the reply is dropped */
	void *userdata;
	struct worker *worker;
	struct worker_job *next; /* in pool->queue while waiting */
	sd_event_source *queued; /* waiting, too, is bounded by the job timeout */
	uint64_t deadline; /* CLOCK_MONOTONIC usec: waiting ends here, whatever happens */
};

struct worker_pool {
	sd_event *event;
	struct worker_pool_config cfg;
	struct worker *workers;
	unsigned n_idle, n_busy, n_bound; /* n_bound: settling or bound */
	unsigned generation; /* bumped at each policy reload: older workers hold the old one */
	struct worker_job *queue, **queue_tail;
	sd_event_source *spawn, *dispatch;
	/* The spawner: a child that forks workers for us, so fork() never blocks the loop. */
	pid_t spawner_pid;
	int spawner_sock;
	sd_event_source *spawner_io, *spawner_child;
	unsigned n_spawning; /* asked for, not yet arrived */
	unsigned spawner_served; /* workers the current spawner made (SPAWNER_MAX_WORKERS) */
	unsigned spawner_serial; /* the current spawner's, carried by its workers */
	/*
	 * A spawner that dies right after starting (it could not set itself up)
	 * is restarted after a growing delay, not at once in a loop.
	 */
	uint64_t spawner_started, spawner_retry_at; /* CLOCK_MONOTONIC, usec */
	unsigned spawner_quick_deaths;
	sd_event_source *respawn;
	struct retired_spawner *retired; /* old spawners still waiting for their workers */
	/* Shutting down: nothing starts; drained() once the last worker is gone. */
	bool draining;
	void (*drained)(void *userdata);
	void *drained_userdata;
};

/*
 * An old spawner, its socket closed: it exits once its last worker has. It
 * holds no fd of ours while its workers live (they hold their own socket and
 * pidfd); only once the last is gone is it watched (sd-event's child source,
 * a pidfd), to reap it.
 */
struct retired_spawner {
	struct worker_pool *pool;
	pid_t pid;
	unsigned serial; /* its workers' worker->spawner */
	unsigned n_workers; /* of its workers, those the pool still has */
	sd_event_source *child; /* set once n_workers is 0 */
	struct retired_spawner *next;
};

/*
 * Workers kept bound to connections between their jobs, at most: they run
 * nothing (max_workers bounds what runs), but each holds its memory. Four
 * per worker slot keep a few clients per CPU each in its own worker.
 */
#define POOL_MAX_BOUND(p) (4 * (p)->cfg.max_workers)

/* worker.c: the queue and its scheduling. */
void job_finish(struct worker_job *j, struct proto_raw *reply, int error);
void job_audit_failure(const struct worker_job *j, const char *reason);
void pool_schedule(struct worker_pool *p);
void pool_check_drained(struct worker_pool *p);
void pool_queue_sweep(struct worker_pool *p, uid_t uid);

/* worker_proc.c: the worker processes, their jobs, binding and eviction. */
struct worker *worker_free(struct worker *w);
void worker_kill(struct worker *w);
void worker_retire(struct worker *w);
struct worker *pool_oldest_bound(const struct worker_pool *p, const struct worker *except);
int worker_add(struct worker_pool *p, int sock, int pidfd, pid_t pid);
int worker_start_job(struct worker *w, struct worker_job *j);

/* worker_spawner.c: the spawners that fork the workers, started, retired and replaced. */
void retired_free(struct retired_spawner *r);
void retired_worker_gone(struct worker_pool *p, unsigned serial);
void spawner_retire(struct worker_pool *p);
void spawner_stop(struct worker_pool *p);
int on_spawn(sd_event_source *s, void *userdata);
int on_respawn(sd_event_source *s, uint64_t usec, void *userdata);
