/* SPDX-License-Identifier: MIT */
/*
 * The worker pool's queue: jobs submitted, waiting in order under per-user
 * limits, handed to a worker when one is free, and the pool made, drained
 * and freed (the interface of worker.h).
 */
#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/jobmsg.h"
#include "daemon/shared/log.h"
#include "worker_internal.h"

static void job_free(struct worker_job *j)
{
	if (!j)
		return;
	sd_event_source_disable_unref(j->queued);
	free(j->text);
	free(j->event);
	free(j->object);
	close_many(j->fds, j->n_fds);
	free(j->fds);
	free(j);
}

/* The job is over: tell whoever waits (nobody, once orphaned), and forget it. */
void job_finish(struct worker_job *j, struct proto_raw *reply, int error)
{
	if (j->done)
		j->done(j->userdata, reply, error);
	job_free(j);
}

/*
 * A request that ended without its worker's answer has no audit record of
 * the worker's: this is its record, so that no request goes unrecorded.
 */
void job_audit_failure(const struct worker_job *j, const char *reason)
{
	audit_log(&(struct audit_record){.event = j->event,
					 .decision = "error",
					 .uid = j->uid,
					 .pid = j->pid,
					 .object = j->object,
					 .reason = reason});
}

static unsigned pool_running_for(const struct worker_pool *p, uid_t uid)
{
	unsigned n = 0;

	for (const struct worker *w = p->workers; w; w = w->next)
		n += w->job && w->job->uid == uid;
	return n;
}

/*
 * A job whose user is under max_jobs_per_uid: so one user's queue of slow
 * loads or test runs can't take every worker from the rest.
 */
static bool job_eligible(const struct worker_pool *p, const struct worker_job *j)
{
	return p->cfg.max_jobs_per_uid == 0 ||
	       pool_running_for(p, j->uid) < p->cfg.max_jobs_per_uid;
}

/* The worker serving conn (settling or ready), if any. */
static struct worker *pool_bound_worker(const struct worker_pool *p, uint64_t conn)
{
	if (conn == 0)
		return NULL;
	for (struct worker *w = p->workers; w; w = w->next)
		if ((w->state == WORKER_SETTLING || w->state == WORKER_BOUND) && w->conn == conn)
			return w;
	return NULL;
}

static struct worker *pool_take_idle(const struct worker_pool *p)
{
	for (struct worker *w = p->workers; w; w = w->next)
		if (w->state == WORKER_IDLE)
			return w;
	return NULL;
}

/*
 * The worker j may start on now: its connection's, once that one is ready
 * (a job never goes past its connection's worker to a fresh one: one
 * connection, one worker), else a fresh one. NULL: j waits.
 */
static struct worker *pool_worker_for(const struct worker_pool *p, const struct worker_job *j)
{
	struct worker *w = pool_bound_worker(p, j->conn);

	if (w)
		return w->state == WORKER_BOUND ? w : NULL;
	return pool_take_idle(p);
}

/* Some queued job can start now. */
static bool pool_can_dispatch(const struct worker_pool *p)
{
	if (p->n_busy >= p->cfg.max_workers)
		return false;
	for (const struct worker_job *j = p->queue; j; j = j->next)
		if (job_eligible(p, j) && pool_worker_for(p, j))
			return true;
	return false;
}

static struct worker_job *queue_take(struct worker_pool *p, struct worker_job **pp)
{
	struct worker_job *j = *pp;

	*pp = j->next;
	if (p->queue_tail == &j->next)
		p->queue_tail = pp;
	j->next = NULL;
	j->queued = sd_event_source_disable_unref(j->queued);
	return j;
}

static void queue_unlink(struct worker_pool *p, struct worker_job *j)
{
	for (struct worker_job **pp = &p->queue; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			queue_take(p, pp);
			return;
		}
}

