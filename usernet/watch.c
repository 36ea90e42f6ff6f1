/* SPDX-License-Identifier: MIT */
/* Follows the user manager's units and applies or removes their network settings. */
#include "usernet/watch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "common/macro.h"
#include "usernet/apply.h"
#include "usernet/request.h"
#include "usernet/unit.h"

#define SD_DESTINATION "org.freedesktop.systemd1"
#define SD_MANAGER_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER_IFACE "org.freedesktop.systemd1.Manager"

/* A unit invocation usernet_apply() was called for (successfully or not: not retried). */
struct applied {
	struct applied *next;
	char *path, *unit, *invocation_id, *cgroup_path;
	int result; /* usernet_apply()'s */
};

struct watch {
	sd_bus *bus;
	struct applied *applied;
};

static void applied_free(struct applied *a)
{
	free(a->path);
	free(a->unit);
	free(a->invocation_id);
	free(a->cgroup_path);
	free(a);
}

static struct applied **applied_find(struct watch *w, const char *path)
{
	struct applied **a = &w->applied;

	while (*a && strcmp((*a)->path, path) != 0)
		a = &(*a)->next;
	return a;
}

static void applied_remove(struct applied **slot)
{
	struct applied *a = *slot;
	struct usernet_target t = {a->unit, a->invocation_id, a->cgroup_path};

	usernet_remove(&t);
	*slot = a->next;
	applied_free(a);
}

/* A unit we could not enforce on must not run unrestricted: fail closed. */
static void stop_unit(struct watch *w, const char *unit)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int k;

	fprintf(stderr, "%s: its network settings could not be applied; stopping it\n", unit);
	k = sd_bus_call_method(w->bus, SD_DESTINATION, SD_MANAGER_PATH, SD_MANAGER_IFACE,
			       "StopUnit", &error, NULL, "ss", unit, "replace");
	if (k < 0)
		fprintf(stderr, "%s: cannot stop it: %s\n", unit,
			error.message ? error.message : strerror(-k));
	sd_bus_error_free(&error);
}

/*
 * Whether u's settings restrict anything: IPAccounting= alone only counts, so a unit
 * whose accounting could not be applied still runs (it gives up nothing it asked for).
 */
static bool restricts(const struct usernet_unit *u)
{
	for (size_t i = 0; i < u->settings.n; i++)
		if (strncmp(u->settings.v[i], "IPAccounting=", strlen("IPAccounting=")) != 0)
			return true;
	return false;
}

static int watch_apply(struct watch *w, const char *path, const struct usernet_unit *u)
{
	struct usernet_target t = {u->name, u->invocation_id, u->cgroup_path};
	struct applied *a;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->path = strdup(path);
	a->unit = strdup(u->name);
	a->invocation_id = strdup(u->invocation_id);
	a->cgroup_path = strdup(u->cgroup_path);
	if (!a->path || !a->unit || !a->invocation_id || !a->cgroup_path) {
		applied_free(a);
		return -ENOMEM;
	}
	a->next = w->applied;
	w->applied = a;
	/* A parent slice we could not read may have denied more: fail closed, as for a
	 * failed apply (settings_error, unit.h). */
	a->result = u->settings_error < 0 ? u->settings_error : usernet_apply(&t, &u->settings);
	if (a->result < 0 && (restricts(u) || u->settings_error < 0))
		stop_unit(w, u->name);
	else if (a->result < 0)
		fprintf(stderr, "%s: IPAccounting= could not be applied; it runs uncounted\n",
			u->name);
	return 0;
}

/* Look at the unit at path again and bring what is applied in line with it. */
static int watch_check(struct watch *w, const char *path)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	struct applied **slot = applied_find(w, path);
	bool want;
	int k;

	k = usernet_unit_read(w->bus, path, &u);
	if (k < 0) {
		/*
		 * Unreadable (a unit that is gone reads as inactive: the manager loads it to
		 * answer): what is applied stays, as a unit that still runs must keep its rules;
		 * the next signal, or the stale-object sweep at our next start, removes them.
		 */
		if (*slot)
			fprintf(stderr, "%s: cannot read it (%s); its rules stay applied\n",
				(*slot)->unit, strerror(-k));
		return 0;
	}
	/*
	 * Never our own unit (DefaultIPAccounting=yes gives it a setting): the broker
	 * refuses a protected link from inside, and we would stop ourselves.
	 */
	want = usernet_unit_is_running(&u) && u.cgroup_path &&
	       (u.settings.n > 0 || u.settings_error < 0) &&
	       strcmp(u.name, "bpfbroker-user-net.service") != 0;
	if (*slot && (!want || strcmp((*slot)->invocation_id, u.invocation_id) != 0))
		applied_remove(slot);
	if (want && !*applied_find(w, path))
		return watch_apply(w, path, &u);
	return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	const char *iface;

	/* Only the Unit interface carries ActiveState; the type's interface changes with it. */
	if (sd_bus_message_read(m, "s", &iface) < 0 ||
	    strcmp(iface, "org.freedesktop.systemd1.Unit") != 0)
		return 0;
	return watch_check(userdata, sd_bus_message_get_path(m));
}

