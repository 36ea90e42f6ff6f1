/* SPDX-License-Identifier: MIT */
/* Reads one unit's name, state, control group and network settings from the user manager. */
#include "usernet/unit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cgroupfs.h"
#include "common/hex.h"
#include "common/macro.h"
#include "usernet/inherit.h"

void usernet_unit_done(struct usernet_unit *u)
{
	free(u->name);
	free(u->invocation_id);
	free(u->active_state);
	free(u->cgroup);
	free(u->cgroup_path);
	free(u->slice);
	usernet_assignments_done(&u->settings);
	usernet_assignments_done(&u->passed_down);
	for (size_t i = 0; i < u->n_own_slices; i++) {
		free(u->own_slices[i].name);
		free(u->own_slices[i].path);
		free(u->own_slices[i].invocation_id);
	}
	free(u->own_slices);
	*u = (struct usernet_unit){};
}

bool usernet_unit_is_running(const struct usernet_unit *u)
{
	static const char *const running[] = {"activating", "active", "reloading", "deactivating"};

	for (size_t i = 0; i < ARRAY_SIZE(running); i++)
		if (u->active_state && strcmp(u->active_state, running[i]) == 0)
			return true;
	return false;
}

/* The D-Bus interface that carries a unit type's cgroup settings; NULL: the type has none. */
static const char *unit_cgroup_interface(const char *name)
{
	static const struct {
		const char *suffix, *iface;
	} types[] = {
		{".service", "org.freedesktop.systemd1.Service"},
		{".socket", "org.freedesktop.systemd1.Socket"},
		{".scope", "org.freedesktop.systemd1.Scope"},
		{".slice", "org.freedesktop.systemd1.Slice"},
		{".mount", "org.freedesktop.systemd1.Mount"},
		{".swap", "org.freedesktop.systemd1.Swap"},
	};
	const char *dot = strrchr(name, '.');

	for (size_t i = 0; dot && i < ARRAY_SIZE(types); i++)
		if (strcmp(dot, types[i].suffix) == 0)
			return types[i].iface;
	return NULL;
}

static int get_all(sd_bus *bus, const char *path, const char *iface, sd_bus_message **ret)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int k;

	k = sd_bus_call_method(bus, SD_DESTINATION, path, "org.freedesktop.DBus.Properties",
			       "GetAll", &error, ret, "s", iface);
	/* A unit unloaded meanwhile is no news to the watcher; the caller says so if it is. */
	if (k < 0 && !sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.UnknownObject"))
		fprintf(stderr, "GetAll(%s) on %s: %s\n", iface, path,
			error.message ? error.message : strerror(-k));
	sd_bus_error_free(&error);
	return k;
}

/* A string-like value (s, o) as a copy of its own. */
static int read_dup(sd_bus_message *m, char type, char **ret)
{
	const char *s;
	char *d;
	int k;

	k = sd_bus_message_read_basic(m, type, &s);
	if (k < 0)
		return k;
	d = strdup(s);
	if (!d)
		return -ENOMEM;
	*ret = d;
	return 0;
}

/* A string property into its field (a repeated one replaces the first). */
static int read_string(sd_bus_message *m, char **field)
{
	char *s;
	int k;

	k = read_dup(m, 's', &s);
	if (k < 0)
		return k;
	free(*field);
	*field = s;
	return 0;
}

static int read_invocation_id(sd_bus_message *m, char **ret)
{
	const uint8_t *id;
	size_t n;
	char *s;
	int k;

	k = sd_bus_message_read_array(m, 'y', (const void **)&id, &n);
	if (k < 0)
		return k;
	if (n != 0 && n != 16)
		return -EBADMSG;
	s = hex_encode(id, n);
	if (!s)
		return -ENOMEM;
	free(*ret);
	*ret = s;
	return 0;
}