/* No worker took the job in time (say, the spawner keeps failing): answer, don't hang. */
static int on_job_queue_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct worker_job *j = userdata;

	log_warning("a job of uid %u waited over its time limit for a worker", (unsigned)j->uid);
	queue_unlink(j->pool, j);
	job_audit_failure(j, "not started: it waited over its time limit for a worker");
	job_finish(j, NULL, -ETIME);
	return 0;
}

/* Wait (again) for a worker, until the job's deadline: never a fresh timer. */
static int job_queue(struct worker_pool *p, struct worker_job *j, bool front)
{
	int k = sd_event_add_time(p->event, &j->queued, CLOCK_MONOTONIC, j->deadline, 0,
				  on_job_queue_timeout, j);

	if (k < 0)
		return k;
	if (front) {
		j->next = p->queue;
		p->queue = j;
		if (!j->next)
			p->queue_tail = &j->next;
	} else {
		*p->queue_tail = j;
		p->queue_tail = &j->next;
	}
	return 0;
}

/* Arm the deferred steps that have work to do (and only those, or the loop would spin). */
void pool_schedule(struct worker_pool *p)
{
	if (p->draining)
		return;
	if (pool_can_dispatch(p))
		sd_event_source_set_enabled(p->dispatch, SD_EVENT_ONESHOT);
	if (p->n_idle + p->n_spawning < p->cfg.max_workers)
		sd_event_source_set_enabled(p->spawn, SD_EVENT_ONESHOT);
}

/* Shutting down and the last worker is gone: say so, once. */
void pool_check_drained(struct worker_pool *p)
{
	void (*drained)(void *) = p->drained;

	if (!p->draining || p->workers || !drained)
		return;
	p->drained = NULL;
	drained(p->drained_userdata);
}

static bool error_is_dead_peer(int k)
{
	return k == -EPIPE || k == -ECONNRESET || k == -ECONNREFUSED;
}

static int on_dispatch(sd_event_source *s, void *userdata)
{
	struct worker_pool *p = userdata;

	for (struct worker_job **pp = &p->queue; *pp && p->n_busy < p->cfg.max_workers;) {
		struct worker_job *j;
		struct worker *w;
		int k;

		if (!job_eligible(p, *pp) || !(w = pool_worker_for(p, *pp))) {
			pp = &(*pp)->next;
			continue;
		}
		j = queue_take(p, pp);
		k = worker_start_job(w, j);
		if (k >= 0)
			continue;
		log_warning("cannot hand a job to worker %d: %s", (int)w->pid, strerror(-k));
		if (error_is_dead_peer(k)) {
			/*
			 * That worker died while waiting (its exit is seen soon). The
			 * job waits for the next one, until its own deadline.
			 */
			worker_retire(w);
			if (job_queue(p, j, true) >= 0) {
				pp = &p->queue;
				continue;
			}
		}
		/*
		 * Anything else is the job's own doing, and no other worker would
		 * take it either: it fails now, and this worker stays for the next.
		 */
		job_audit_failure(j, "not started: it could not be handed to a worker");
		job_finish(j, NULL, k);
	}
	pool_schedule(p);
	return 0;
}

static int pool_enqueue(struct worker_pool *p, const struct worker_request *req, char *msg,
			size_t len, int *fds, size_t n_fds, worker_done_fn done, void *userdata,
			struct worker_job **ret)
{
	struct worker_job *j = calloc(1, sizeof(*j));
	uint64_t now = 0;
	int k;

