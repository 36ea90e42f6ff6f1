/* SPDX-License-Identifier: MIT */
/*
 * The pool's worker processes: a job handed to one, its reply or its end
 * (crash, time limit), and the worker then bound to its connection for the
 * next job, or retired, or evicted to make room.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/log.h"
#include "worker_internal.h"

/* Keep the pool's counts in step with w's state. */
static void worker_set_state(struct worker *w, enum worker_state state)
{
	struct worker_pool *p = w->pool;
	unsigned *count[] = {[WORKER_IDLE] = &p->n_idle,
			     [WORKER_BUSY] = &p->n_busy,
			     [WORKER_SETTLING] = &p->n_bound,
			     [WORKER_BOUND] = &p->n_bound,
			     [WORKER_LEAVING] = NULL};

	if (count[w->state])
		(*count[w->state])--;
	w->state = state;
	if (count[state])
		(*count[state])++;
}

struct worker *worker_free(struct worker *w)
{
	struct worker_pool *p;

	if (!w)
		return NULL;
	p = w->pool;
	if (w->spawner != p->spawner_serial)
		retired_worker_gone(p, w->spawner);
	if (w->prev)
		w->prev->next = w->next;
	else
		p->workers = w->next;
	if (w->next)
		w->next->prev = w->prev;
	worker_set_state(w, WORKER_LEAVING);
	sd_event_source_disable_unref(w->io);
	sd_event_source_disable_unref(w->child);
	sd_event_source_disable_unref(w->timer);
	safe_close(w->sock);
	safe_close(w->pidfd);
	free(w);
	return NULL;
}

/* By pidfd: the pid may not be reused while we hold it. Same uid, no CAP_KILL needed. */
void worker_kill(struct worker *w)
{
	if (syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
		log_warning("cannot kill worker %d: %m", (int)w->pid);
}

/*
 * The job is over for this worker (answered, failed or cancelled); unless
 * worker_keep() binds it for its connection's next job, the process exits.
 */
static struct worker_job *worker_release_job(struct worker *w)
{
	struct worker_job *j = w->job;

	if (j) {
		w->job = NULL;
		j->worker = NULL;
	}
	if (w->state != WORKER_LEAVING)
		worker_set_state(w, WORKER_LEAVING);
	w->timer = sd_event_source_disable_unref(w->timer);
	w->io = sd_event_source_disable_unref(w->io);
	pool_schedule(w->pool);
	return j;
}

/*
 * Tell a worker that is running no job to go: it exits when its socket
 * closes (after putting itself in order, if it is at that).
 */
void worker_retire(struct worker *w)
{
	worker_set_state(w, WORKER_LEAVING);
	w->timer = sd_event_source_disable_unref(w->timer);
	w->io = sd_event_source_disable_unref(w->io);
	shutdown(w->sock, SHUT_RDWR);
}

/* The bound worker that waited longest for its connection (not except), or NULL. */
struct worker *pool_oldest_bound(const struct worker_pool *p, const struct worker *except)
{
	struct worker *oldest = NULL;

	for (struct worker *w = p->workers; w; w = w->next)
		if (w != except && w->state == WORKER_BOUND &&
		    (!oldest || w->last_used < oldest->last_used))
			oldest = w;
	return oldest;
}

static int on_worker_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata);
static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata);

/*
 * After w answered j: may it serve j's connection's next job? Only a job of
 * a client still there, from a worker holding the current policy, under its
 * job limit, and not while shutting down.
 */
static bool worker_may_stay(const struct worker *w, const struct worker_job *j)
{
	const struct worker_pool *p = w->pool;

	return p->cfg.max_jobs_per_worker > 1 && j->conn != 0 && j->done && !j->internal &&
	       w->n_jobs < p->cfg.max_jobs_per_worker && w->generation == p->generation &&
	       !p->draining;
}

/*
 * Bind w to its connection: it settles (hygiene.h) and says it is ready
 * (WORKER_READY), bounded by the job timeout. At most POOL_MAX_BOUND are
 * bound: past that the one that waited longest goes.
 */
