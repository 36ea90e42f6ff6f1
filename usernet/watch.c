/* SPDX-License-Identifier: MIT */
/* Follows the user manager's units and applies or removes their network settings. */
#include "usernet/watch.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "common/cgroupfs.h"
#include "common/macro.h"
#include "usernet/apply.h"
#include "usernet/request.h"
#include "usernet/unit.h"

/*
 * A unit invocation usernet_apply() was called for (successfully or not: not retried), or
 * skipped: a slice that contains our own control group (watch_apply()).
 */
struct applied {
	struct applied *next;
	char *path, *unit, *invocation_id, *cgroup_path;
	int result; /* usernet_apply()'s */
	/* Its settings restrict something (restricts()), or could not all be read: a failed
	 * apply fails its units; else (IPAccounting= alone) they run uncounted. */
	bool restricts;
	bool skipped;
};

struct watch {
	sd_bus *bus;
	struct applied *applied;
	char own_cgroup[PATH_MAX]; /* our control group's directory; "" if unknown */
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

	if (!a->skipped)
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

/* Whether u's control group is ours or an ancestor of ours. */
static bool contains_watcher(const struct watch *w, const struct usernet_unit *u)
{
	size_t n = strlen(u->cgroup_path);

	return w->own_cgroup[0] && strncmp(w->own_cgroup, u->cgroup_path, n) == 0 &&
	       (w->own_cgroup[n] == '\0' || w->own_cgroup[n] == '/');
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
	/*
	 * The broker refuses a protected attach from inside the target's control group, and
	 * stopping the unit would stop us (and -.slice is every unit): its own settings are
	 * not enforced (README, "Not covered"); the IP lists it passes down still are, on
	 * each unit in it.
	 */
	if (contains_watcher(w, u)) {
		a->skipped = true;
		fprintf(stderr,
			"%s: its own network settings are NOT enforced: it contains "
			"bpfbroker-user-net's own control group %s\n",
			u->name, w->own_cgroup);
		return 0;
	}
	/* A parent slice we could not read may have denied more: fail closed, as for a
	 * failed apply (settings_error, unit.h). */
	a->restricts = restricts(u) || u->settings_error < 0;
	a->result = u->settings_error < 0 ? u->settings_error : usernet_apply(&t, &u->settings);
	if (a->result < 0 && a->restricts)
		stop_unit(w, u->name);
	else if (a->result < 0)
		fprintf(stderr, "%s: IPAccounting= could not be applied; it runs uncounted\n",
			u->name);
	return 0;
}

/*
 * Read the unit at path, and its parent slices only if it runs in a control group (only then
 * are they applied: a signal for a stopped unit reads no more than the unit).
 */
static int watch_read(struct watch *w, const char *path, struct usernet_unit *ret)
{
	int k;

	k = usernet_unit_read_own(w->bus, path, ret);
	if (k >= 0 && usernet_unit_is_running(ret) && ret->cgroup_path)
		usernet_unit_read_slices(w->bus, ret);
	return k;
}

/* Bring what is applied for the unit at path in line with u, as read (watch_read()). */
static int watch_sync(struct watch *w, const char *path, const struct usernet_unit *u)
{
	struct applied **slot = applied_find(w, path);
	bool want;

	/*
	 * Never our own unit (DefaultIPAccounting=yes gives it a setting): the broker
	 * refuses a protected link from inside, and we would stop ourselves.
	 */
	want = usernet_unit_is_running(u) && u->cgroup_path &&
	       (u->settings.n > 0 || u->settings_error < 0) &&
	       strcmp(u->name, "bpfbroker-user-net.service") != 0;
	if (*slot && (!want || strcmp((*slot)->invocation_id, u->invocation_id) != 0))
		applied_remove(slot);
	if (want && !*applied_find(w, path))
		return watch_apply(w, path, u);
	return 0;
}

/* Look at the unit at path again and bring what is applied in line with it. */
static int watch_check(struct watch *w, const char *path)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	struct applied **slot = applied_find(w, path);
	bool runs;
	int k;

	k = usernet_unit_read_own(w->bus, path, &u);
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
	 * Running in the invocation already applied (or skipped), with settings of its own: it
	 * stays as it is whatever its slices say, so they are not read again (a start sends
	 * several signals). Without settings of its own its slices decide whether anything
	 * stays applied. Only a running unit's slices are read at all.
	 */
	runs = usernet_unit_is_running(&u) && u.cgroup_path;
	if (runs && *slot && u.settings.n > 0 &&
	    strcmp((*slot)->invocation_id, u.invocation_id) == 0)
		return 0;
	if (runs)
		usernet_unit_read_slices(w->bus, &u);
	return watch_sync(w, path, &u);
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
 * A parent slice with settings of its own, for a unit that is about to run: applied for the
 * invocation the unit was read with, now if we have not yet (its signal may not have come
 * yet). 0 with what was done in *ret (applied, skipped: it contains us, or only its
 * IPAccounting= failed: uncounted), else a failure with its message.
 */
static int slice_ensure(struct watch *w, const char *unit, const struct usernet_slice_ref *s,
			struct applied **ret, char **ret_message)
{
	struct applied *a = *applied_find(w, s->path);
	int k;

