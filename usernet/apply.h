/* SPDX-License-Identifier: MIT */
/*
 * What the component does with a unit's network settings: apply them to the unit's control
 * group through the broker, and take them away when the unit stops. The one place where
 * enforcement plugs in; everything else in usernet/ only finds units and reads settings.
 *
 * Contract for the implementation:
 *  - usernet_apply() makes the programs implementing settings (unit-file assignments,
 *    usernet/assign.h, e.g. "IPAddressDeny=0.0.0.0/0 ::/0", "SocketBindDeny=ipv4:tcp:22";
 *    its parent slices' IP lists among them) attached to cgroup_path (under the cgroup2
 *    mount; the unit's own control group, which the user owns since user@.service
 *    delegates it) before it returns 0.
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
 *
 * How it is done: the settings are parsed with net_settings_assign() (one that does not
 * parse refuses the unit: -EINVAL), and net_enforce_apply() (objects/net/net_enforce.h) loads
 * the vetted objects as named objects "net-unit-INVOCATION-ip|ifaces|bind" of the user and
 * attaches their programs to the cgroup pinned and protected, so that the unit's own
 * processes (the same uid) cannot detach them, unload them or write their maps. The broker
 * refuses a protected attach from inside the target cgroup, so usernet_apply() must run
 * outside the unit: in the watcher (its own unit). apply-self, which runs inside its unit
 * (ExecStartPre=), does not call it: it asks the watcher over the watcher's socket
 * (usernet/request.h) and waits for its answer; the unit's main process starts only after
 * the watcher has applied (no window), and fails to start if it could not (unless only
 * IPAccounting= failed, which restricts nothing: the unit runs uncounted).
 */
#pragma once

#include <stdbool.h>

#include "usernet/assign.h"

/* The tag of a unit's objects is this and its invocation id: "net-unit-INVOCATION-ip". */
#define USERNET_TAG_PREFIX "unit-"

struct usernet_target {
	const char *unit; /* "foo.service" */
	const char *invocation_id; /* 32 hex digits */
	const char *cgroup_path; /* "/sys/fs/cgroup/user.slice/.../foo.service" */
};

/* Whether usernet_apply() enforces anything in this build (false: it only logs). */
bool usernet_apply_enforces(void);

/*
 * Attach what settings (at least one; a unit's effective settings, its slices' entries
 * marked as theirs, unit.h) ask for to t->cgroup_path. A union of lists past what the
 * objects' maps hold is refused (-E2BIG, saying so), as is any setting that does not parse.
 */
int usernet_apply(const struct usernet_target *t, const struct usernet_assignments *settings);

/* Detach and unload what usernet_apply() attached for t. */
int usernet_remove(const struct usernet_target *t);

/*
 * Call f for the invocation id of each set of objects usernet_apply() made that the broker
 * holds for the calling user (the watcher's clean-up of units that stopped while it was
 * down); stops at f's first negative return. 0 or -errno.
 */
int usernet_applied_each(int (*f)(const char *invocation_id, void *userdata), void *userdata);
