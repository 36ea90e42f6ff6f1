/* SPDX-License-Identifier: MIT */
/* The audit trail's records (audit.h): to journald's socket, connected once, or to stderr. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "common/escape.h"
#include "common/macro.h"

static bool force_stderr;

void audit_force_stderr(bool on)
{
	force_stderr = on;
}

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static const struct sockaddr_un journal_address = {.sun_family = AF_UNIX,
						   .sun_path = JOURNAL_SOCKET};

/*
 * journald's native protocol, which sd_journal_send() speaks: one datagram
 * of "KEY=value" lines. Spoken here so that workers need no libsystemd
 * (and its compression and crypto libraries) for their audit records. Every
 * value is escaped (no newline), so the simple form of a field suffices.
 *
 * A process's socket is decided once (audit_open()), which is also where
 * journald's presence is decided: a record then costs one send(), no
 * lookup of the path. The spawner's is connected before its system call
 * filter (audit_connect_journal()) and shared with its workers, which may
 * neither make nor connect nor address sockets (worker/sandbox.c); other
 * processes connect their own. -EBADF: records go to stderr. journal_owner
 * is the process that decided (a socket made, or stderr chosen); a forked
 * child decides again, unless the socket is the spawner's, which its
 * workers inherit on purpose.
 */
static int journal_fd = -EBADF;
static pid_t journal_owner;
static bool journal_inherited;

int audit_open(void)
{
	int fd;

	if (journal_inherited || journal_owner == getpid())
		return 0;
	journal_fd = -EBADF;
	if (force_stderr) {
		journal_owner = getpid();
		return 0;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	/*
	 * Undecided while no socket can be made (EMFILE, say): this record goes
	 * to stderr, the next one tries again.
	 */
	if (fd < 0)
		return -errno;
	journal_owner = getpid();
	/* No journald (a container, a test): the records go to stderr. */
	if (connect(fd, (const struct sockaddr *)&journal_address, sizeof(journal_address)) < 0) {
		safe_close(fd);
		return 0;
	}
	journal_fd = fd;
	return 0;
}

static int journal_send(const char *buf, size_t len)
{
	if (send(journal_fd, buf, len, MSG_NOSIGNAL) >= 0)
		return 0;
	/*
	 * journald restarted, so the socket we connected to is gone: its new one,
	 * by address (which needs no connect(); a worker's filter refuses it,
	 * which leaves the record to stderr).
	 */
	if (errno != ECONNREFUSED && errno != ENOTCONN)
		return -errno;
	if (sendto(journal_fd, buf, len, MSG_NOSIGNAL, (const struct sockaddr *)&journal_address,
		   sizeof(journal_address)) < 0)
		return -errno;
	return 0;
}

int audit_connect_journal(int at)
{
	int fd;

	/* Decided here for the spawner's workers too, journald or not: they can't. */
	journal_owner = getpid();
	journal_inherited = true;
	if (force_stderr || access(JOURNAL_SOCKET, W_OK) < 0)
		return -ENOENT;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&journal_address, sizeof(journal_address)) < 0 ||
	    (fd != at && dup3(fd, at, O_CLOEXEC) < 0)) {
		int k = -errno;

		close(fd);
		return k;
	}
	if (fd != at)
		close(fd);
	if (journal_fd >= 0 && journal_fd != at)
		close(journal_fd);
	journal_fd = at;
	return at;
}

bool audit_journal_connected(void)
{
	return journal_inherited && journal_fd >= 0;
}

/*
 * One value of a record, as much of it as a record keeps. Every value goes
 * through common/escape.h, whichever way the record goes out: a client's
 * string (an object or program name, a request parameter, libbpf's message
 * in a reason) can start no line, record or field of its own.
 */
#define AUDIT_VALUE_MAX 1024

/* key=value, quoting and escaping the value when it needs it. */
static void put_field(FILE *f, const char *key, const char *value)
{
	char buf[AUDIT_VALUE_MAX];

	if (escape_is_bare(value)) {
		fprintf(f, " %s=%s", key, escape_text(buf, sizeof(buf), value, 0));
		return;
	}
	fprintf(f, " %s=\"%s\"", key, escape_text(buf, sizeof(buf), value, ESCAPE_QUOTES));
}

void audit_format_object(char *buf, size_t size, uid_t caller, const char *ref, const char *program)
{
	const char *slash = program ? "/" : "", *prog = program ? program : "";

	if (!ref)
		buf[0] = '\0';
	else if (strchr(ref, '/'))
		snprintf(buf, size, "%.130s%s%.64s", ref, slash, prog);
	else
		snprintf(buf, size, "%u/%.128s%s%.64s", (unsigned)caller, ref, slash, prog);
}

