/* SPDX-License-Identifier: MIT */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

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

/* key=value, quoting the value when it needs it; a NULL value is left out. */
static void put_field(FILE *f, const char *key, const char *value)
{
	bool plain = value[0] != '\0';

	for (const char *c = value; *c && plain; c++)
		plain = *c > ' ' && *c != '"' && *c != '\\' && *c != 0x7f;
	fprintf(f, " %s=", key);
	if (plain) {
		fputs(value, f);
		return;
	}
	fputc('"', f);
	for (const char *c = value; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if ((unsigned char)*c < ' ' || *c == 0x7f)
			fprintf(f, "\\x%02x", (unsigned char)*c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

void audit_log(const struct audit_record *r)
{
	int saved = errno;
	int prio = strcmp(r->decision, "allow") == 0 ? LOG_INFO : LOG_NOTICE;

	if (journal_available()) {
		sd_journal_send("MESSAGE=audit: %s %s uid=%u%s%s%s%s", r->event, r->decision,
				(unsigned)r->uid, r->object ? " object=" : "", or_empty(r->object),
				r->reason ? ": " : "", or_empty(r->reason), "PRIORITY=%i", prio,
				"SYSLOG_IDENTIFIER=bpfbrokerd", "BPFBROKER_EVENT=%s", r->event,
				"BPFBROKER_DECISION=%s", r->decision, "BPFBROKER_UID=%u",
				(unsigned)r->uid, "BPFBROKER_PID=%d", (int)r->pid,
				"BPFBROKER_OBJECT_SHA256=%s", or_empty(r->object_sha256),
				"BPFBROKER_OBJECT=%s", or_empty(r->object), "BPFBROKER_PROGRAMS=%s",
				or_empty(r->programs), "BPFBROKER_HELPER_CLASSES=%s",
				or_empty(r->helper_classes), "BPFBROKER_TARGET=%s",
				or_empty(r->target), "BPFBROKER_REASON=%s", or_empty(r->reason),
				"BPFBROKER_UNIT=%s", or_empty(r->unit), "BPFBROKER_USER_UNIT=%s",
				or_empty(r->user_unit), NULL);
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