static void worker_keep(struct worker *w)
{
	struct worker_pool *p = w->pool;
	int k;

	if (p->n_bound >= POOL_MAX_BOUND(p)) {
		struct worker *oldest = pool_oldest_bound(p, w);

		if (!oldest) {
			shutdown(w->sock, SHUT_RDWR);
			return;
		}
		worker_retire(oldest);
	}
	worker_set_state(w, WORKER_SETTLING);
	sd_event_now(p->event, CLOCK_MONOTONIC, &w->last_used);
	k = sd_event_add_io(p->event, &w->io, w->sock, EPOLLIN, on_worker_ready, w);
	if (k >= 0)
		k = sd_event_add_time(p->event, &w->timer, CLOCK_MONOTONIC,
				      w->last_used + p->cfg.job_timeout_usec, 0, on_worker_timeout,
				      w);
	if (k < 0)
		worker_retire(w);
}

/*
 * The job's worker gave no answer: it crashed, was killed at its time limit,
 * or sent something unreadable. Record it, since the worker's own record may
 * never have been written; and if the request may have been changing the
 * user's store, sweep what it left half-made (store.h): with the store's
 * ordering, whatever it had committed stays, the rest is debris.
 */
static void job_end_abnormal(struct worker *w, struct worker_job *j, int error)
{
	char reason[200];

	snprintf(reason, sizeof(reason), "%s%s",
		 w->timed_out	   ? "the request ran over its time limit and its worker was killed"
		 : error == -EPIPE ? "its worker ended without an answer (it crashed or was killed)"
				   : "its worker sent an unreadable answer",
		 j->changes_state ? "; what it had committed stays, the rest is swept" : "");
	job_audit_failure(j, reason);
	if (j->changes_state)
		pool_queue_sweep(w->pool, j->uid);
	job_finish(j, NULL, error);
}

static int on_worker_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker *w = userdata;
	struct proto_raw msg = {};
	_cleanup_free_ char *error = NULL;
	struct worker_job *j;
	int k;

	k = proto_recv_raw(fd, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &msg, &error);
	if (k == -EAGAIN)
		return 0;
	j = worker_release_job(w);
	if (k < 0) {
		log_error("worker %d sent a bad reply: %s", (int)w->pid,
			  error ? error : strerror(-k));
		worker_kill(w);
	} else if (k == 0 && j)
		w->lost_reply = true;
	if (j && k > 0) {
		if (worker_may_stay(w, j))
			worker_keep(w);
		else
			shutdown(w->sock, SHUT_RDWR);
		job_finish(j, &msg, 0);
	} else if (j)
		/*
		 * A worker killed at its time limit is usually seen here first, as
		 * the end of its socket, before its pidfd says it exited.
		 */
		job_end_abnormal(w, j, k < 0 ? k : w->timed_out ? -ETIME : -EPIPE);
	proto_raw_done(&msg);
	return 0;
}

/* The worker's pidfd turned readable: it has exited (the spawner reaps it). */
static int on_worker_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker *w = userdata;
	struct worker_pool *p = w->pool;
	struct worker_job *j;

	/* A reply may still be queued on the socket: the exit can be seen first. */
	if (w->job && w->io)
		on_worker_reply(w->io, w->sock, EPOLLIN, w);
	j = worker_release_job(w);
	if (w->lost_reply && !j)
		/* A crash (a hostile object tripping libbpf, say) or a kill: on record. */
		log_warning("worker %d ended without a reply%s", (int)w->pid,
			    w->timed_out ? " (killed at its time limit)" : "");
	if (j) {
		log_warning("worker %d for a job ended without a reply%s", (int)w->pid,
			    w->timed_out ? " (killed at its time limit)" : "");
		job_end_abnormal(w, j, w->timed_out ? -ETIME : -EPIPE);
	}
	worker_free(w);
	pool_schedule(p);
	pool_check_drained(p);
	return 0;
}