/* JobRemoved(u id, o job, s unit, s result): a start or stop has finished. */
static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct watch *w = userdata;
	_cleanup_free_ char *path = NULL;
	const char *job, *unit, *result;
	uint32_t id;

	if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0)
		return 0;
	/* The unit's path by systemd's escaping, not GetUnit: the unit may be gone already. */
	if (sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path) < 0)
		return -ENOMEM;
	return watch_check(w, path);
}

/*
 * UnitRemoved(s id, o path): unloaded, or only freed for a daemon-reload, which frees and
 * says so of every unit, running ones too (their rules must stay): read back, for what we
 * applied only. Read back, a unit that is gone is loaded to answer (inactive: its rules go)
 * and unloaded again, and that second UnitRemoved finds nothing applied: no loop.
 */
static int on_unit_removed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct watch *w = userdata;
	const char *unit, *path;

	if (sd_bus_message_read(m, "so", &unit, &path) < 0)
		return 0;
	return *applied_find(w, path) ? watch_check(w, path) : 0;
}

/* k with *ret_message: what on_apply_request() answers (-ENOMEM if it cannot say it). */
_printf_(3, 4) static int answer(int k, char **ret_message, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret_message, fmt, ap);
	va_end(ap);
	if (n < 0)
		*ret_message = NULL; /* undefined after a failure */
	return n < 0 ? -ENOMEM : k;
}

/*
 * apply-self of the unit pid runs in asks us (request.h): bring the unit in line as for a
 * signal, and answer with the result for that invocation.
 */
static int on_apply_request(pid_t pid, const char *invocation_id, char **ret_message,
			    void *userdata)
{
	struct watch *w = userdata;
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	_cleanup_free_ char *path = NULL;
	struct applied *a;
	int k;

	k = usernet_unit_path_by_pid(w->bus, pid, &path);
	if (k >= 0)
		k = watch_check(w, path);
	if (k < 0)
		return answer(k, ret_message,
			      "bpfbroker-user-net: cannot read the unit of pid %d: %s", (int)pid,
			      strerror(-k));
	a = *applied_find(w, path);
	if (a && strcmp(a->invocation_id, invocation_id) == 0) {
		if (a->result < 0)
			return answer(a->result, ret_message,
				      "%s: bpfbroker-user-net.service could not apply its network "
				      "settings (its journal says why): %s",
				      a->unit, strerror(-a->result));
		return answer(0, ret_message,
			      "%s: bpfbroker-user-net.service applied its network settings to %s",
			      a->unit, a->cgroup_path);
	}
	/* Nothing applied for it: no settings to apply, or not this run of the unit. */
	k = usernet_unit_read(w->bus, path, &u);
	if (k >= 0 && strcmp(u.invocation_id, invocation_id) == 0 && u.settings.n == 0 &&
	    u.settings_error == 0)
		return 0;
	return answer(-ESTALE, ret_message,
		      "bpfbroker-user-net: invocation %s of pid %d's unit does not run (any more)",
		      invocation_id, (int)pid);
}

/* An invocation the broker holds objects for: removed unless a unit runs with it. */
static int remove_if_stale(const char *invocation_id, void *userdata)
{
	struct watch *w = userdata;
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	_cleanup_free_ char *path = NULL;
	bool found;

	for (struct applied *a = w->applied; a; a = a->next)
		if (strcmp(a->invocation_id, invocation_id) == 0)
			return 0;
	/* The manager keeps an invocation id with its unit after it stops: check it runs. */
	found = usernet_unit_path_by_invocation(w->bus, invocation_id, &path) >= 0 &&
		usernet_unit_read(w->bus, path, &u) >= 0;
	if (found && usernet_unit_is_running(&u) && strcmp(u.invocation_id, invocation_id) == 0)
		return 0;
	usernet_remove(&(struct usernet_target){found ? u.name : "a stopped unit", invocation_id,
						found ? u.cgroup_path : NULL});
	return 0;
}

