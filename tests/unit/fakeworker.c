/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for bpfbroker-worker in the pool's unit test: a spawner that
 * forks a worker per byte on SPAWN_SOCKET_FD, as daemon/worker/spawner.c
 * does, and workers that answer the job's "method" with a canned reply
 * ("echo"), after a delay ("sleep"), or crash ("crash") or hang ("hang") on
 * command, saying WORKER_READY between two jobs as daemon/worker/serve.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/spawn.h"
#include "proto/proto.h"

/* One job: a reply naming this worker, its spawner and how many jobs it served. */
static int worker_serve_one(int sock, unsigned n)
{
	struct proto_msg m = {};
	json_object *o, *reply, *result;
	const char *method = "echo";
	int64_t id = 0, ms = 0;
	int k;

	/* proto_recv() does not wait: poll first. */
	do
		k = poll(&(struct pollfd){.fd = sock, .events = POLLIN}, 1, -1);
	while (k < 0 && errno == EINTR);
	k = proto_recv(sock, WORKER_MAX_JOB_BYTES, 16, &m, NULL);
	if (k <= 0)
		return k < 0 ? k : -EPIPE;
	if (json_object_object_get_ex(m.json, "id", &o))
		id = json_object_get_int64(o);
	if (json_object_object_get_ex(m.json, "method", &o))
		method = json_object_get_string(o);
	if (json_object_object_get_ex(m.json, "ms", &o))
		ms = json_object_get_int64(o);
	if (strcmp(method, "crash") == 0) {
		/* As a hostile object tripping a bug would: no reply, a signal. */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (strcmp(method, "hang") == 0)
		for (;;)
			pause();
	if (ms > 0)
		usleep((useconds_t)ms * 1000);
	reply = json_object_new_object();
	result = json_object_new_object();
	json_object_object_add(result, "pid", json_object_new_int64(getpid()));
	json_object_object_add(result, "spawner", json_object_new_int64(getppid()));
	json_object_object_add(result, "jobs", json_object_new_int64(n));
	json_object_object_add(result, "fds", json_object_new_int64((int64_t)m.n_fds));
	json_object_object_add(reply, "id", json_object_new_int64(id));
	json_object_object_add(reply, "result", result);
	k = proto_send(sock, reply, NULL, 0, PROTO_MAX_REPLY_BYTES);
	json_object_put(reply);
	proto_msg_done(&m);
	return k;
}

_Noreturn static void worker_main(int sock)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (unsigned n = 1;; n++) {
		if (worker_serve_one(sock, n) < 0)
			_exit(EXIT_SUCCESS); /* the pool closed us: done */
		if (send(sock, (const char[]){WORKER_READY}, 1, MSG_NOSIGNAL) < 0)
			_exit(EXIT_SUCCESS);
	}
}

/* The spawner's loop, as daemon/worker/spawner.c's: a worker per byte, sent by spawn_send_worker().
 */
int main(void)
{
	struct rlimit no_core = {0, 0};
	sigset_t chld;
	int sfd;

	setrlimit(RLIMIT_CORE, &no_core);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return EXIT_FAILURE;
	for (;;) {
		struct pollfd pfds[2] = {{.fd = SPAWN_SOCKET_FD, .events = POLLIN},
					 {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		int sv[2], pidfd;
		pid_t pid;
		char c;

		if (poll(pfds, 2, -1) < 0 && errno != EINTR)
			return EXIT_FAILURE;
		if (pfds[1].revents & POLLIN) {
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		if (!(pfds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (recv(SPAWN_SOCKET_FD, &c, 1, 0) <= 0) {
			/* Retired: the workers still serving finish first. */
			while (wait(NULL) > 0 || errno == EINTR)
				;
			return EXIT_SUCCESS;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return EXIT_FAILURE;
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			close(sfd);
			close(SPAWN_SOCKET_FD);
			worker_main(sv[1]);
		}
		close(sv[1]);
		pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (pidfd < 0)
			return EXIT_FAILURE;
		if (spawn_send_worker(SPAWN_SOCKET_FD, pid, sv[0], pidfd) < 0)
			kill(pid, SIGKILL);
		close(sv[0]);
		close(pidfd);
	}
}