	if (!j || !msg) {
		free(msg);
		close_many(fds, n_fds);
		free(fds);
		free(j);
		return -ENOMEM;
	}
	sd_event_now(p->event, CLOCK_MONOTONIC, &now);
	*j = (struct worker_job){.pool = p,
				 .uid = req->uid,
				 .pid = req->pid,
				 .event = strdup(req->event ? req->event : "request"),
				 .object = req->object ? strdup(req->object) : NULL,
				 .changes_state = req->changes_state,
				 .conn = req->conn,
				 .text = msg,
				 .len = len,
				 .fds = fds,
				 .n_fds = n_fds,
				 .done = done,
				 .userdata = userdata,
				 .deadline = now + p->cfg.job_timeout_usec};
	/* Encoded by the event loop: one that no worker could take fails now, not in a loop. */
	if (len > WORKER_MAX_JOB_BYTES)
		k = -EMSGSIZE;
	else if (!j->event || (req->object && !j->object) || !j->text)
		k = -ENOMEM;
	else
		k = job_queue(p, j, false);
	if (k < 0) {
		job_free(j);
		return k;
	}
	/*
	 * It needs a fresh worker, none is waiting, and as many as may be are
	 * bound to connections: the one whose connection has been quiet longest
	 * makes room (the spawner's next worker is this job's).
	 */
	if (!pool_bound_worker(p, j->conn) && p->n_idle == 0 && p->n_bound >= POOL_MAX_BOUND(p)) {
		struct worker *oldest = pool_oldest_bound(p, NULL);

		if (oldest)
			worker_retire(oldest);
	}
	pool_schedule(p);
	*ret = j;
	return 0;
}

int worker_pool_submit(struct worker_pool *p, const struct worker_request *req, char *msg,
		       size_t len, int *fds, size_t n_fds, worker_done_fn done, void *userdata,
		       struct worker_job **ret)
{
	if (p->draining) {
		free(msg);
		close_many(fds, n_fds);
		free(fds);
		return -ESHUTDOWN;
	}
	return pool_enqueue(p, req, msg, len, fds, n_fds, done, userdata, ret);
}

/*
 * After a request that may have changed uid's store ended without an answer.
 * One waiting sweep per user is enough; while shutting down there is none
 * (the next start sweeps every user).
 */
void pool_queue_sweep(struct worker_pool *p, uid_t uid)
{
	struct worker_request req = {.uid = uid, .event = "sweep"};
	struct jobmsg_identity ident = {.uid = uid, .gid = (gid_t)-1};
	_cleanup_free_ char *id_wire = NULL;
	char *job = NULL;
	size_t id_len = 0, len = 0;
	struct worker_job *j;
	int k;

	if (p->draining)
		return;
	for (j = p->queue; j; j = j->next)
		if (j->internal && j->uid == uid)
			return;
	k = jobmsg_identity_encode(&ident, &id_wire, &id_len);
	if (k == 0)
		k = jobmsg_encode(JOBMSG_SWEEP, 0, 0, id_wire, id_len, "", 0, &job, &len);
	if (k == 0)
		k = pool_enqueue(p, &req, job, len, NULL, 0, NULL, NULL, &j);
	if (k < 0) {
		log_warning("cannot queue a sweep of uid %u: %s; their next named load sweeps",
			    (unsigned)uid, strerror(-k));
		return;
	}
	j->internal = true;
}

void worker_job_orphan(struct worker_job *j)
{
	if (!j)
		return;
	if (j->worker) {
		j->done = NULL;
		j->userdata = NULL;
		return;
	}
	queue_unlink(j->pool, j);
	job_audit_failure(j, "not started: the client hung up while it waited for a worker");
	job_free(j);
}

/*
 * Workers not running a job (fresh or bound) exit when their socket closes;
 * busy ones finish their job, and then go too (worker_may_stay()). The
 * spawner exits once its last worker has; the next worker, if any, comes
 * from a new one.
 */
static void pool_retire_idle(struct worker_pool *p)
{
	p->generation++;
	for (struct worker *w = p->workers; w; w = w->next)
		if (w->state == WORKER_IDLE || w->state == WORKER_SETTLING ||
		    w->state == WORKER_BOUND)
			worker_retire(w);
	spawner_retire(p);
}

void worker_pool_conn_closed(struct worker_pool *p, uint64_t conn)
{
	struct worker *w = pool_bound_worker(p, conn);

	if (w) {
		worker_retire(w);
		pool_schedule(p);
	}
}