static int watch_subscribe(struct watch *w)
{
	/* On the user bus anyone may send signals: take them from the manager only (they
	 * only ever make us read again). The private socket has no other peer. */
	const char *sender = sd_bus_is_bus_client(w->bus) ? SD_DESTINATION : NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int k;

	k = sd_bus_match_signal(w->bus, NULL, sender, NULL, "org.freedesktop.DBus.Properties",
				"PropertiesChanged", on_properties_changed, w);
	if (k >= 0)
		k = sd_bus_match_signal(w->bus, NULL, sender, SD_MANAGER_PATH, SD_MANAGER_IFACE,
					"JobRemoved", on_job_removed, w);
	if (k >= 0)
		k = sd_bus_match_signal(w->bus, NULL, sender, SD_MANAGER_PATH, SD_MANAGER_IFACE,
					"UnitRemoved", on_unit_removed, w);
	if (k < 0)
		return k;
	k = sd_bus_call_method(w->bus, SD_DESTINATION, SD_MANAGER_PATH, SD_MANAGER_IFACE,
			       "Subscribe", &error, NULL, NULL);
	if (k < 0)
		fprintf(stderr, "Subscribe: %s\n", error.message ? error.message : strerror(-k));
	sd_bus_error_free(&error);
	return k;
}

/* The units that run already (started before us, or while we restarted). */
static int watch_scan(struct watch *w)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *name, *active, *path;
	int k;

	k = sd_bus_call_method(w->bus, SD_DESTINATION, SD_MANAGER_PATH, SD_MANAGER_IFACE,
			       "ListUnits", &error, &reply, NULL);
	if (k < 0) {
		fprintf(stderr, "ListUnits: %s\n", error.message ? error.message : strerror(-k));
		sd_bus_error_free(&error);
		return k;
	}
	k = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
	if (k < 0)
		return k;
	while ((k = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, &active, NULL,
					NULL, &path, NULL, NULL, NULL)) > 0) {
		if (strcmp(active, "inactive") == 0)
			continue;
		k = watch_check(w, path);
		if (k < 0)
			return k;
	}
	return k;
}

int usernet_watch(sd_bus *bus)
{
	_cleanup_(sd_event_unrefp) sd_event *e = NULL;
	_cleanup_(sd_event_source_unrefp) sd_event_source *listener = NULL;
	struct watch w = {.bus = bus};
	int k;

	k = sd_event_new(&e);
	if (k >= 0)
		k = sd_bus_attach_event(bus, e, SD_EVENT_PRIORITY_NORMAL);
	/* The manager gone (the user's session ends): so are we. */
	if (k >= 0)
		k = sd_bus_set_exit_on_disconnect(bus, true);
	if (k >= 0)
		k = watch_subscribe(&w);
	if (k >= 0)
		k = watch_scan(&w);
	if (k < 0)
		goto out;
	/* Units that stopped while no watcher ran left their objects: after the scan, which
	 * took in every unit that runs. A broker that does not answer now is no reason not to
	 * watch. */
	if (usernet_applied_each(remove_if_stale, &w) < 0)
		fprintf(stderr, "could not look for objects of units that stopped meanwhile\n");
	/* Before READY=1: units after us (basic.target) may ask at once. */
	k = usernet_request_listen(e, on_apply_request, &w, USERNET_REQUEST_DEADLINE_USEC,
				   &listener);
	if (k < 0) {
		fprintf(stderr, "cannot listen for apply-self: %s\n", strerror(-k));
		goto out;
	}
	fprintf(stderr, "watching the user manager's units%s\n",
		usernet_apply_enforces() ? "" : " (this build does not enforce: it logs)");
	sd_notify(0, "READY=1");
	/* Ends when the manager goes (the bus exits the loop with a code of its own). */
	k = sd_event_loop(e);
	if (k > 0)
		k = 0;
out:
	sd_bus_detach_event(bus);
	/* What stays applied stays: a unit outlives its watcher's restart restricted. */
	while (w.applied) {
		struct applied *a = w.applied;

		w.applied = a->next;
		applied_free(a);
	}
	return k;
}
