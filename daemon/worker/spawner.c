/* SPDX-License-Identifier: MIT */
/*
 * The spawner's loop: fork one worker each time the event loop asks, and hand
 * the event loop its socket and pidfd.
 */
#include "spawner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "daemon/shared/spawn.h"
#include "sandbox.h"

int spawner_prepare(pid_t parent)
{
	sigset_t chld;

	/*
	 * SIGCHLD is not ignored: exited workers wait as zombies until we reap
	 * them (when their signal comes), so the pidfd we open right after
	 * fork() names the right process.
	 */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * systemd (KillMode=control-group) and a terminal signal every process
	 * of the group. The daemon alone decides when we go: it lets running
	 * workers finish first, and they die with us (PR_SET_PDEATHSIG).
	 * Workers inherit these.
	 */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* Exec may have cleared it; and the daemon may have died before we set it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return negative_errno();
	if (getppid() != parent)
		return -ESRCH;
	/*
	 * Not dumpable, for us and the workers we fork: a root process whose
	 * capabilities include ours (a worker some object took over) could
	 * otherwise ptrace-access us, and so write our memory (/proc/PID/mem) or
	 * have a perf event SIGTRAP us (perf_event_attr.sigtrap); now only
	 * CAP_SYS_PTRACE may. exec made us dumpable again (the daemon is not).
	 */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return negative_errno();
	(void)prctl(PR_SET_NAME, "bpfbroker-spawn");
	return 0;
}

/*
 * The spawner's loop: one byte asks for a worker; the answer is the
 * worker's socket and pidfd (SCM_RIGHTS) and its pid. It forks from its own
 * image, set up once (worker/main.c), so workers carry the same policy and
 * warmed-up libbpf, and the event loop never pays for a fork while clients
 * wait.
 */
_Noreturn void spawner_run(const struct worker_config *cfg, const struct sandbox *own)
{
	sigset_t chld;
	int sfd, k;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		_exit(EXIT_FAILURE);
	/*
	 * From here on only what forking workers takes, and what they do: they
	 * inherit this filter and add their own (sandbox.h).
	 */
	k = sandbox_apply(own);
	if (k < 0) {
		log_error("worker spawner: cannot install its system call filter: %s",
			  strerror(-k));
		_exit(EXIT_FAILURE);
	}
	for (;;) {
		struct pollfd pfds[2] = {{.fd = SPAWN_SOCKET_FD, .events = POLLIN},
					 {.fd = sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		char c;
		int sv[2], status, pidfd;
		pid_t pid;
		ssize_t n;

		if (poll(pfds, 2, -1) < 0 && errno != EINTR)
			_exit(EXIT_FAILURE);
		if (pfds[1].revents & POLLIN) {
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
				if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
					log_warning("worker %d died of signal %d", (int)pid,
						    WTERMSIG(status));
		}
		if (!(pfds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		do
			n = recv(SPAWN_SOCKET_FD, &c, 1, 0);
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			/*
			 * The daemon closed us (policy reload): workers still serving
			 * must finish, and they die with us (PR_SET_PDEATHSIG), so
			 * wait for every one of them first.
			 */
			while (wait(NULL) > 0 || errno == EINTR)
				;
			_exit(EXIT_SUCCESS);
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			continue;
		/*
		 * Replies carry up to PROTO_MAX_REPLY_BYTES in one packet, jobs up
		 * to WORKER_MAX_JOB_BYTES: both ends, with CAP_NET_ADMIN raised once.
		 */
		(void)caps_sndbuf_force(sv, 2, WORKER_SNDBUF);
		pid = fork();
		if (pid == 0) {
			safe_close(sv[0]);
			serve_main(cfg, sv[1], getppid());
		}
		safe_close(sv[1]);
		pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (pidfd < 0) {
			if (pid > 0)
				kill(pid, SIGKILL);
			safe_close(sv[0]);
			(void)spawn_send_worker(SPAWN_SOCKET_FD, -1, -EBADF, -EBADF);
			continue;
		}
		if (spawn_send_worker(SPAWN_SOCKET_FD, pid, sv[0], pidfd) < 0)
			kill(pid, SIGKILL);
		safe_close(sv[0]);
		safe_close(pidfd);
	}
}