/* IPAddressAllow=/IPAddressDeny=: a(iayu) */
static int read_prefixes(sd_bus_message *m, const char *name, struct usernet_assignments *a)
{
	_cleanup_free_ char *value = NULL;
	int k;

	k = sd_bus_message_enter_container(m, 'a', "(iayu)");
	if (k < 0)
		return k;
	while ((k = sd_bus_message_enter_container(m, 'r', "iayu")) > 0) {
		int32_t family;
		const void *addr;
		size_t size;
		uint32_t prefixlen;

		k = sd_bus_message_read(m, "i", &family);
		if (k >= 0)
			k = sd_bus_message_read_array(m, 'y', &addr, &size);
		if (k >= 0)
			k = sd_bus_message_read(m, "u", &prefixlen);
		if (k >= 0)
			k = usernet_append_prefix(&value, family, addr, size, prefixlen);
		if (k >= 0)
			k = sd_bus_message_exit_container(m);
		if (k < 0)
			return k;
	}
	if (k < 0)
		return k;
	k = sd_bus_message_exit_container(m);
	if (k < 0)
		return k;
	return value ? usernet_assignments_add(a, name, value) : 0;
}

/* SocketBindAllow=/SocketBindDeny=: a(iiqq), one assignment per rule */
static int read_bind_rules(sd_bus_message *m, const char *name, struct usernet_assignments *a)
{
	int32_t family, protocol;
	uint16_t nr_ports, port_min;
	int k;

	k = sd_bus_message_enter_container(m, 'a', "(iiqq)");
	if (k < 0)
		return k;
	while ((k = sd_bus_message_read(m, "(iiqq)", &family, &protocol, &nr_ports, &port_min)) >
	       0) {
		_cleanup_free_ char *rule = NULL;

		k = usernet_format_bind_rule(family, protocol, nr_ports, port_min, &rule);
		if (k >= 0)
			k = usernet_assignments_add(a, name, rule);
		if (k < 0)
			return k;
	}
	if (k < 0)
		return k;
	return sd_bus_message_exit_container(m);
}

/* RestrictNetworkInterfaces=: (bas), a deny list spelled with a leading "~" */
static int read_interfaces(sd_bus_message *m, const char *name, struct usernet_assignments *a)
{
	_cleanup_free_ char *value = NULL;
	const char *ifname;
	int allow_list, k;

	k = sd_bus_message_enter_container(m, 'r', "bas");
	if (k >= 0)
		k = sd_bus_message_read(m, "b", &allow_list);
	if (k >= 0)
		k = sd_bus_message_enter_container(m, 'a', "s");
	if (k < 0)
		return k;
	while ((k = sd_bus_message_read(m, "s", &ifname)) > 0) {
		if (!value && !allow_list)
			k = usernet_append_word(&value, "~");
		if (k >= 0)
			k = usernet_append_word(&value, ifname);
		if (k < 0)
			return k;
	}
	if (k >= 0)
		k = sd_bus_message_exit_container(m);
	if (k >= 0)
		k = sd_bus_message_exit_container(m);
	if (k < 0)
		return k;
	if (!value)
		return 0;
	/* "~ eth0" -> "~eth0": systemd's spelling */
	if (!allow_list)
		memmove(value + 1, value + 2, strlen(value + 2) + 1);
	return usernet_assignments_add(a, name, value);
}

enum prop_kind { PROP_STRING, PROP_INVOCATION, PROP_PREFIXES, PROP_BOOL, PROP_BINDS, PROP_IFACES };

struct prop {
	const char *name, *signature;
	enum prop_kind kind;
};

static int read_prop(sd_bus_message *m, const struct prop *p, struct usernet_unit *u)
{
	int b, k;

	switch (p->kind) {
	case PROP_STRING:
		if (strcmp(p->name, "Id") == 0)
			return read_string(m, &u->name);
		if (strcmp(p->name, "ActiveState") == 0)
			return read_string(m, &u->active_state);
		if (strcmp(p->name, "Slice") == 0)
			return read_string(m, &u->slice);
		return read_string(m, &u->cgroup);
	case PROP_INVOCATION:
		return read_invocation_id(m, &u->invocation_id);
	case PROP_PREFIXES:
		return read_prefixes(m, p->name, &u->settings);
	case PROP_BOOL:
		k = sd_bus_message_read(m, "b", &b);
		if (k < 0 || !b)
			return k;
		return usernet_assignments_add(&u->settings, p->name, "yes");
	case PROP_BINDS:
		return read_bind_rules(m, p->name, &u->settings);
	case PROP_IFACES:
		return read_interfaces(m, p->name, &u->settings);
	}
	return -EINVAL;
}

