/* SPDX-License-Identifier: MIT */
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "common/macro.h"
#include "log.h"
#include "named.h"

#define WORKER_FD 3
#define WORKER_SNDBUF (4 * 1024 * 1024)

struct worker {
	struct worker_pool *pool;
	pid_t pid;
	int sock;
	sd_event_source *io, *child, *timer;
	struct worker_job *job; /* running job, NULL when idle or finished */
	bool idle; /* waiting for a job */
	bool timed_out;
	bool lost_reply; /* its job ended with the socket closing, not a reply: say why at exit */
	struct worker *prev, *next; /* in pool->workers */
};

struct worker_job {
	struct worker_pool *pool;
	uid_t uid; /* whose: no user may hold more than max_jobs_per_uid workers */
	json_object *msg;
	int *fds;
	size_t n_fds;
	worker_done_fn done;
	void *userdata;
	struct worker *worker;
	struct worker_job *next; /* in pool->queue while waiting */
};

struct worker_pool {
	sd_event *event;
	struct worker_pool_config cfg;
	struct worker *workers;
	unsigned n_idle, n_busy;
	struct worker_job *queue, **queue_tail;
	sd_event_source *spawn, *dispatch;
};

static void job_free(struct worker_job *j)
{
	if (!j)
		return;
	json_object_put(j->msg);
	close_many(j->fds, j->n_fds);
	free(j->fds);
	free(j);
}

/* ---- the worker process ---- */

