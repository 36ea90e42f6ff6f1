/* SPDX-License-Identifier: MIT */
/*
 * The pool's spawners: bpfbroker-worker started to fork workers on request,
 * restarted with a backoff when it dies, replaced after SPAWNER_MAX_WORKERS
 * or at a policy reload, and a replaced one reaped after its last worker.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/log.h"
#include "spawn.h"
#include "worker_internal.h"

void retired_free(struct retired_spawner *r)
{
	struct retired_spawner **pp = &r->pool->retired;

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
	sd_event_source_disable_unref(r->child);
	free(r);
}

/* Reaped: drop the source (and the pidfd sd-event watches it by). */
static int on_retired_spawner_exit(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	retired_free(userdata);
	return 0;
}

/* Its last worker is gone, so it exits now: watch it, to reap it. */
static void retired_watch(struct retired_spawner *r)
{
	if (sd_event_add_child(r->pool->event, &r->child, r->pid, WEXITED, on_retired_spawner_exit,
			       r) < 0) {
		log_warning("cannot watch the old worker spawner %d", (int)r->pid);
		retired_free(r);
	}
}

/* A worker of an old spawner (serial) is gone; the spawner goes after its last. */
void retired_worker_gone(struct worker_pool *p, unsigned serial)
{
	for (struct retired_spawner *r = p->retired; r; r = r->next)
		if (r->serial == serial) {
			if (r->n_workers > 0 && --r->n_workers == 0)
				retired_watch(r);
			return;
		}
}

/*
 * New workers come from a new spawner: at a policy reload (with the new
 * policy), and after SPAWNER_MAX_WORKERS (with a fresh layout). The old one
 * exits once its last worker has (busy ones finish their request, the rest
 * are told to go or, after SPAWNER_MAX_WORKERS, serve their connection to its
 * end); it is reaped then.
 */
void spawner_retire(struct worker_pool *p)
{
	p->spawner_io = sd_event_source_disable_unref(p->spawner_io);
	p->spawner_child = sd_event_source_disable_unref(p->spawner_child);
	p->spawner_sock = safe_close(p->spawner_sock);
	if (p->spawner_pid > 0) {
		struct retired_spawner *r = calloc(1, sizeof(*r));

		if (!r) {
			log_warning("cannot watch the old worker spawner %d", (int)p->spawner_pid);
		} else {
			*r = (struct retired_spawner){
				.pool = p, .pid = p->spawner_pid, .serial = p->spawner_serial};
			for (const struct worker *w = p->workers; w; w = w->next)
				r->n_workers += w->spawner == r->serial;
			r->next = p->retired;
			p->retired = r;
			if (r->n_workers == 0)
				retired_watch(r);
		}
	}
	p->spawner_pid = 0;
	p->spawner_serial++; /* no worker of ours carries it: a new one is not the old one */
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
 * spawner, exec'd afresh, after this many bounds that to a few workers, so
 * a few connections (each worker serves one), for about an exec's cost
 * spread over them (daemon/README.md). The old one's workers bound to a
 * connection serve it to its end: the count bounds how many share a layout,
 * not for how long.
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

void spawner_stop(struct worker_pool *p)
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
	p->spawner_serial++;
	p->n_spawning = 0; /* what it still owed us is gone with it */
}

/*
 * Enough workers share this spawner's layout: the next come from a new one.
 * Its fresh workers go (they would serve new connections); those serving a
 * connection stay bound to it, as long as they would have (their limits, idle
 * time, the connection's end, eviction), and the old spawner exits after
 * them. Retiring them too cost a fork and a worker's setup for each of their
 * connections' next requests (BENCHMARKS.md, 32 clients).
 */
static void spawner_replace(struct worker_pool *p)
{
	for (struct worker *w = p->workers; w; w = w->next)
		if (w->state == WORKER_IDLE && w->spawner == p->spawner_serial)
			worker_retire(w);
	spawner_retire(p);
}

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
	else if (++p->spawner_served >=
		 (p->cfg.spawner_max_workers ? p->cfg.spawner_max_workers : SPAWNER_MAX_WORKERS))
		spawner_replace(p);
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

int on_spawn(sd_event_source *s, void *userdata)
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

int on_respawn(sd_event_source *s, uint64_t usec, void *userdata)
{
	pool_schedule(userdata);
	return 0;
}