void worker_pool_drain(struct worker_pool *p, void (*drained)(void *userdata), void *userdata)
{
	p->draining = true;
	p->drained = drained;
	p->drained_userdata = userdata;
	/* Not started: nothing was decided or changed. */
	while (p->queue) {
		struct worker_job *j = queue_take(p, &p->queue);

		job_audit_failure(j, "not started: the broker is shutting down");
		job_finish(j, NULL, -ESHUTDOWN);
	}
	pool_retire_idle(p);
	pool_check_drained(p);
}

void worker_pool_refresh(struct worker_pool *p)
{
	/* The spawner, and workers idle or bound, hold the old policy. */
	pool_retire_idle(p);
	pool_schedule(p);
}

unsigned worker_pool_n_idle(const struct worker_pool *p)
{
	return p->n_idle;
}

unsigned worker_pool_n_busy(const struct worker_pool *p)
{
	return p->n_busy;
}

void worker_pool_log_workers(const struct worker_pool *p)
{
	uint64_t now = 0;

	sd_event_now(p->event, CLOCK_MONOTONIC, &now);
	log_info("workers: %u running, %u idle, %u bound to a connection, %u asked of the "
		 "spawner (%d)%s",
		 p->n_busy, p->n_idle, p->n_bound, p->n_spawning, (int)p->spawner_pid,
		 p->draining ? "; draining" : "");
	for (const struct worker *w = p->workers; w; w = w->next)
		if (w->job)
			log_info("worker %d: %s of uid %u pid %d, for %llu ms%s", (int)w->pid,
				 w->job->event, (unsigned)w->job->uid, (int)w->job->pid,
				 (unsigned long long)((now - w->started) / 1000),
				 w->timed_out ? ", killed at its time limit" : "");
		else
			log_info("worker %d: %s", (int)w->pid,
				 w->state == WORKER_IDLE       ? "idle"
				 : w->state == WORKER_SETTLING ? "settling after a job"
				 : w->state == WORKER_BOUND
					 ? "waiting for its connection's next job"
					 : "no job (done or retired), its exit not seen yet");
}

int worker_pool_new(sd_event *event, const struct worker_pool_config *cfg, struct worker_pool **ret)
{
	struct worker_pool *p = calloc(1, sizeof(*p));
	int k;

	if (!p)
		return -ENOMEM;
	p->event = sd_event_ref(event);
	p->cfg = *cfg;
	p->queue_tail = &p->queue;
	p->spawner_sock = -EBADF;
	k = sd_event_add_defer(event, &p->spawn, on_spawn, p);
	if (k >= 0)
		k = sd_event_add_defer(event, &p->dispatch, on_dispatch, p);
	if (k >= 0)
		k = sd_event_add_time(event, &p->respawn, CLOCK_MONOTONIC, 0, 0, on_respawn, p);
	if (k >= 0)
		k = sd_event_source_set_enabled(p->respawn, SD_EVENT_OFF);
	if (k < 0) {
		worker_pool_free(p);
		return k;
	}
	/* Spawning new workers yields to serving requests. */
	sd_event_source_set_priority(p->spawn, SD_EVENT_PRIORITY_IDLE);
	pool_schedule(p);
	*ret = p;
	return 0;
}

struct worker_pool *worker_pool_free(struct worker_pool *p)
{
	if (!p)
		return NULL;
	while (p->queue) {
		struct worker_job *j = p->queue;

		p->queue = j->next;
		job_free(j);
	}
	while (p->workers) {
		struct worker *w = p->workers;

		worker_kill(w);
		if (w->job) {
			job_free(w->job);
			w->job = NULL;
		}
		worker_free(w);
	}
	spawner_stop(p);
	while (p->retired) {
		/* Its workers were killed above and die with it: it goes at once. */
		if (kill(p->retired->pid, SIGKILL) >= 0)
			(void)waitpid(p->retired->pid, NULL, 0);
		retired_free(p->retired);
	}
	sd_event_source_disable_unref(p->spawn);
	sd_event_source_disable_unref(p->dispatch);
	sd_event_source_disable_unref(p->respawn);
	sd_event_unref(p->event);
	free(p);
	return NULL;
}