void audit_log(const struct audit_record *r)
{
	int saved = errno;
	int prio = strcmp(r->decision, "allow") == 0 ? LOG_INFO : LOG_NOTICE;

	(void)audit_open(); /* at the first record, in a process that did not open it before */
	if (journal_fd >= 0 && !force_stderr) {
		/*
		 * Structured fields. The native protocol would carry a value with
		 * a newline safely (as a binary field), but MESSAGE is what syslog
		 * forwarding and "journalctl -o cat" print as lines, and every
		 * value is escaped alike, so each reads the same everywhere.
		 */
		struct {
			char event[64], decision[64], object[AUDIT_VALUE_MAX],
				reason[AUDIT_VALUE_MAX], sha[AUDIT_VALUE_MAX],
				programs[AUDIT_VALUE_MAX], helpers[AUDIT_VALUE_MAX],
				target[AUDIT_VALUE_MAX], unit[AUDIT_VALUE_MAX],
				user_unit[AUDIT_VALUE_MAX];
		} e;

		escape_text(e.event, sizeof(e.event), r->event, 0);
		escape_text(e.decision, sizeof(e.decision), r->decision, 0);
		escape_text(e.object, sizeof(e.object), r->object, 0);
		escape_text(e.reason, sizeof(e.reason), r->reason, 0);
		escape_text(e.sha, sizeof(e.sha), r->object_sha256, 0);
		escape_text(e.programs, sizeof(e.programs), r->programs, 0);
		escape_text(e.helpers, sizeof(e.helpers), r->helper_classes, 0);
		escape_text(e.target, sizeof(e.target), r->target, 0);
		escape_text(e.unit, sizeof(e.unit), r->unit, 0);
		escape_text(e.user_unit, sizeof(e.user_unit), r->user_unit, 0);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		int k = -ENOMEM;

		if (f) {
			fprintf(f,
				"MESSAGE=audit: %s %s uid=%u%s%s%s%s\nPRIORITY=%i\n"
				"SYSLOG_IDENTIFIER=bpfbrokerd\nBPFBROKER_EVENT=%s\n"
				"BPFBROKER_DECISION=%s\nBPFBROKER_UID=%u\nBPFBROKER_PID=%d\n"
				"BPFBROKER_OBJECT_SHA256=%s\nBPFBROKER_OBJECT=%s\n"
				"BPFBROKER_PROGRAMS=%s\nBPFBROKER_HELPER_CLASSES=%s\n"
				"BPFBROKER_TARGET=%s\nBPFBROKER_REASON=%s\nBPFBROKER_UNIT=%s\n"
				"BPFBROKER_USER_UNIT=%s\n",
				e.event, e.decision, (unsigned)r->uid, r->object ? " object=" : "",
				e.object, r->reason ? ": " : "", e.reason, prio, e.event,
				e.decision, (unsigned)r->uid, (int)r->pid, e.sha, e.object,
				e.programs, e.helpers, e.target, e.reason, e.unit, e.user_unit);
			if (fclose(f) == 0 && buf)
				k = journal_send(buf, len);
			free(buf);
		}
		if (k >= 0) {
			errno = saved;
			return;
		}
		/* journald went away or refused it: the record goes to stderr, not nowhere. */
	}
	/* One write per record, so lines from concurrent workers don't interleave. */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		char n[32];

		if (!f)
			return;
		fprintf(f, "<%d>audit:", prio);
		put_field(f, "event", r->event);
		put_field(f, "decision", r->decision);
		snprintf(n, sizeof(n), "%u", (unsigned)r->uid);
		put_field(f, "uid", n);
		snprintf(n, sizeof(n), "%d", (int)r->pid);
		put_field(f, "pid", n);
		/* Which broker process decided: a worker serves one connection (journald: _PID). */
		snprintf(n, sizeof(n), "%d", (int)getpid());
		put_field(f, "process", n);
		if (r->unit)
			put_field(f, "unit", r->unit);
		if (r->user_unit)
			put_field(f, "user_unit", r->user_unit);
		if (r->object_sha256)
			put_field(f, "object_sha256", r->object_sha256);
		if (r->object)
			put_field(f, "object", r->object);
		if (r->programs)
			put_field(f, "programs", r->programs);
		if (r->helper_classes)
			put_field(f, "helper_classes", r->helper_classes);
		if (r->target)
			put_field(f, "target", r->target);
		if (r->reason)
			put_field(f, "reason", r->reason);
		fputc('\n', f);
		if (fclose(f) == 0 && buf)
			(void)!write(STDERR_FILENO, buf, len);
		free(buf);
	}
	errno = saved;
}
