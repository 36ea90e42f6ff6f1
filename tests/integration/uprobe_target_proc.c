/* SPDX-License-Identifier: MIT */
#include "uprobe_target_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int target_start(const struct user *u, bool nnp, const char *exe, struct target *t)
{
	int in[2], outp[2];
	char line[64];
	ssize_t n;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0)
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (t->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(outp[1], STDOUT_FILENO);
		if (getuid() != u->uid &&
		    (setgroups(0, NULL) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
		     setresuid(u->uid, u->uid, u->uid) < 0))
			_exit(126);
		if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(125);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	t->cmds = in[1];
	t->replies = outp[0];
	n = read(t->replies, line, sizeof(line) - 1);
	if (n <= 0 || strncmp(line, "ready ", 6) != 0)
		return -EIO;
	return 0;
}

int target_cmd(struct target *t, const char *cmd, char *reply, size_t size)
{
	struct pollfd p = {.fd = t->replies, .events = POLLIN};
	size_t len = 0;

	if (write(t->cmds, cmd, strlen(cmd)) != (ssize_t)strlen(cmd) ||
	    write(t->cmds, "\n", 1) != 1)
		return -EIO;
	while (len + 1 < size) {
		if (poll(&p, 1, 10000) <= 0 || read(t->replies, reply + len, 1) != 1)
			return -EIO;
		if (reply[len] == '\n')
			break;
		len++;
	}
	reply[len] = '\0';
	return 0;
}

int target_call(struct target *t, int n)
{
	char cmd[32], want[32], reply[64];

	snprintf(cmd, sizeof(cmd), "call %d", n);
	snprintf(want, sizeof(want), "called %d", n);
	if (target_cmd(t, cmd, reply, sizeof(reply)) < 0 || strcmp(reply, want) != 0)
		return -EIO;
	return 0;
}

int target_semaphore(struct target *t)
{
	char reply[64];

	if (target_cmd(t, "sema", reply, sizeof(reply)) < 0 || strncmp(reply, "sema ", 5) != 0)
		return -1;
	return atoi(reply + 5);
}

int target_semaphore_becomes(struct target *t, int want)
{
	int v = -1;

	for (int i = 0; i < 100 && (v = target_semaphore(t)) != want && v >= 0; i++)
		usleep(50000);
	return v;
}

void target_stop(struct target *t)
{
	if (t->pid <= 0)
		return;
	close(t->cmds);
	close(t->replies);
	if (waitpid(t->pid, NULL, 0) < 0)
		perror("waitpid");
	t->pid = 0;
}
