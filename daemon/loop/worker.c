/* SPDX-License-Identifier: MIT */
#include "worker.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/jobmsg.h"
#include "daemon/shared/log.h"
#include "spawn.h"

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

struct retired_spawner {
	struct worker_pool *pool;
	sd_event_source *child;
	struct retired_spawner *next;
};

static void retired_free(struct retired_spawner *r)
{
	struct retired_spawner **pp = &r->pool->retired;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
	sd_event_source_disable_unref(r->child);
	free(r);
}

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
static void job_finish(struct worker_job *j, struct proto_raw *reply, int error)
{
	if (j->done)
		j->done(j->userdata, reply, error);
	job_free(j);
}

/*
 * A request that ended without its worker's answer has no audit record of
 * the worker's: this is its record, so that no request goes unrecorded.
 */
static void job_audit_failure(const struct worker_job *j, const char *reason)
{
	audit_log(&(struct audit_record){.event = j->event,
					 .decision = "error",
					 .uid = j->uid,
					 .pid = j->pid,
					 .object = j->object,
					 .reason = reason});
}

/* ---- the pool, in the event loop ---- */

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
static void pool_schedule(struct worker_pool *p)
{
	if (p->draining)
		return;
	if (pool_can_dispatch(p))
		sd_event_source_set_enabled(p->dispatch, SD_EVENT_ONESHOT);
	if (p->n_idle + p->n_spawning < p->cfg.max_workers)
		sd_event_source_set_enabled(p->spawn, SD_EVENT_ONESHOT);
}

/* Shutting down and the last worker is gone: say so, once. */
static void pool_check_drained(struct worker_pool *p)
{
	void (*drained)(void *) = p->drained;

	if (!p->draining || p->workers || !drained)
		return;
	p->drained = NULL;
	drained(p->drained_userdata);
}

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

static struct worker *worker_free(struct worker *w)
{
	struct worker_pool *p;

	if (!w)
		return NULL;
	p = w->pool;
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
static void worker_kill(struct worker *w)
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
static void worker_retire(struct worker *w)
{
	worker_set_state(w, WORKER_LEAVING);
	w->timer = sd_event_source_disable_unref(w->timer);
	w->io = sd_event_source_disable_unref(w->io);
	shutdown(w->sock, SHUT_RDWR);
}

/* The bound worker that waited longest for its connection (not except), or NULL. */
static struct worker *pool_oldest_bound(const struct worker_pool *p, const struct worker *except)
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
 * Workers kept bound to connections between their jobs, at most: they run
 * nothing (max_workers bounds what runs), but each holds its memory. Four
 * per worker slot keep a few clients per CPU each in its own worker.
 */
#define POOL_MAX_BOUND(p) (4 * (p)->cfg.max_workers)

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

static void pool_queue_sweep(struct worker_pool *p, uid_t uid);

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

/* Reaped: drop the source (and the pidfd sd-event watches it by). */
static int on_retired_spawner_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	retired_free(userdata);
	return 0;
}

/*
 * New workers come from a new spawner: at a policy reload (with the new
 * policy), and after SPAWNER_MAX_WORKERS (with a fresh layout). The old one
 * exits once its last worker has (busy ones finish their request, idle and
 * bound ones are told to go); sd-event reaps it then.
 */
static void spawner_retire(struct worker_pool *p)
{
	p->spawner_io = sd_event_source_disable_unref(p->spawner_io);
	p->spawner_child = sd_event_source_disable_unref(p->spawner_child);
	p->spawner_sock = safe_close(p->spawner_sock);
	if (p->spawner_pid > 0) {
		struct retired_spawner *r = calloc(1, sizeof(*r));

		if (!r || sd_event_add_child(p->event, &r->child, p->spawner_pid, WEXITED,
					     on_retired_spawner_exit, r) < 0) {
			free(r);
			log_warning("cannot watch the old worker spawner %d", (int)p->spawner_pid);
		} else {
			r->pool = p;
			r->next = p->retired;
			p->retired = r;
		}
	}
	p->spawner_pid = 0;
	p->n_spawning = 0; /* what it still owed us, it won't send now */
}

static uint64_t pool_now(struct worker_pool *p)
{
	uint64_t now = 0;

	sd_event_now(p->event, CLOCK_MONOTONIC, &now);
	return now;
}

/*
 * Workers forked from one spawner share its address-space layout: one that
 * leaked an address to a hostile object would tell the next ones'. A new
 * spawner, exec'd afresh, after this many (and the old one's workers
 * retired) bounds that to a few workers, so a few connections (each worker
 * serves one), for about an exec's cost spread over them (daemon/README.md).
 */
#define SPAWNER_MAX_WORKERS 32

#define SPAWNER_QUICK_DEATH_USEC (1000 * 1000ull)
#define SPAWNER_RETRY_MAX_USEC (10 * 1000 * 1000ull)

/* The spawner died unasked: if it had only just started, wait longer before the next. */
static void spawner_note_death(struct worker_pool *p)
{
	uint64_t now = pool_now(p), delay;

	if (now - p->spawner_started >= SPAWNER_QUICK_DEATH_USEC) {
		p->spawner_quick_deaths = 0;
		return;
	}
	p->spawner_quick_deaths++;
	delay = 10000ull << (p->spawner_quick_deaths < 10 ? p->spawner_quick_deaths : 10);
	p->spawner_retry_at =
		now + (delay < SPAWNER_RETRY_MAX_USEC ? delay : SPAWNER_RETRY_MAX_USEC);
}

