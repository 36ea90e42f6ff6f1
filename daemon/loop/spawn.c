/* SPDX-License-Identifier: MIT */
/*
 * Starting bpfbroker-worker from the event loop: the executable opened and
 * checked once, then forked and exec'd by fd with its fds in place and only
 * the workers' capabilities.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "daemon/shared/spawn.h"
#include "policy/trust.h"

extern char **environ;

int spawn_open_exe(const char *path)
{
	_cleanup_free_ char *dir = strdup(path), *error = NULL;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	int fd;

	if (!dir)
		return -ENOMEM;
	if (!slash || slash == dir || !slash[1]) {
		log_error("%s: the worker executable must be an absolute path to a file", path);
		return -EINVAL;
	}
	*slash = '\0';
	/* Run as root: it must be root's alone, as the policy is. */
	fd = trust_open_file(dir, slash + 1, &error);
	if (fd < 0)
		log_error("cannot use %s as the worker executable: %s", path,
			  error ? error : strerror(-fd));
	return fd;
}

/* fd to target in the child: via a number above both, so neither overwrites the other. */
static int move_fd(int fd, int target)
{
	if (fd < 0)
		return 0;
	return dup2(fd, target) < 0 ? negative_errno() : 0;
}

_Noreturn static void spawn_child(int exe_fd, char *const *argv, int sock, int policy_fd)
{
	sigset_t none;
	int k;

	/* The event loop blocks what its signalfds take; the new image sets its own. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (sock >= 0 && sock <= SPAWN_POLICY_FD)
		sock = fcntl(sock, F_DUPFD, SPAWN_POLICY_FD + 1);
	if (policy_fd >= 0 && policy_fd <= SPAWN_POLICY_FD)
		policy_fd = fcntl(policy_fd, F_DUPFD, SPAWN_POLICY_FD + 1);
	if (exe_fd <= SPAWN_POLICY_FD)
		exe_fd = fcntl(exe_fd, F_DUPFD_CLOEXEC, SPAWN_POLICY_FD + 1);
	k = exe_fd < 0 ? -EBADF : move_fd(sock, SPAWN_SOCKET_FD);
	if (k >= 0)
		k = move_fd(policy_fd, SPAWN_POLICY_FD);
	/* Everything else closes at exec; exe_fd stays open until then. */
	if (k >= 0 && close_range(sock >= 0 ? SPAWN_POLICY_FD + 1 : SPAWN_SOCKET_FD, ~0U,
				  CLOSE_RANGE_CLOEXEC) < 0)
		k = negative_errno();
	if (k >= 0)
		k = caps_exec_prepare();
	if (k >= 0) {
		syscall(SYS_execveat, exe_fd, "", argv, environ, AT_EMPTY_PATH);
		k = negative_errno();
	}
	log_error("cannot start the worker executable: %s", strerror(-k));
	_exit(127);
}

int spawn_exec(int exe_fd, char *const *argv, int sock, int policy_fd, pid_t *ret)
{
	pid_t pid = fork();

	if (pid < 0)
		return negative_errno();
	if (pid == 0)
		spawn_child(exe_fd, argv, sock, policy_fd);
	*ret = pid;
	return 0;
}
