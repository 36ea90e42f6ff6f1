/* SPDX-License-Identifier: MIT */
/*
 * What the component does with a unit's network settings: apply them to the unit's control
 * group through the broker, and take them away when the unit stops. The one place where
 * enforcement plugs in; everything else in usernet/ only finds units and reads settings.
 *
 * Contract for the implementation:
 *  - usernet_apply() makes the programs implementing settings (unit-file assignments,
 *    usernet/assign.h, e.g. "IPAddressDeny=0.0.0.0/0 ::/0", "SocketBindDeny=ipv4:tcp:22")
 *    attached to cgroup_path (under the cgroup2 mount; the unit's own control group, which
 *    the user owns since user@.service delegates it) before it returns 0.
 *  - It may be called more than once for one invocation of one unit: by `apply-self` in the
 *    unit's ExecStartPre= and again by the watcher when it sees the unit start. The second
 *    call must leave one set of programs (name the broker's objects after unit and
 *    invocation_id, and take "exists, same settings" as done).
 *  - A unit that restarts has a new invocation_id; the watcher calls usernet_remove() for
 *    the old one first.
 *  - usernet_remove() undoes usernet_apply() for that invocation; the control group may be
 *    gone already (the kernel detached the links with it; what is left to drop is the
 *    broker's named objects and pins). Removing what is not there is success.
 *  - Both return 0 or a negative errno, and say why on stderr (the journal).
 *  - Failing closed is the caller's business: apply-self exits non-zero (and the unit does
 *    not start) when usernet_apply() fails.
 */
#pragma once

#include <stdbool.h>

struct usernet_target {
	const char *unit; /* "foo.service" */
	const char *invocation_id; /* 32 hex digits */
	const char *cgroup_path; /* "/sys/fs/cgroup/user.slice/.../foo.service" */
};

/* Whether usernet_apply() enforces anything in this build (false: it only logs). */
bool usernet_apply_enforces(void);

/* Attach what settings (NULL-terminated, at least one) ask for to t->cgroup_path. */
int usernet_apply(const struct usernet_target *t, char *const *settings);

/* Detach and unload what usernet_apply() attached for t. */
int usernet_remove(const struct usernet_target *t);
