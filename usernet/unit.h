/* SPDX-License-Identifier: MIT */
/*
 * One unit of the user's service manager as this component needs it, read over sd-bus: its
 * name, invocation, state, control group and effective network settings (as unit-file
 * assignments, usernet/assign.h: its own combined with its parent slices', inherit.h). The
 * user manager keeps IPAddressAllow=, IPAddressDeny=, IPAccounting=,
 * RestrictNetworkInterfaces=, SocketBindAllow= and SocketBindDeny= and shows them on its
 * D-Bus API, although it cannot enforce them.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "usernet/assign.h"

/* The user manager on the bus: its name, its object and the interface of its methods. */
#define SD_DESTINATION "org.freedesktop.systemd1"
#define SD_MANAGER_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER_IFACE "org.freedesktop.systemd1.Manager"

/*
 * The most parent slices read for a unit: more is a loop (or a manager that lies). Slice
 * names spell their parents ("a-b-c.slice" is in "a-b.slice"), and a unit name is at most
 * 255 characters, so no real chain has more than 126 ("a-b-...-z.slice" and "-.slice").
 */
#define USERNET_SLICE_DEPTH_MAX 128

/*
 * A parent slice with settings of its own (RestrictNetworkInterfaces=, SocketBind*=,
 * IPAccounting=): applied to the slice's control group, and the kernel runs them for the
 * unit's sockets too, so they must be in place before the unit runs (inherit.h).
 */
struct usernet_slice_ref {
	char *name, *path, *invocation_id; /* path: its D-Bus object path */
};

struct usernet_unit {
	char *name; /* "foo.service" */
	char *invocation_id; /* 32 hex digits; "" when the unit has not run */
	char *active_state; /* "activating", "active", "inactive", ... */
	/* ControlGroup=, as the manager names it ("/user.slice/.../foo.service"), "" while
	 * the unit has no control group; and the same under the cgroup2 mount. */
	char *cgroup, *cgroup_path;
	char *slice; /* its parent slice ("app.slice"), "" for none */
	/*
	 * The network settings to enforce on its control group, e.g. "IPAddressDeny=0.0.0.0/0
	 * ::/0": its own and, unless it is a slice, its parent slices' IPAddressAllow= and
	 * IPAddressDeny= (settings.from names the slice). Empty when there are none (or its
	 * type has no control group).
	 */
	struct usernet_assignments settings;
	/* A slice's IPAddressAllow=/IPAddressDeny=: for the units in it, not for itself. */
	struct usernet_assignments passed_down;
	/*
	 * < 0 (-errno): a parent slice could not be read, so settings may lack entries it
	 * would have added; whoever would enforce them must fail closed (the unit must not
	 * run with fewer deny entries than it asks for).
	 */
	int settings_error;
	/* Its parent slices with settings of their own, innermost first (not for a slice). */
	struct usernet_slice_ref *own_slices;
	size_t n_own_slices;
};

void usernet_unit_done(struct usernet_unit *u);

/* Whether the unit runs (or is about to): activating, active, reloading or deactivating. */
bool usernet_unit_is_running(const struct usernet_unit *u);

/*
 * Read the unit at D-Bus object path from the manager, and its parent slices (up to
 * USERNET_SLICE_DEPTH_MAX of them) for its effective settings. Everything is read by method
 * calls, never taken from a signal. -EBADMSG (with a message on stderr) if a property has a
 * type other than systemd 252's. A parent slice that cannot be read does not fail the read:
 * it is in ret->settings_error.
 */
int usernet_unit_read(sd_bus *bus, const char *path, struct usernet_unit *ret);

/*
 * usernet_unit_read() in two steps, for a caller that needs the parent slices only for a unit
 * that runs: the unit with its own settings (a slice's split as usernet_unit_read() does),
 * then what its parent slices add (sets settings_error, own_slices; nothing for a slice).
 */
int usernet_unit_read_own(sd_bus *bus, const char *path, struct usernet_unit *ret);
void usernet_unit_read_slices(sd_bus *bus, struct usernet_unit *u);

/* The object path of the unit a process belongs to (Manager.GetUnitByPID). */
int usernet_unit_path_by_pid(sd_bus *bus, pid_t pid, char **ret);

/*
 * Connect to the calling user's service manager: its private socket
 * ($XDG_RUNTIME_DIR/systemd/private, as systemctl --user does; there from the manager's
 * start, no bus daemon needed), else the user bus.
 */
int usernet_bus_open(sd_bus **ret);

/* The object path of the unit with an invocation id (Manager.GetUnitByInvocationID; the
 * manager keeps it with the unit after it stops): -ENXIO or such, quietly, if none has it. */
int usernet_unit_path_by_invocation(sd_bus *bus, const char *invocation_id, char **ret);

/* The object path of a loaded unit by name (Manager.GetUnit): -ENOENT, quietly, if the
 * manager has no unit of that name loaded; other errors are printed. */
int usernet_unit_path_by_name(sd_bus *bus, const char *name, char **ret);