_Noreturn static void worker_child_main(struct worker_pool *p, int sock, pid_t parent)
{
	struct proto_msg msg = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 0;
	struct pollfd pfd = {.fd = WORKER_FD, .events = POLLIN};
	sigset_t none;
	int k;

	/* The event loop blocks signals for its signalfds; a worker wants the defaults. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* Die with the broker; check for the race where it already died before prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_FAILURE);
	/* Keep stdio (logging) and our socket; nothing else of the broker's, no client's fd. */
	if (sock != WORKER_FD && dup2(sock, WORKER_FD) < 0)
		_exit(EXIT_FAILURE);
	if (close_range(WORKER_FD + 1, ~0U, 0) < 0)
		_exit(EXIT_FAILURE);
	k = caps_worker_init();
	if (k < 0) {
		log_error("worker: cannot reduce capabilities: %s", strerror(-k));
		_exit(EXIT_FAILURE);
	}

	do
		k = poll(&pfd, 1, -1);
	while (k < 0 && errno == EINTR);
	k = proto_recv(WORKER_FD, PROTO_MAX_REQUEST_BYTES * 2, PROTO_MAX_REQUEST_FDS, &msg, NULL);
	if (k <= 0)
		_exit(k == 0 ? EXIT_SUCCESS : EXIT_FAILURE); /* retired by the pool, or broken */

	{
		json_object *m = NULL;
		const char *method = json_object_object_get_ex(msg.json, "method", &m)
					     ? json_object_get_string(m)
					     : "load";

		if (named_is_method(method))
			k = named_handle(*p->cfg.policy, &p->cfg.load, msg.json, msg.fds, msg.n_fds,
					 &body, &fds, &n_fds);
		else
			k = load_handle(*p->cfg.policy, &p->cfg.load, msg.json, msg.fds, msg.n_fds,
					&body, &fds, &n_fds);
	}
	msg.n_fds = 0; /* the handler took (and closed) them */
	if (k < 0)
		_exit(EXIT_FAILURE);
	k = proto_send(WORKER_FD, body, fds, n_fds, PROTO_MAX_REPLY_BYTES);
	if (k == -EMSGSIZE) {
		json_object *e =
			proto_error_new(0, PROTO_E_TOO_LARGE, EMSGSIZE,
					"the reply would exceed the protocol's size limit");

		k = e ? proto_send(WORKER_FD, e, NULL, 0, PROTO_MAX_REPLY_BYTES) : -ENOMEM;
	}
	load_audit_flush();
	_exit(k < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
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
 * The first queued job whose user is under max_jobs_per_uid: so one user's
 * queue of slow loads or test runs can't take every worker from the rest.
 */
static struct worker_job **queue_find_eligible(struct worker_pool *p)
{
	for (struct worker_job **pp = &p->queue; *pp; pp = &(*pp)->next)
		if (p->cfg.max_jobs_per_uid == 0 ||
		    pool_running_for(p, (*pp)->uid) < p->cfg.max_jobs_per_uid)
			return pp;
	return NULL;
}

static struct worker_job *queue_take(struct worker_pool *p, struct worker_job **pp)
{
	struct worker_job *j = *pp;

	*pp = j->next;
	if (p->queue_tail == &j->next)
		p->queue_tail = pp;
	j->next = NULL;
	return j;
}

/* Arm the deferred steps that have work to do (and only those, or the loop would spin). */
static void pool_schedule(struct worker_pool *p)
{
	if (p->queue && p->n_idle > 0 && p->n_busy < p->cfg.max_workers && queue_find_eligible(p))
		sd_event_source_set_enabled(p->dispatch, SD_EVENT_ONESHOT);
	if (p->n_idle < p->cfg.max_workers)
		sd_event_source_set_enabled(p->spawn, SD_EVENT_ONESHOT);
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
	if (w->idle)
		p->n_idle--;
	if (w->job)
		p->n_busy--;
	sd_event_source_disable_unref(w->io);
	sd_event_source_disable_unref(w->child);
	sd_event_source_disable_unref(w->timer);
	safe_close(w->sock);
	free(w);
	return NULL;
}

/* The job is over for this worker (answered, failed or cancelled); the process will exit. */
static struct worker_job *worker_release_job(struct worker *w)
{
	struct worker_job *j = w->job;

	if (j) {
		w->job = NULL;
		w->pool->n_busy--;
		j->worker = NULL;
	}
	w->timer = sd_event_source_disable_unref(w->timer);
	w->io = sd_event_source_disable_unref(w->io);
	pool_schedule(w->pool);
	return j;
}

static int on_worker_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct worker *w = userdata;
	struct proto_msg msg = {};
	_cleanup_free_ char *error = NULL;
	struct worker_job *j;
	int k;

	k = proto_recv(fd, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &msg, &error);
	if (k == -EAGAIN)
		return 0;
	j = worker_release_job(w);
	if (k < 0)
		log_error("worker %d sent a bad reply: %s", (int)w->pid,
			  error ? error : strerror(-k));
	else if (k == 0 && j)
		w->lost_reply = true;
	if (j) {
		j->done(j->userdata, k > 0 ? &msg : NULL, k > 0 ? 0 : k == 0 ? -EPIPE : k);
		job_free(j);
	}
	proto_msg_done(&msg);
	return 0;
}

static int on_worker_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
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
		log_warning("worker %d ended without a reply (%s %d)", (int)w->pid,
			    si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
	if (j) {
		log_warning("worker %d for a job ended without a reply (%s %d)", (int)w->pid,
			    si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
		j->done(j->userdata, NULL, w->timed_out ? -ETIME : -EPIPE);
		job_free(j);
	}
	worker_free(w);
	pool_schedule(p);
	return 0;
}

static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct worker *w = userdata;

	log_warning("worker %d ran over its time limit; killing it", (int)w->pid);
	w->timed_out = true;
	kill(w->pid, SIGKILL);
	return 0;
}

static int worker_spawn(struct worker_pool *p)
{
	_cleanup_free_ struct worker *w = calloc(1, sizeof(*w));
	int sv[2], sndbuf = WORKER_SNDBUF, k;
	pid_t parent = getpid(), pid;

	if (!w)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return negative_errno();
	/* Replies carry up to PROTO_MAX_REPLY_BYTES in one packet. */
	(void)caps_sndbuf_force(sv[1], sndbuf);

	pid = fork();
	if (pid < 0) {
		k = negative_errno();
		safe_close(sv[0]);
		safe_close(sv[1]);
		return k;
	}
	if (pid == 0)
		worker_child_main(p, sv[1], parent);
	safe_close(sv[1]);

	w->pool = p;
	w->pid = pid;
	w->sock = sv[0];
	k = sd_event_add_child(p->event, &w->child, pid, WEXITED, on_worker_exit, w);
	if (k < 0) {
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		safe_close(w->sock);
		return k;
	}
	/* Read a reply before noticing the exit that follows it. */
	sd_event_source_set_priority(w->child, SD_EVENT_PRIORITY_NORMAL + 10);
	w->idle = true;
	p->n_idle++;
	w->next = p->workers;
	if (p->workers)
		p->workers->prev = w;
	p->workers = TAKE_PTR(w);
	return 0;
}

static int on_spawn(sd_event_source *s, void *userdata)
{
	struct worker_pool *p = userdata;
	int k;

	if (p->n_idle >= p->cfg.max_workers)
		return 0;
	k = worker_spawn(p);
	if (k < 0) {
		log_error("cannot start a worker: %s", strerror(-k));
		return 0; /* retried when the next job comes or a worker exits */
	}
	pool_schedule(p);
	return 0;
}

static struct worker *pool_take_idle(struct worker_pool *p)
{
	for (struct worker *w = p->workers; w; w = w->next)
		if (w->idle)
			return w;
	return NULL;
}

static int worker_start_job(struct worker *w, struct worker_job *j)
{
	struct worker_pool *p = w->pool;
	uint64_t now;
	int k;

	w->idle = false;
	p->n_idle--;
	k = proto_send(w->sock, j->msg, j->fds, j->n_fds, PROTO_MAX_REQUEST_BYTES * 2);
	if (k < 0) {
		kill(w->pid, SIGKILL);
		return k;
	}
	/* The worker has its own copies now. */
	close_many(j->fds, j->n_fds);
	k = sd_event_add_io(p->event, &w->io, w->sock, EPOLLIN, on_worker_reply, w);
	if (k < 0) {
		kill(w->pid, SIGKILL);
		return k;
	}
	sd_event_now(p->event, CLOCK_MONOTONIC, &now);
	k = sd_event_add_time(p->event, &w->timer, CLOCK_MONOTONIC, now + p->cfg.job_timeout_usec,
			      0, on_worker_timeout, w);
	if (k < 0) {
		kill(w->pid, SIGKILL);
		return k;
	}
	w->job = j;
	j->worker = w;
	p->n_busy++;
	return 0;
}

static int on_dispatch(sd_event_source *s, void *userdata)
{
	struct worker_pool *p = userdata;

	while (p->queue && p->n_busy < p->cfg.max_workers) {
		struct worker_job **pp = queue_find_eligible(p), *j;
		struct worker *w;
		int k;

		if (!pp)
			break;
		w = pool_take_idle(p);
		if (!w)
			break;
		j = queue_take(p, pp);
		k = worker_start_job(w, j);
		if (k < 0) {
			/* That worker is gone; the job goes back to the front for the next one. */
			log_warning("cannot hand a job to worker %d: %s", (int)w->pid,
				    strerror(-k));
			j->next = p->queue;
			p->queue = j;
			if (!j->next)
				p->queue_tail = &j->next;
			break;
		}
	}
	pool_schedule(p);
	return 0;
}

int worker_pool_submit(struct worker_pool *p, uid_t uid, json_object *msg, int *fds, size_t n_fds,
		       worker_done_fn done, void *userdata, struct worker_job **ret)
{
	struct worker_job *j = calloc(1, sizeof(*j));

	if (!j) {
		json_object_put(msg);
		close_many(fds, n_fds);
		free(fds);
		return -ENOMEM;
	}
	*j = (struct worker_job){.pool = p,
				 .uid = uid,
				 .msg = msg,
				 .fds = fds,
				 .n_fds = n_fds,
				 .done = done,
				 .userdata = userdata};
	*p->queue_tail = j;
	p->queue_tail = &j->next;
	pool_schedule(p);
	*ret = j;
	return 0;
}

void worker_job_cancel(struct worker_job *j)
{
	struct worker_pool *p;

	if (!j)
		return;
	p = j->pool;
	if (j->worker) {
		struct worker *w = j->worker;

		kill(w->pid, SIGKILL);
		worker_release_job(w);
	} else {
		struct worker_job **pp = &p->queue;

		while (*pp && *pp != j)
			pp = &(*pp)->next;
		if (*pp) {
			*pp = j->next;
			if (p->queue_tail == &j->next)
				p->queue_tail = pp;
		}
	}
	job_free(j);
}

void worker_pool_refresh(struct worker_pool *p)
{
	/* Idle workers were forked with the old policy: closing their socket makes them exit. */
	for (struct worker *w = p->workers; w; w = w->next)
		if (w->idle) {
			w->idle = false;
			p->n_idle--;
			shutdown(w->sock, SHUT_RDWR);
		}
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

int worker_pool_new(sd_event *event, const struct worker_pool_config *cfg, struct worker_pool **ret)
{
	struct worker_pool *p = calloc(1, sizeof(*p));
	int k;

	if (!p)
		return -ENOMEM;
	p->event = sd_event_ref(event);
	p->cfg = *cfg;
	p->queue_tail = &p->queue;
	k = sd_event_add_defer(event, &p->spawn, on_spawn, p);
	if (k >= 0)
		k = sd_event_add_defer(event, &p->dispatch, on_dispatch, p);
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

		kill(w->pid, SIGKILL);
		(void)waitpid(w->pid, NULL, 0);
		if (w->job) {
			job_free(w->job);
			w->job = NULL;
			p->n_busy--;
		}
		worker_free(w);
	}
	sd_event_source_disable_unref(p->spawn);
	sd_event_source_disable_unref(p->dispatch);
	sd_event_unref(p->event);
	free(p);
	return NULL;
}
