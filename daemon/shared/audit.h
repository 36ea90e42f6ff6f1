/* SPDX-License-Identifier: MIT */
/*
 * The audit trail: every decision the broker makes (loads, checks, attaches,
 * detaches, unloads, fds, test runs, inserts, policy reloads), allowed or
 * denied, as one structured record. To the journal in its native protocol
 * (fields BPFBROKER_*) when journald is there, else one line on stderr:
 *   <5>audit: event=load decision=allow uid=65534 pid=12 process=34 object_sha256=... reason="..."
 * (pid: the client's; process: the broker's process that wrote it, a worker
 * or the event loop; the journal has it as _PID).
 * Values with spaces, quotes or backslashes are quoted. On both paths every
 * value is escaped (common/escape.h: bytes outside printable ASCII as \xNN,
 * backslashes doubled), so no client's text starts a line, record or field.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct audit_record {
	const char *event; /* "load", "check", "attach", "detach", "unload", "fds", ... */
	const char *decision; /* "allow", "deny" or "error" */
	uid_t uid;
	pid_t pid;
	const char *unit, *user_unit; /* the caller's systemd units as policies see them, or NULL */
	const char *object_sha256; /* of the ELF as received, or NULL */
	const char *object; /* named object "OWNER/NAME", or NULL */
	const char *programs; /* "name:type,name:type", or NULL */
	const char *helper_classes; /* "base,read_kernel_memory", or NULL */
	const char *target; /* attach target, or NULL */
	const char *reason; /* why (denials and errors), or NULL */
};

void audit_log(const struct audit_record *r);

/* Room for any audit_format_object() result, its NUL included. */
#define AUDIT_OBJECT_SIZE 200
/*
 * A record's "object": ref as the caller gave it ("OWNER/NAME", or "NAME"
 * of the caller's own, which becomes "UID/NAME"), and "/PROGRAM" if program
 * is not NULL; "" when ref is NULL. Each part is cut to a fixed length, so
 * that a client's long text can't crowd the rest of the record out.
 */
void audit_format_object(char *buf, size_t size, uid_t caller, const char *ref,
			 const char *program);
/* Send to stderr even where journald is (tests, foreground debugging). */
void audit_force_stderr(bool on);
/*
 * Decide where this process's records go, once: journald if its socket
 * accepts a connection now, else stderr. Idempotent; 0 also without
 * journald, -errno only when no socket could be made (EMFILE): nothing is
 * decided then, that record goes to stderr and the next call tries again.
 * The first record calls it where nobody did (the event loop); a
 * worker keeps the spawner's socket (audit_connect_journal() below), since
 * its filter allows it no socket of its own. A record never connects.
 * journald's coming later is seen by processes started later.
 */
int audit_open(void);
/*
 * The spawner, before its system call filter: a socket connected to
 * journald, if it is there, at fd at (SPAWN_JOURNAL_FD), for its own and its
 * workers' records; without journald, stderr for them all (a worker's
 * filter lets it make no socket). They inherit it (audit_open() keeps it), so it is
 * part of the state a worker checks against after each job
 * (worker/hygiene.h), and they send on it with no address: their filter
 * allows them neither connect() nor an address. Returns at, -ENOENT without
 * journald, or -errno.
 */
int audit_connect_journal(int at);
/* Whether this process's records go to a socket audit_connect_journal() made. */
bool audit_journal_connected(void);
