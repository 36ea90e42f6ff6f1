/* SPDX-License-Identifier: MIT */
/*
 * apply-self's request to the watcher: "apply my unit's settings, and tell me when they are",
 * over a SOCK_SEQPACKET socket of the watcher's in the user's runtime directory. apply-self
 * runs inside its unit's control group, where the broker refuses the protected attach that
 * keeps the unit's processes from removing their rules; the watcher runs outside it.
 *
 * The watcher takes nothing from the request but an invocation id to compare: which unit
 * to apply for it reads from the manager by the peer's pid (SO_PEERCRED), and it answers
 * only its own uid's processes. So a process can at most have its own unit's settings
 * applied to its own unit, which the watcher does anyway.
 *
 * Wire: request "apply INVOCATION_ID" (one packet); answer "ERRNO MESSAGE" (one packet,
 * ERRNO 0 when applied, nothing to apply or only IPAccounting= failed (uncounted), else a
 * positive errno).
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

/* $XDG_RUNTIME_DIR/bpfbroker-user-net.sock, malloc'd; -ENXIO without an absolute runtime dir. */
int usernet_request_socket_path(char **ret);

/*
 * Answer one request from pid (a process of ours) for invocation_id: 0 with *ret_message
 * (malloc'd, or NULL) when the unit's settings are applied or it has none, -errno (the
 * message saying why) when not.
 */
typedef int (*usernet_request_handler_t)(pid_t pid, const char *invocation_id, char **ret_message,
					 void *userdata);

/* How long a connection may take to send its request before it is closed. */
#define USERNET_REQUEST_DEADLINE_USEC (10 * UINT64_C(1000000))
/* Connections open at once; more wait in the listen backlog until one is closed. */
#define USERNET_REQUEST_CONNECTIONS_MAX 64

/*
 * Bind the socket (a stale one of an earlier watcher replaced) and serve requests on e with
 * handler, one at a time (the handler runs to its end). A connection that has not sent its
 * request within deadline_usec is closed; with USERNET_REQUEST_CONNECTIONS_MAX open, new ones
 * wait until one is, so each silent connection holds one slot for at most deadline_usec. *ret is
 * the listening source (unref it to stop; before e). 0 or -errno.
 */
int usernet_request_listen(sd_event *e, usernet_request_handler_t handler, void *userdata,
			   uint64_t deadline_usec, sd_event_source **ret);

/*
 * apply-self's side: ask the watcher to apply the settings of the unit with invocation_id
 * (ours) and wait for the answer, printing its message on stderr. 0, or -errno: the watcher's
 * answer, or why it could not be asked (-ENOENT/-ECONNREFUSED: it does not run).
 */
int usernet_request_apply(const char *invocation_id);
