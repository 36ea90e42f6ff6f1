/* SPDX-License-Identifier: MIT */
/*
 * Brokered uprobes on the caller's own processes (proto/NAMED.md, target
 * "uprobe"). The client passes the binary it opened and a pidfd of the
 * process; the broker resolves the probe location from the binary's ELF
 * symbols, checks that the process is the caller's to look into (as ptrace
 * would, and more: see uprobe_process_refusal()), opens a uprobe perf event
 * bound to that process and links the program to it.
 *
 * All of it in the worker: the target's /proc/PID/status is opened with no
 * capability (the broker's unit hides no process; no process of the broker
 * holds CAP_SYS_PTRACE).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "daemon/shared/procfs.h"
#include "proto/method.h"
#include "reply.h"

struct uprobe_request {
	int binary_fd; /* the client's: the ELF file, opened by the client */
	int pidfd; /* the client's: the process */
	int status_fd; /* the process's /proc/PID/status (uprobe_status_open()), or -EBADF */
	int status_error; /* why there is none (errno), if status_fd < 0 */
	const char *symbol; /* "name": a function symbol, or NULL for a file offset */
	uint64_t offset; /* added to the symbol, or the file offset */
	bool retprobe;
	const char *semaphore; /* USDT semaphore by symbol, or NULL */
	uint64_t semaphore_offset; /* or by file offset; 0: none */
};

/*
 * A uprobe attach's target, decoded (proto/method.h), with its fd indexes
 * resolved to fds[]: -EBADF with *error set for an index the request has no
 * fd for. status_fd and status_error are the caller's to set.
 */
int uprobe_request_from(const struct proto_link_target *t, const int *fds, size_t n_fds,
			struct uprobe_request *ret, char **error);
/*
 * If params are a uprobe attach, the /proc/PID/status of the process its
 * pidfd names, opened with no capability; bound to that process
 * (reads fail once it is gone), so the pid being reused later does not
 * matter. -ENOTTY if params are not a uprobe attach; another negative errno
 * if the status cannot be had (the worker reports it).
 */
int uprobe_status_open(json_object *params, const int *fds, size_t n_fds);

/* The pid a pidfd refers to, in our pid namespace. -ENOTTY not a pidfd, -ESRCH exited. */
int uprobe_pidfd_pid(int pidfd, pid_t *ret);

/*
 * May caller probe process p? owner is the owner of the process's
 * /proc/PID/status, which the kernel makes root (of the process's user
 * namespace) while the process is not dumpable. 0 yes; -EPERM no, -ESRCH it
 * has exited: with the reason in buf.
 */
int uprobe_process_refusal(const struct procfs_status *p, uid_t owner,
			   const struct policy_identity *caller, char *buf, size_t size);

/*
 * Worker: check req against the caller, open the uprobe perf event bound to
 * the process and link prog_fd to it: 0 with the link fd in *ret_link_fd,
 * > 0 with r made an error reply, or a negative errno (reply.h). desc gets a
 * description of the target for the log and the audit trail.
 */
int uprobe_attach(const struct uprobe_request *req, const struct policy_identity *caller,
		  int prog_fd, const char *prog_name, struct reply *r, char *desc, size_t desc_size,
		  int *ret_link_fd);

/*
 * For a perf event link that carries a uprobe (Linux 6.6 reports it):
 * "uprobe at file offset 0xOFFSET" (or uretprobe) in buf, else an empty
 * string.
 */
void uprobe_link_describe(int link_fd, char *buf, size_t size);
