/* SPDX-License-Identifier: MIT */
/*
 * Starting bpfbroker-worker from the event loop: the executable opened and
 * checked once, then forked and exec'd by fd with its fds in place and only
 * the workers' capabilities.
 */
#pragma once

#include <sys/types.h>

/*
 * Open the executable at path for exec: a regular file that only root could
 * have written (policy/trust.h: root's, through root's directories, writable
 * by nobody else). The fd (O_CLOEXEC) or a negative errno, with why logged.
 */
int spawn_open_exe(const char *path);

/*
 * Fork and exec exe_fd with argv (argv[0] included). sock becomes
 * SPAWN_SOCKET_FD and policy_fd SPAWN_POLICY_FD in it (either may be
 * -EBADF: nothing there); nothing else of ours is passed. The child's pid.
 */
int spawn_exec(int exe_fd, char *const *argv, int sock, int policy_fd, pid_t *ret);
