/* SPDX-License-Identifier: MIT */
/* The load's audit record: built with the reply, written (with the object's hash) after it. */
#include "job.h"

#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "common/sha256.h"
#include "daemon/shared/audit.h"
#include "load.h"
#include "policy/verdict.h"
#include "reply.h"

/* "name:type,..." of the programs that load, and the helper classes they use. */
static void job_describe_programs(const struct job *j, char *progs, size_t n_progs, char *classes,
				  size_t n_classes)
{
	uint64_t used = 0;
	size_t len = 0;

	progs[0] = classes[0] = '\0';
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];

		if (!p->load)
			continue;
		if (len < n_progs)
			len += (size_t)snprintf(progs + len, n_progs - len, "%s%s:%s",
						len ? "," : "", p->name ? p->name : "?",
						policy_prog_type_to_string(p->prog_type) ?: "?");
		for (size_t h = 0; h < p->n_helpers; h++) {
			int c = (int)helper_classify(p->helpers[h]);

			if (c >= 0 && c < 64)
				used |= 1ull << c;
		}
		if (p->n_kfuncs)
			used |= 1ull << HELPER_CLASS_KFUNC;
	}
	len = 0;
	for (int c = 0; c < 64 && c < _HELPER_CLASS_MAX; c++)
		if ((used & (1ull << c)) && len < n_classes)
			len += (size_t)snprintf(
				classes + len, n_classes - len, "%s%s", len ? "," : "",
				helper_class_to_string((enum helper_class)c) ?: "?");
}

/*
 * The load's audit record, kept until the reply is out: hashing a large
 * object takes milliseconds the client need not wait for (load_audit_flush()).
 */
static struct {
	bool set;
	struct audit_record a;
	uint8_t *object; /* taken from the job, hashed at flush */
	size_t object_size;
	bool object_mapped;
	char progs[1024], classes[512], object_name[AUDIT_OBJECT_SIZE], reason[1024], unit[256],
		user_unit[256];
} pending_audit;

/* Did the load keep anything that outlives its client (named, or a new map pinned by name)? */
static bool job_kept_state(const struct job *j)
{
	if (j->req.name && !j->req.check_only)
		return true;
	for (size_t i = 0; j->pin_created && i < j->desc.n_maps; i++)
		if (j->pin_created[i])
			return true;
	return false;
}

/* One audit record per request, whatever happened (see audit.h). */
void job_audit(struct job *j, struct reply *r)
{
	enum proto_error code = reply_error_code(r);
	const char *reason = NULL;
	struct audit_record *a = &pending_audit.a;

	*a = (struct audit_record){
		.event = j->req.check_only ? "check" : "load",
		.uid = j->id.uid,
		.pid = j->ident.pid,
	};
	/* The job's identity is gone by the time the record is written. */
	if (j->id.unit) {
		snprintf(pending_audit.unit, sizeof(pending_audit.unit), "%s", j->id.unit);
		a->unit = pending_audit.unit;
	}
	if (j->id.user_unit) {
		snprintf(pending_audit.user_unit, sizeof(pending_audit.user_unit), "%s",
			 j->id.user_unit);
		a->user_unit = pending_audit.user_unit;
	}
	pending_audit.object = TAKE_PTR(j->object);
	pending_audit.object_size = j->object_size;
	pending_audit.object_mapped = j->object_mapped;
	job_describe_programs(j, pending_audit.progs, sizeof(pending_audit.progs),
			      pending_audit.classes, sizeof(pending_audit.classes));
	a->programs = pending_audit.progs[0] ? pending_audit.progs : NULL;
	a->helper_classes = pending_audit.classes[0] ? pending_audit.classes : NULL;
	if (j->req.name) {
		audit_format_object(pending_audit.object_name, sizeof(pending_audit.object_name),
				    j->id.uid, j->req.name, NULL);
		a->object = pending_audit.object_name;
	}
	if (!code) {
		/* check: the verdict; load: it loaded. */
		a->decision = !j->req.check_only || (j->have_verdict && j->verdict.allowed)
				      ? "allow"
				      : "deny";
		if (j->req.check_only && j->have_verdict)
			reason = policy_verdict_first_reason(&j->verdict);
	} else {
		a->decision =
			code == PROTO_ERR_DENIED || code == PROTO_ERR_QUOTA ? "deny" : "error";
		reason = reply_error_message(r);
	}
	if (reason) {
		snprintf(pending_audit.reason, sizeof(pending_audit.reason), "%s", reason);
		a->reason = pending_audit.reason;
	}
	pending_audit.set = true;
	/*
	 * A load that kept something beyond the client (a named object, a map
	 * pinned by name): its record goes out before the reply, so that nothing
	 * after the commit (a kill at the time limit) leaves the change
	 * unrecorded. Others keep the hashing off the reply's path.
	 */
	if (job_kept_state(j))
		load_audit_flush();
}

void load_audit_flush(void)
{
	char sha[SHA256_HEX_SIZE];

	if (!pending_audit.set)
		return;
	if (pending_audit.object) {
		/* Without libcrypto's answer the record goes out without a digest, never a stale
		 * one. */
		if (sha256_hex(pending_audit.object, pending_audit.object_size, sha) >= 0)
			pending_audit.a.object_sha256 = sha;
	}
	audit_log(&pending_audit.a);
	object_release(pending_audit.object, pending_audit.object_size,
		       pending_audit.object_mapped);
	pending_audit.object = NULL;
	pending_audit.set = false;
}
