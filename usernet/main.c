/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-user-net: enforces the network settings of the calling user's --user units
 * (IPAddressAllow=, IPAddressDeny=, IPAccounting=, RestrictNetworkInterfaces=,
 * SocketBindAllow=, SocketBindDeny=) through bpfbroker; the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "usernet/apply.h"
#include "usernet/request.h"
#include "usernet/unit.h"
#include "usernet/watch.h"

static void usage(FILE *f)
{
	fputs("Usage: bpfbroker-user-net [COMMAND]\n"
	      "Enforce the network settings of your systemd --user units through bpfbroker.\n"
	      "\n"
	      "  watch           (default) follow the user manager's units: apply a unit's\n"
	      "                  settings to its control group when it starts, remove them\n"
	      "                  when it stops (bpfbroker-user-net.service runs this)\n"
	      "  apply-self      have the watcher apply the settings of the unit this process\n"
	      "                  runs in, and wait for it, before its main process starts\n"
	      "                  (ExecStartPre=, see bpfbroker-user-net.conf); exit 1 if they\n"
	      "                  cannot be applied, so the unit does not start\n"
	      "  show [UNIT]     the settings (its parent slices' marked) and control group\n"
	      "                  read for UNIT (default: mine)\n"
	      "  enforces        exit 0 if this build enforces the settings, 1 if it only logs\n",
	      f);
}

static void unit_print(const struct usernet_unit *u)
{
	printf("unit: %s\ninvocation: %s\nstate: %s\ncgroup: %s\n", u->name, u->invocation_id,
	       u->active_state, u->cgroup_path ? u->cgroup_path : "");
	for (size_t i = 0; i < u->settings.n; i++)
		if (u->settings.from[i])
			printf("setting: %s (from %s)\n", u->settings.v[i], u->settings.from[i]);
		else
			printf("setting: %s\n", u->settings.v[i]);
	/* A slice's IP lists: merged into its units', not applied to it (systemd's rule). */
	for (size_t i = 0; i < u->passed_down.n; i++)
		printf("for its units: %s\n", u->passed_down.v[i]);
}

/* Read the unit of name, or this process's own unit. */
static int read_unit(sd_bus *bus, const char *name, struct usernet_unit *ret)
{
	_cleanup_free_ char *path = NULL;
	int k;

	k = name ? usernet_unit_path_by_name(bus, name, &path)
		 : usernet_unit_path_by_pid(bus, getpid(), &path);
	if (k == -ENOENT && name)
		fprintf(stderr, "%s: not loaded in the service manager\n", name);
	if (k < 0)
		return k;
	return usernet_unit_read(bus, path, ret);
}

/*
 * We run in the unit's control group, where the broker refuses the protected attach that
 * keeps the unit's own processes from removing their rules: the watcher, outside it,
 * applies, and we wait for it (usernet/request.h). The unit's main process starts after.
 */
static int apply_self(sd_bus *bus)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	const char *invocation = getenv("INVOCATION_ID");
	int k;

	k = read_unit(bus, NULL, &u);
	if (k < 0)
		return k;
	/* Its slices' lists unknown: it may have some to apply, so it must not start. */
	if (u.settings_error < 0)
		return u.settings_error;
	/* Neither settings of its own nor a slice with some: nothing to wait for. A slice's
	 * own settings (RestrictNetworkInterfaces=, SocketBind*=) hold for its units too. */
	if (u.settings.n == 0 && u.n_own_slices == 0)
		return 0;
	/* The manager puts this invocation's id in our environment: a mismatch means we read
	 * some other run of the unit. */
	if (invocation && strcmp(invocation, u.invocation_id) != 0) {
		fprintf(stderr, "%s: invocation %s is not ours (%s)\n", u.name, u.invocation_id,
			invocation);
		return -ESTALE;
	}
	if (!u.cgroup_path) {
		fprintf(stderr, "%s: the manager names no control group for it\n", u.name);
		return -ENOENT;
	}
	return usernet_request_apply(u.invocation_id);
}

int main(int argc, char **argv)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	const char *cmd = argc > 1 ? argv[1] : "watch";
	int k;

	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "enforces") == 0 && argc == 2)
		return usernet_apply_enforces() ? 0 : 1;
	if (!(strcmp(cmd, "watch") == 0 && argc <= 2) &&
	    !(strcmp(cmd, "apply-self") == 0 && argc == 2) &&
	    !(strcmp(cmd, "show") == 0 && argc <= 3)) {
		usage(stderr);
		return 2;
	}
	k = usernet_bus_open(&bus);
	if (k < 0) {
		fprintf(stderr, "cannot connect to the user's service manager: %s\n", strerror(-k));
		return 1;
	}
	if (strcmp(cmd, "watch") == 0)
		k = usernet_watch(bus);
	else if (strcmp(cmd, "apply-self") == 0)
		k = apply_self(bus);
	else {
		_cleanup_(usernet_unit_done) struct usernet_unit u = {};

		k = read_unit(bus, argc > 2 ? argv[2] : NULL, &u);
		if (k >= 0)
			unit_print(&u);
		/* What it printed may lack a slice's entries (said on stderr): not a success. */
		if (k >= 0)
			k = u.settings_error;
	}
	if (k < 0) {
		fprintf(stderr, "bpfbroker-user-net %s: %s\n", cmd, strerror(-k));
		return 1;
	}
	return 0;
}