/* Walk a GetAll reply (a{sv}) and read the properties of table, checking their types. */
static int read_props(sd_bus_message *m, const struct prop *table, size_t n, const char *path,
		      struct usernet_unit *u)
{
	const char *key;
	int k;

	k = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (k < 0)
		return k;
	while ((k = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const struct prop *p = NULL;
		const char *contents;

		k = sd_bus_message_read(m, "s", &key);
		if (k < 0)
			return k;
		for (size_t i = 0; i < n && !p; i++)
			if (strcmp(table[i].name, key) == 0)
				p = &table[i];
		if (!p) {
			k = sd_bus_message_skip(m, "v");
		} else {
			k = sd_bus_message_peek_type(m, NULL, &contents);
			if (k >= 0 && strcmp(contents, p->signature) != 0) {
				fprintf(stderr, "%s: property %s has type %s, not %s\n", path, key,
					contents, p->signature);
				return -EBADMSG;
			}
			if (k >= 0)
				k = sd_bus_message_enter_container(m, 'v', p->signature);
			if (k >= 0)
				k = read_prop(m, p, u);
			if (k >= 0)
				k = sd_bus_message_exit_container(m);
		}
		if (k >= 0)
			k = sd_bus_message_exit_container(m);
		if (k < 0)
			return k;
	}
	if (k < 0)
		return k;
	return sd_bus_message_exit_container(m);
}

static const struct prop unit_props[] = {
	{"Id", "s", PROP_STRING},
	{"ActiveState", "s", PROP_STRING},
	{"InvocationID", "ay", PROP_INVOCATION},
};

/* Read in the order the manager sends them; none depends on another. */
static const struct prop cgroup_props[] = {
	{"Slice", "s", PROP_STRING}, /* on the type's interface, with the cgroup settings */
	{"ControlGroup", "s", PROP_STRING},
	{"IPAccounting", "b", PROP_BOOL},
	{"IPAddressAllow", "a(iayu)", PROP_PREFIXES},
	{"IPAddressDeny", "a(iayu)", PROP_PREFIXES},
	{"RestrictNetworkInterfaces", "(bas)", PROP_IFACES},
	{"SocketBindAllow", "a(iiqq)", PROP_BINDS},
	{"SocketBindDeny", "a(iiqq)", PROP_BINDS},
};

static bool is_slice(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && strcmp(dot, ".slice") == 0;
}

/* The unit at path with its own settings only. */
static int unit_read_own(sd_bus *bus, const char *path, struct usernet_unit *ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct usernet_unit u = {};
	char dir[PATH_MAX];
	const char *iface;
	int k;

	k = get_all(bus, path, "org.freedesktop.systemd1.Unit", &reply);
	if (k >= 0)
		k = read_props(reply, unit_props, ARRAY_SIZE(unit_props), path, &u);
	if (k >= 0 && (!u.name || !u.active_state || !u.invocation_id))
		k = -EBADMSG;
	iface = k >= 0 ? unit_cgroup_interface(u.name) : NULL;
	if (iface) {
		reply = sd_bus_message_unref(reply);
		k = get_all(bus, path, iface, &reply);
		if (k >= 0)
			k = read_props(reply, cgroup_props, ARRAY_SIZE(cgroup_props), path, &u);
	}
	if (k >= 0 && !u.cgroup)
		u.cgroup = strdup("");
	if (k >= 0 && !u.slice)
		u.slice = strdup("");
	if (k >= 0 && (!u.cgroup || !u.slice))
		k = -ENOMEM;
	/* ControlGroup= is a path below the cgroup2 mount (common/cgroupfs.h, checked there). */
	if (k >= 0 && u.cgroup[0])
		k = cgroupfs_join(u.cgroup, dir, sizeof(dir));
	if (k >= 0 && u.cgroup[0] && !(u.cgroup_path = strdup(dir)))
		k = -ENOMEM;
	if (k < 0) {
		usernet_unit_done(&u);
		return k;
	}
	*ret = u;
	return 0;
}

/* Whether a slice's settings as read have any for its own control group. */
static bool has_own_settings(const struct usernet_assignments *settings)
{
	for (size_t i = 0; i < settings->n; i++)
		if (!usernet_setting_passes_down(settings->v[i]))
			return true;
	return false;
}

/* Note slice s (at path) in u->own_slices, taking its name and invocation id. */
static int own_slices_push(struct usernet_unit *u, struct usernet_unit *s, char **path)
{
	struct usernet_slice_ref *v;

	v = reallocarray(u->own_slices, u->n_own_slices + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	u->own_slices = v;
	v[u->n_own_slices++] = (struct usernet_slice_ref){TAKE_PTR(s->name), TAKE_PTR(*path),
							  TAKE_PTR(s->invocation_id)};
	return 0;
}

/*
 * Add what u's parent slices pass down to u's settings, and note those with settings of
 * their own in u->own_slices, walking up from u->slice: -errno
 * (said on stderr) if one cannot be read. A unit's slice is loaded while the unit is (the
 * manager keeps it so), so this fails only on a broken bus, a manager that answers wrongly
 * or a chain past USERNET_SLICE_DEPTH_MAX.
 */
static int unit_inherit(sd_bus *bus, struct usernet_unit *u)
{
	_cleanup_free_ char *slice = strdup(u->slice);
	int k;

	if (!slice)
		return -ENOMEM;
	for (unsigned depth = 0; slice[0]; depth++) {
		_cleanup_(usernet_unit_done) struct usernet_unit s = {};
		_cleanup_free_ char *path = NULL;

		if (depth == USERNET_SLICE_DEPTH_MAX) {
			fprintf(stderr, "%s: more than %d parent slices (a loop?)\n", u->name,
				USERNET_SLICE_DEPTH_MAX);
			return -ELOOP;
		}
		k = usernet_unit_path_by_name(bus, slice, &path);
		if (k >= 0)
			k = unit_read_own(bus, path, &s);
		/* What the manager calls a unit's slice is one, named as asked. */
		if (k >= 0 && (!is_slice(s.name) || strcmp(s.name, slice) != 0))
			k = -EBADMSG;
		if (k >= 0)
			k = usernet_inherit(&u->settings, &s.settings, s.name);
		if (k < 0) {
			fprintf(stderr, "%s: cannot read its parent slice %s: %s\n", u->name, slice,
				strerror(-k));
			return k;
		}
		free(slice);
		slice = TAKE_PTR(s.slice);
		if (has_own_settings(&s.settings)) {
			k = own_slices_push(u, &s, &path);
			if (k < 0)
				return k;
		}
	}
	return 0;
}

int usernet_unit_read_own(sd_bus *bus, const char *path, struct usernet_unit *ret)
{
	struct usernet_unit u = {};
	int k;

	k = unit_read_own(bus, path, &u);
	if (k < 0)
		return k;
	/* A slice keeps its IP lists for its units (inherit.h). */
	if (is_slice(u.name))
		k = usernet_slice_split(&u.settings, &u.passed_down);
	if (k < 0) {
		usernet_unit_done(&u);
		return k;
	}
	*ret = u;
	return 0;
}

void usernet_unit_read_slices(sd_bus *bus, struct usernet_unit *u)
{
	/* A unit of a type with a control group takes its slices'; units of other types have
	 * no settings. */
	if (is_slice(u->name) || !unit_cgroup_interface(u->name))
		return;
	/*
	 * The manager puts every such unit in a slice once loaded (-.slice, the root, is a
	 * slice): one that has a control group and names none would lose its slices' IP
	 * lists unseen. (A unit that is not found has neither.)
	 */
	if (u->cgroup[0] && !u->slice[0]) {
		fprintf(stderr, "%s: the manager names no slice for it\n", u->name);
		u->settings_error = -EBADMSG;
		return;
	}
	u->settings_error = unit_inherit(bus, u);
}

int usernet_unit_read(sd_bus *bus, const char *path, struct usernet_unit *ret)
{
	int k;

	k = usernet_unit_read_own(bus, path, ret);
	if (k < 0)
		return k;
	usernet_unit_read_slices(bus, ret);
	return 0;
}

/*
 * Call a Manager method that takes one argument and answers with an object path; its
 * error is printed unless it is named quiet (NULL: none is), which the caller says.
 */
static int manager_get_path(sd_bus *bus, const char *method, const char *signature, const void *arg,
			    const char *quiet, char **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	int k;

	k = signature[0] == 'u'
		    ? sd_bus_call_method(bus, SD_DESTINATION, SD_MANAGER_PATH, SD_MANAGER_IFACE,
					 method, &error, &reply, "u", *(const uint32_t *)arg)
		    : sd_bus_call_method(bus, SD_DESTINATION, SD_MANAGER_PATH, SD_MANAGER_IFACE,
					 method, &error, &reply, "s", (const char *)arg);
	if (k < 0) {
		if (!quiet || !sd_bus_error_has_name(&error, quiet))
			fprintf(stderr, "%s: %s\n", method,
				error.message ? error.message : strerror(-k));
		sd_bus_error_free(&error);
		return k;
	}
	return read_dup(reply, 'o', ret);
}

int usernet_unit_path_by_pid(sd_bus *bus, pid_t pid, char **ret)
{
	uint32_t p = (uint32_t)pid;

	return manager_get_path(bus, "GetUnitByPID", "u", &p, NULL, ret);
}

int usernet_unit_path_by_name(sd_bus *bus, const char *name, char **ret)
{
	/* Not loaded (-ENOENT): the caller's message says it in its terms. */
	return manager_get_path(bus, "GetUnit", "s", name, "org.freedesktop.systemd1.NoSuchUnit",
				ret);
}

int usernet_unit_path_by_invocation(sd_bus *bus, const char *invocation_id, char **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ uint8_t *id = NULL;
	size_t n = 0;
	int k;

	/* 16 bytes, as the manager's InvocationID is. */
	if (strlen(invocation_id) != 32 || hex_decode(invocation_id, 32, &id, &n) < 0 || n != 16)
		return -EINVAL;
	k = sd_bus_message_new_method_call(bus, &m, SD_DESTINATION, SD_MANAGER_PATH,
					   SD_MANAGER_IFACE, "GetUnitByInvocationID");
	if (k >= 0)
		k = sd_bus_message_append_array(m, 'y', id, n);
	if (k >= 0)
		k = sd_bus_call(bus, m, 0, &error, &reply);
	/* No unit has it (any more): not worth a line in the journal. */
	if (k < 0 &&
	    !sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoUnitForInvocationID"))
		fprintf(stderr, "GetUnitByInvocationID: %s\n",
			error.message ? error.message : strerror(-k));
	sd_bus_error_free(&error);
	if (k < 0)
		return k;
	return read_dup(reply, 'o', ret);
}

int usernet_bus_open(sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_free_ char *address = NULL;
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	int k;

	if (runtime && runtime[0] == '/') {
		if (asprintf(&address, "unix:path=%s/systemd/private", runtime) < 0)
			return -ENOMEM;
		k = sd_bus_new(&bus);
		if (k >= 0)
			k = sd_bus_set_address(bus, address);
		if (k >= 0)
			k = sd_bus_start(bus);
		if (k >= 0) {
			*ret = TAKE_PTR(bus);
			return 0;
		}
		bus = sd_bus_flush_close_unref(bus);
	}
	k = sd_bus_open_user(&bus);
	if (k < 0)
		return k;
	*ret = TAKE_PTR(bus);
	return 0;
}