/* A bound worker waited for its connection's next job too long. */
static int on_worker_linger(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct worker *w = userdata;

	worker_retire(w);
	pool_schedule(w->pool);
	return 0;
}

/*
 * A settling worker says it is ready for its connection's next job; or its
 * socket ends (it found something a job left behind, or reached its limits,
 * and exits: the next job gets a fresh worker).
 */
static int on_worker_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker *w = userdata;
	struct worker_pool *p = w->pool;
	char c = 0;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
	int k;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n == 1 && c == WORKER_READY && w->state == WORKER_SETTLING) {
		worker_set_state(w, WORKER_BOUND);
		w->timer = sd_event_source_disable_unref(w->timer);
		k = sd_event_add_time(p->event, &w->timer, CLOCK_MONOTONIC,
				      w->last_used + p->cfg.worker_idle_usec, 0, on_worker_linger,
				      w);
		if (k < 0)
			worker_retire(w);
		pool_schedule(p);
		return 0;
	}
	/* Anything else from a worker with no job is not ours to take: it goes. */
	if (n > 0) {
		log_warning("worker %d sent something while not serving a job; killing it",
			    (int)w->pid);
		worker_kill(w);
	}
	worker_retire(w);
	pool_schedule(p);
	return 0;
}

static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct worker *w = userdata;

	log_warning("worker %d ran over its time limit; killing it", (int)w->pid);
	w->timed_out = true;
	worker_kill(w);
	return 0;
}

int worker_add(struct worker_pool *p, int sock, int pidfd, pid_t pid)
{
	_cleanup_free_ struct worker *w = calloc(1, sizeof(*w));
	int k;

	if (!w) {
		safe_close(sock);
		safe_close(pidfd);
		return -ENOMEM;
	}
	w->pool = p;
	w->pid = pid;
	w->sock = sock;
	w->pidfd = pidfd;
	k = sd_event_add_io(p->event, &w->child, pidfd, EPOLLIN, on_worker_exit, w);
	if (k < 0) {
		worker_kill(w);
		safe_close(w->sock);
		safe_close(w->pidfd);
		return k;
	}
	/* Read a reply before noticing the exit that follows it. */
	sd_event_source_set_priority(w->child, SD_EVENT_PRIORITY_NORMAL + 10);
	w->state = WORKER_LEAVING;
	worker_set_state(w, WORKER_IDLE);
	w->generation = p->generation;
	w->spawner = p->spawner_serial;
	w->next = p->workers;
	if (p->workers)
		p->workers->prev = w;
	p->workers = TAKE_PTR(w);
	return 0;
}

/*
 * Hand j to w. A SOCK_SEQPACKET packet goes whole or not at all: when the send
 * fails, the worker got nothing and the job has not started.
 */
int worker_start_job(struct worker *w, struct worker_job *j)
{
	struct worker_pool *p = w->pool;
	uint64_t now;
	int k;

	k = proto_send_raw(w->sock, j->text, j->len, j->fds, j->n_fds);
	if (k < 0)
		return k;
	/* The worker has its own copies now, and the job from here on is running. */
	close_many(j->fds, j->n_fds);
	worker_set_state(w, WORKER_BUSY);
	w->timer = sd_event_source_disable_unref(w->timer);
	w->io = sd_event_source_disable_unref(w->io);
	w->conn = j->conn;
	w->n_jobs++;
	w->job = j;
	j->worker = w;
	sd_event_now(p->event, CLOCK_MONOTONIC, &now);
	w->started = now;
	k = sd_event_add_io(p->event, &w->io, w->sock, EPOLLIN, on_worker_reply, w);
	if (k >= 0)
		k = sd_event_add_time(p->event, &w->timer, CLOCK_MONOTONIC,
				      now + p->cfg.job_timeout_usec, 0, on_worker_timeout, w);
	if (k < 0) {
		/* Unwatched, it must not run on: its exit ends the job as a crash would. */
		log_error("cannot watch worker %d: %s; killing it", (int)w->pid, strerror(-k));
		worker_kill(w);
	}
	return 0;
}
