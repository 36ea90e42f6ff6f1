/* SPDX-License-Identifier: MIT */
/*
 * The check after libbpf relocated the programs: what goes to the kernel is still within the
 * grant.
 */
#include "job.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "denial.h"
#include "insns.h"
#include "inspect.h"
#include "proto/proto.h"
#include "reply.h"

/*
 * A program that, after relocation, does what (n times), which only the
 * helper class cls allows: refused unless the grant has cls.
 */
static int class_check(const struct job *j, struct reply *r, const char *name, size_t n,
		       enum helper_class cls, const char *what)
{
	char key[64];

	if (n == 0 || (j->grant->helper_classes & HELPER_CLASS_BIT(cls)))
		return 0;
	snprintf(key, sizeof(key), "helper_classes: %s", helper_class_to_string(cls));
	return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", name, key,
			    "program \"%s\" %s after relocation, which your policy does not allow",
			    name, what);
}

/*
 * Defense in depth: what libbpf handed the kernel (subprograms appended,
 * relocations applied) must still be within the grant. Our own call-graph
 * reading decided before loading; this re-checks it against libbpf's result.
 */
int job_post_load_check(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		_cleanup_(insns_summary_done) struct insns_summary sum = {};
		_cleanup_free_ char *error = NULL;
		struct bpf_program *prog = j->handles.programs[i];
		const struct bpf_insn *insns = bpf_program__insns(prog);
		size_t n = bpf_program__insn_cnt(prog);
		const char *name = j->desc.programs[i].name;
		int type = j->desc.programs[i].prog_type, k;

		if (!j->desc.programs[i].load || !insns)
			continue;
		k = inspect_insns_summary(insns, n, &sum, &error);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", name, NULL,
					    "program \"%s\" after relocation: %s", name,
					    error ? error : strerror(-k));
		for (size_t h = 0; h < sum.n_helpers; h++) {
			int id = sum.helpers[h];
			char key[64], buf[32];

			if (policy_grant_helper(j->grant, type, id))
				continue;
			snprintf(key, sizeof(key), "helper_classes: %s",
				 helper_class_to_string(
					 policy_helper_class_needed(j->grant, type, id, NULL))
					 ?: "unknown");
			return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", name, key,
					    "program \"%s\" calls %s after relocation (class "
					    "%s), which your policy does not allow",
					    name, helper_display_name(id, buf),
					    helper_class_to_string(helper_classify(id)));
		}
		k = class_check(j, r, name, sum.n_kfunc_calls, HELPER_CLASS_KFUNC, "calls a kfunc");
		if (k == 0)
			k = class_check(j, r, name, sum.n_kernel_refs,
					HELPER_CLASS_READ_KERNEL_MEMORY,
					"references a kernel symbol");
		if (k != 0)
			return k;
		if (n > j->grant->limits.max_insns_per_program) {
			char note[128];
			const char *key =
				policy_limit_key("max_insns_per_program", n, note, sizeof(note));

			return denial_reply(
				r, PROTO_ERR_DENIED, E2BIG, "program", name, key,
				"program \"%s\" has %zu instructions after relocation, over "
				"your limit of %llu%s",
				name, n, (unsigned long long)j->grant->limits.max_insns_per_program,
				note);
		}
	}
	return 0;
}