	if (!a || strcmp(a->invocation_id, s->invocation_id) != 0) {
		k = watch_check(w, s->path);
		if (k < 0)
			return answer(k, ret_message, "%s: cannot apply its slice %s: %s", unit,
				      s->name, strerror(-k));
		a = *applied_find(w, s->path);
	}
	if (!a || strcmp(a->invocation_id, s->invocation_id) != 0)
		return answer(-ESTALE, ret_message,
			      "%s: its slice %s does not run with invocation %s (any more)", unit,
			      s->name, s->invocation_id);
	if (a->result < 0 && a->restricts)
		return answer(a->result, ret_message,
			      "%s: bpfbroker-user-net.service could not apply the network settings "
			      "of its slice %s (its journal says why): %s",
			      unit, s->name, strerror(-a->result));
	*ret = a;
	return 0;
}

/*
 * What the answer adds for the slices slice_ensure() found skipped or uncounted, e.g. "; its
 * slice -.slice's own settings are NOT enforced (it contains bpfbroker-user-net)": "" for
 * none, NULL when out of memory.
 */
static char *slices_note(struct applied *const *slices, size_t n)
{
	_cleanup_free_ char *note = strdup("");

	for (size_t i = 0; note && i < n; i++) {
		const struct applied *a = slices[i];
		char *more = NULL;

		if (a->skipped &&
		    asprintf(&more,
			     "%s; its slice %s's own settings are NOT enforced (it contains "
			     "bpfbroker-user-net)",
			     note, a->unit) < 0)
			return NULL;
		if (!a->skipped && a->result < 0 &&
		    asprintf(&more, "%s; its slice %s runs uncounted (IPAccounting= failed: %s)",
			     note, a->unit, strerror(-a->result)) < 0)
			return NULL;
		if (more) {
			free(note);
			note = more;
		}
	}
	return TAKE_PTR(note);
}

/*
 * apply-self of the unit pid runs in asks us (request.h): bring the unit and its parent
 * slices with settings of their own in line as for a signal, and answer with the result for
 * that invocation.
 */
static int on_apply_request(pid_t pid, const char *invocation_id, char **ret_message,
			    void *userdata)
{
	struct watch *w = userdata;
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};
	_cleanup_free_ char *path = NULL, *note = NULL;
	_cleanup_free_ struct applied **slices = NULL;
	struct applied *a;
	int k;

	k = usernet_unit_path_by_pid(w->bus, pid, &path);
	if (k >= 0)
		k = watch_read(w, path, &u);
	if (k >= 0)
		k = watch_sync(w, path, &u);
	if (k < 0)
		return answer(k, ret_message,
			      "bpfbroker-user-net: cannot read the unit of pid %d: %s", (int)pid,
			      strerror(-k));
	if (strcmp(u.invocation_id, invocation_id) != 0 || !usernet_unit_is_running(&u))
		return answer(-ESTALE, ret_message,
			      "bpfbroker-user-net: invocation %s of pid %d's unit does not run "
			      "(any more)",
			      invocation_id, (int)pid);
	/* The kernel runs a slice's programs for the unit's sockets too: all in place first. */
	slices = calloc(u.n_own_slices, sizeof(*slices));
	if (!slices && u.n_own_slices > 0)
		return -ENOMEM;
	for (size_t i = 0; i < u.n_own_slices; i++) {
		k = slice_ensure(w, u.name, &u.own_slices[i], &slices[i], ret_message);
		if (k != 0)
			return k;
	}
	note = slices_note(slices, u.n_own_slices);
	if (!note)
		return -ENOMEM;
	if (u.settings.n == 0 && u.settings_error == 0)
		return u.n_own_slices == 0
			       ? 0
			       : answer(0, ret_message,
					"%s: bpfbroker-user-net.service applied the network "
					"settings of its slices%s",
					u.name, note);
	a = *applied_find(w, path);
	/* Not applied for this run: no control group, or it is our own unit. */
	if (!a || strcmp(a->invocation_id, invocation_id) != 0)
		return answer(-ESTALE, ret_message,
			      "%s: bpfbroker-user-net.service did not apply its network settings "
			      "to invocation %s",
			      u.name, invocation_id);
	if (a->result < 0 && a->restricts)
		return answer(a->result, ret_message,
			      "%s: bpfbroker-user-net.service could not apply its network "
			      "settings (its journal says why): %s",
			      a->unit, strerror(-a->result));
	/* IPAccounting= alone only counts: the unit runs, uncounted (README). */
	if (a->result < 0)
		return answer(0, ret_message,
			      "%s: IPAccounting= could not be applied (its journal says why): %s; "
			      "it runs uncounted%s",
			      a->unit, strerror(-a->result), note);
	if (a->skipped)
		return answer(0, ret_message, "%s: its own network settings are NOT enforced%s",
			      a->unit, note);
	return answer(0, ret_message,
		      "%s: bpfbroker-user-net.service applied its network settings to %s%s",
		      a->unit, a->cgroup_path, note);
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
		usernet_unit_read_own(w->bus, path, &u) >= 0;
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
	sigset_t mask;
	int k;

	/* Slices that contain us cannot be enforced (watch_apply()): know which they are. */
	k = cgroupfs_pid_dir(0, w.own_cgroup, sizeof(w.own_cgroup));
	if (k < 0) {
		fprintf(stderr, "cannot read my own control group: %s\n", strerror(-k));
		return k;
	}
	/* Stopped (SIGTERM, the manager's stop): a clean exit, 0. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	k = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
	if (k >= 0)
		k = sd_event_new(&e);
	if (k >= 0)
		k = sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL);
	if (k >= 0)
		k = sd_event_add_signal(e, NULL, SIGINT, NULL, NULL);
	if (k >= 0)
		k = sd_bus_attach_event(bus, e, SD_EVENT_PRIORITY_NORMAL);
	/* The manager gone (the user's session ends, or a daemon-reexec): so are we, with
	 * EXIT_FAILURE as sd-bus exits the loop, so that Restart=on-failure brings us back. */
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
	/* Ends with 0 on SIGTERM, non-zero when the manager closed the connection. */
	k = sd_event_loop(e);
	if (k > 0) {
		fprintf(stderr, "the user manager closed the connection\n");
		k = -ECONNRESET;
	}
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