static void spawner_stop(struct worker_pool *p)
{
	p->spawner_io = sd_event_source_disable_unref(p->spawner_io);
	p->spawner_child = sd_event_source_disable_unref(p->spawner_child);
	p->spawner_sock = safe_close(p->spawner_sock);
	if (p->spawner_pid > 0) {
		/* It exits when its socket closes; make sure, and reap it. */
		kill(p->spawner_pid, SIGKILL);
		(void)waitpid(p->spawner_pid, NULL, 0);
	}
	p->spawner_pid = 0;
	p->n_spawning = 0; /* what it still owed us is gone with it */
}

static int worker_add(struct worker_pool *p, int sock, int pidfd, pid_t pid)
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
	w->next = p->workers;
	if (p->workers)
		p->workers->prev = w;
	p->workers = TAKE_PTR(w);
	return 0;
}

static void pool_retire_idle(struct worker_pool *p);

/* A worker from the spawner: its socket and pidfd, and its pid. */
static int on_spawner_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker_pool *p = userdata;
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	int32_t pid32 = -1;
	struct iovec iov = {.iov_base = &pid32, .iov_len = sizeof(pid32)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	int fds[2] = {-1, -1};
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		log_error("the worker spawner is gone; starting another");
		spawner_note_death(p);
		spawner_stop(p);
		pool_schedule(p);
		return 0;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))
			memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	if (p->n_spawning > 0)
		p->n_spawning--;
	if (n != sizeof(pid32) || pid32 <= 0 || fds[0] < 0 || fds[1] < 0) {
		safe_close(fds[0]);
		safe_close(fds[1]);
		log_error("the worker spawner could not start a worker");
		return 0;
	}
	if (worker_add(p, fds[0], fds[1], pid32) < 0)
		log_error("cannot take worker %d", (int)pid32);
	else if (++p->spawner_served >= SPAWNER_MAX_WORKERS)
		/*
		 * Its workers too, fresh or bound to a connection (busy ones
		 * after their job): the next ones come from a fresh layout, and
		 * the old spawner exits soon, not when its last worker would.
		 */
		pool_retire_idle(p);
	pool_schedule(p);
	return 0;
}

static int on_spawner_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct worker_pool *p = userdata;

	log_warning("the worker spawner exited (%s %d)",
		    si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
	p->spawner_child = sd_event_source_disable_unref(p->spawner_child);
	p->spawner_pid = 0; /* reaped by sd-event */
	spawner_note_death(p);
	spawner_stop(p);
	pool_schedule(p);
	return 0;
}

/*
 * The spawner is bpfbroker-worker, exec'd: a fresh image with only what
 * workers link, set up once (worker/main.c), that forks every worker.
 */
static int spawner_start(struct worker_pool *p)
{
	int sv[2], k;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return negative_errno();
	k = spawn_exec(p->cfg.worker_exe_fd, p->cfg.worker_argv, sv[1], *p->cfg.policy_fd, &pid);
	safe_close(sv[1]);
	if (k < 0) {
		safe_close(sv[0]);
		return k;
	}
	p->spawner_pid = pid;
	p->spawner_sock = sv[0];
	p->spawner_served = 0;
	k = sd_event_add_io(p->event, &p->spawner_io, sv[0], EPOLLIN, on_spawner_io, p);
	if (k >= 0)
		k = sd_event_add_child(p->event, &p->spawner_child, pid, WEXITED, on_spawner_exit,
				       p);
	if (k < 0) {
		spawner_stop(p);
		return k;
	}
	return 0;
}

/* Ask the spawner for one more worker (it arrives in on_spawner_io()). */
static int worker_spawn(struct worker_pool *p)
{
	char c = 0;
	int k;

	if (p->spawner_pid <= 0) {
		if (pool_now(p) < p->spawner_retry_at) {
			/* Back off; the timer schedules the pool again. */
			if (sd_event_source_set_time(p->respawn, p->spawner_retry_at) >= 0)
				sd_event_source_set_enabled(p->respawn, SD_EVENT_ONESHOT);
			return -EAGAIN;
		}
		k = spawner_start(p);
		if (k < 0)
			return k;
		p->spawner_started = pool_now(p);
	}
	if (send(p->spawner_sock, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return negative_errno();
	p->n_spawning++;
	return 0;
}

static int on_spawn(sd_event_source *s, void *userdata)
{
	struct worker_pool *p = userdata;
	int k;

	/*
	 * Armed before a drain began (pool_schedule() after a job took an idle
	 * worker, or a policy reload), this step may run after it: at idle
	 * priority it waits behind the signal. A worker started now would be
	 * one nobody retires, and the drain would wait for it until the stop
	 * deadline.
	 */
	if (p->draining || p->n_idle + p->n_spawning >= p->cfg.max_workers)
		return 0;
	k = worker_spawn(p);
	if (k == -EAGAIN)
		return 0; /* the spawner keeps dying; retried when the delay is over */
	if (k < 0) {
		log_error("cannot start a worker: %s", strerror(-k));
		return 0; /* retried when the next job comes or a worker exits */
	}
	pool_schedule(p);
	return 0;
}

static int on_respawn(sd_event_source *s, uint64_t usec, void *userdata)
{
	pool_schedule(userdata);
	return 0;
}

/*
 * Hand j to w. A SOCK_SEQPACKET packet goes whole or not at all: when the send
 * fails, the worker got nothing and the job has not started.
 */
static int worker_start_job(struct worker *w, struct worker_job *j)
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
static void pool_queue_sweep(struct worker_pool *p, uid_t uid)
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
	while (p->retired)
		retired_free(p->retired);
	sd_event_source_disable_unref(p->spawn);
	sd_event_source_disable_unref(p->dispatch);
	sd_event_source_disable_unref(p->respawn);
	sd_event_unref(p->event);
	free(p);
	return NULL;
}
