/* SPDX-License-Identifier: MIT */
/*
 * The stub of usernet_apply()/usernet_remove(): logs what it would apply and enforces
 * nothing, until the vetted network objects and the settings parser are joined in
 * (usernet/apply.h says what the real one must do).
 */
#include "usernet/apply.h"

#include <stdio.h>

bool usernet_apply_enforces(void)
{
	return false;
}

int usernet_apply(const struct usernet_target *t, char *const *settings)
{
	fprintf(stderr,
		"%s: would apply to %s (invocation %s, not enforced in this build):", t->unit,
		t->cgroup_path, t->invocation_id);
	for (char *const *s = settings; *s; s++)
		fprintf(stderr, " %s%s", *s, s[1] ? ";" : "");
	fputc('\n', stderr);
	return 0;
}

int usernet_remove(const struct usernet_target *t)
{
	fprintf(stderr, "%s: would remove from %s (invocation %s)\n", t->unit, t->cgroup_path,
		t->invocation_id);
	return 0;
}
