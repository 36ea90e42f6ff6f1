/* SPDX-License-Identifier: MIT */
/*
 * How the event loop starts bpfbroker-worker (the spawner, which forks the
 * workers) and talks to it: the fds it is given and the socket sizes. Both
 * sides include this; the options themselves are bpfbroker-worker's
 * (worker/main.c), built by the event loop (loop/main.c).
 */
#pragma once

/* The spawner's socket to the event loop: one byte asks for a worker. */
#define SPAWN_SOCKET_FD 3
/* A sealed memfd with the policy the daemon read (policy_snapshot_dir()). */
#define SPAWN_POLICY_FD 4
/* A worker's socket to the event loop, in the worker. */
#define SPAWN_WORKER_FD 3
/*
 * The spawner's socket to journald, connected before its filter, in the
 * spawner after the policy's fd and in every worker it forks (audit.h).
 */
#define SPAWN_JOURNAL_FD 4

/*
 * The largest job a worker takes (shared/jobmsg.h): a request's params (at
 * most PROTO_MAX_REQUEST_BYTES, and re-encoding never makes them longer, see
 * PROTO_JSON_FLAGS) and the caller's identity (at most SERVER_MAX_GROUPS
 * groups of 4 bytes each, the systemd unit fields from a cgroup path of at
 * most 4096 bytes), with room to spare.
 */
#define WORKER_MAX_JOB_BYTES (256u * 1024)
/* The packet a worker sends once it is ready for its connection's next job. */
#define WORKER_READY 'R'
/* Replies carry up to PROTO_MAX_REPLY_BYTES in one packet, jobs up to WORKER_MAX_JOB_BYTES. */
#define WORKER_SNDBUF (4 * 1024 * 1024)

#include <sys/types.h>

/*
 * The spawner's answer to one byte: the worker's pid, and its socket and
 * pidfd (SCM_RIGHTS), in one packet on sock; pid < 0 and no fds when it could
 * not start one. Neither fd is taken. 0 or a negative errno.
 */
int spawn_send_worker(int sock, pid_t pid, int worker_sock, int pidfd);
