/* SPDX-License-Identifier: MIT */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "common/escape.h"

static bool force_stderr;

void audit_force_stderr(bool on)
{
	force_stderr = on;
}

/* journald listens here; without it sd_journal_send() would drop the record. */
static bool journal_available(void)
{
	return !force_stderr && access("/run/systemd/journal/socket", W_OK) == 0;
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

	if (journal_available()) {
		/*
		 * Structured fields. sd_journal_send() would send a value with a
		 * newline safely (as a binary field), but MESSAGE is what syslog
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
		sd_journal_send("MESSAGE=audit: %s %s uid=%u%s%s%s%s", e.event, e.decision,
				(unsigned)r->uid, r->object ? " object=" : "", e.object,
				r->reason ? ": " : "", e.reason, "PRIORITY=%i", prio,
				"SYSLOG_IDENTIFIER=bpfbrokerd", "BPFBROKER_EVENT=%s", e.event,
				"BPFBROKER_DECISION=%s", e.decision, "BPFBROKER_UID=%u",
				(unsigned)r->uid, "BPFBROKER_PID=%d", (int)r->pid,
				"BPFBROKER_OBJECT_SHA256=%s", e.sha, "BPFBROKER_OBJECT=%s",
				e.object, "BPFBROKER_PROGRAMS=%s", e.programs,
				"BPFBROKER_HELPER_CLASSES=%s", e.helpers, "BPFBROKER_TARGET=%s",
				e.target, "BPFBROKER_REASON=%s", e.reason, "BPFBROKER_UNIT=%s",
				e.unit, "BPFBROKER_USER_UNIT=%s", e.user_unit, NULL);
		errno = saved;
		return;
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
