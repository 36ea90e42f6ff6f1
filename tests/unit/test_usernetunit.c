// SPDX-License-Identifier: MIT
/*
 * Unit tests for usernet/unit.c against a fake user manager (sd-bus over a socketpair, a
 * forked child serving Manager.GetUnit and the units' properties): a unit's settings read
 * with its parent slices' IP lists added, a slice's own kept apart, and a slice chain that
 * cannot be read (a missing slice, a loop, none named) reported in settings_error for callers
 * to fail closed on, never as a unit with fewer entries and no error; a unit not loaded is -ENOENT,
 * quietly, for the caller to say in its terms.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/macro.h"
#include "usernet/unit.h"

#define UNIT_PREFIX "/org/freedesktop/systemd1/unit"

/* A unit of the fake manager: at most one IPv4 prefix per list. */
struct fake_unit {
	const char *name, *slice;
	bool accounting;
	uint8_t allow[4], allow_len; /* allow_len 0: none */
	bool deny_any;
};

static const struct fake_unit units[] = {
	{"x.service", "a.slice", .allow = {127, 0, 0, 2}, .allow_len = 32},
	{"a.slice", "b.slice", .deny_any = true},
	{"b.slice", "-.slice", .accounting = true, .allow = {10}, .allow_len = 8},
	{"-.slice", ""},
	{"bare.service", "a.slice"},
	{"broken.service", "missing.slice", .allow = {127, 0, 0, 2}, .allow_len = 32},
	{"loop.service", "loop.slice"},
	{"loop.slice", "loop.slice", .deny_any = true},
	{"noslice.service", ""},
};

static const struct fake_unit *fake_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strcmp(units[i].name, name) == 0)
			return &units[i];
	return NULL;
}

static int find_unit(sd_bus *bus, const char *path, const char *iface, void *userdata,
		     void **ret_found, sd_bus_error *error)
{
	_cleanup_free_ char *name = NULL;
	const struct fake_unit *u;

	if (sd_bus_path_decode(path, UNIT_PREFIX, &name) <= 0)
		return 0;
	u = fake_find(name);
	if (!u)
		return 0;
	*ret_found = (void *)u;
	return 1;
}

/* One (iayu): family, address, prefix length. */
static int append_prefix(sd_bus_message *m, int32_t family, const uint8_t *addr, size_t size,
			 uint32_t prefixlen)
{
	int k = sd_bus_message_open_container(m, 'r', "iayu");

	if (k >= 0)
		k = sd_bus_message_append(m, "i", family);
	if (k >= 0)
		k = sd_bus_message_append_array(m, 'y', addr, size);
	if (k >= 0)
		k = sd_bus_message_append(m, "u", prefixlen);
	if (k >= 0)
		k = sd_bus_message_close_container(m);
	return k;
}

static int get_prop(sd_bus *bus, const char *path, const char *iface, const char *prop,
		    sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	static const uint8_t id[16] = {1, 2, 3};
	static const uint8_t zero[16];
	const struct fake_unit *u = userdata;
	char cgroup[64];
	int k;

	if (strcmp(prop, "Id") == 0)
		return sd_bus_message_append(m, "s", u->name);
	if (strcmp(prop, "ActiveState") == 0)
		return sd_bus_message_append(m, "s", "active");
	if (strcmp(prop, "InvocationID") == 0)
		return sd_bus_message_append_array(m, 'y', id, sizeof(id));
	if (strcmp(prop, "Slice") == 0)
		return sd_bus_message_append(m, "s", u->slice);
	if (strcmp(prop, "ControlGroup") == 0) {
		snprintf(cgroup, sizeof(cgroup), "/%s", u->name);
		return sd_bus_message_append(m, "s", cgroup);
	}
	if (strcmp(prop, "IPAccounting") == 0)
		return sd_bus_message_append(m, "b", u->accounting);
	if (strcmp(prop, "RestrictNetworkInterfaces") == 0)
		return sd_bus_message_append(m, "(bas)", 0, 0);
	if (strncmp(prop, "SocketBind", 10) == 0)
		return sd_bus_message_append(m, "a(iiqq)", 0);
	/* IPAddressAllow, IPAddressDeny: a(iayu) */
	k = sd_bus_message_open_container(m, 'a', "(iayu)");
	if (k >= 0 && strcmp(prop, "IPAddressAllow") == 0 && u->allow_len)
		k = append_prefix(m, AF_INET, u->allow, 4, u->allow_len);
	if (k >= 0 && strcmp(prop, "IPAddressDeny") == 0 && u->deny_any)
		k = append_prefix(m, AF_INET, zero, 4, 0);
	if (k >= 0 && strcmp(prop, "IPAddressDeny") == 0 && u->deny_any)
		k = append_prefix(m, AF_INET6, zero, 16, 0);
	if (k >= 0)
		k = sd_bus_message_close_container(m);
	return k;
}

static const sd_bus_vtable unit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Id", "s", get_prop, 0, 0),
	SD_BUS_PROPERTY("ActiveState", "s", get_prop, 0, 0),
	SD_BUS_PROPERTY("InvocationID", "ay", get_prop, 0, 0),
	SD_BUS_VTABLE_END,
};

static const sd_bus_vtable cgroup_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Slice", "s", get_prop, 0, 0),
	SD_BUS_PROPERTY("ControlGroup", "s", get_prop, 0, 0),
	SD_BUS_PROPERTY("IPAccounting", "b", get_prop, 0, 0),
	SD_BUS_PROPERTY("IPAddressAllow", "a(iayu)", get_prop, 0, 0),
	SD_BUS_PROPERTY("IPAddressDeny", "a(iayu)", get_prop, 0, 0),
	SD_BUS_PROPERTY("RestrictNetworkInterfaces", "(bas)", get_prop, 0, 0),
	SD_BUS_PROPERTY("SocketBindAllow", "a(iiqq)", get_prop, 0, 0),
	SD_BUS_PROPERTY("SocketBindDeny", "a(iiqq)", get_prop, 0, 0),
	SD_BUS_VTABLE_END,
};

/* Manager.GetUnit(s name) -> o: NoSuchUnit for a unit the table has not. */
static int get_unit(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *path = NULL;
	const char *name;
	int k;

	k = sd_bus_message_read(m, "s", &name);
	if (k < 0)
		return k;
	/* Another refusal than not loaded, which the caller must still hear of. */
	if (strcmp(name, "denied.service") == 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied to %s.",
					 name);
	if (!fake_find(name))
		return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit",
					 "Unit %s not loaded.", name);
	k = sd_bus_path_encode(UNIT_PREFIX, name, &path);
	if (k < 0)
		return k;
	return sd_bus_reply_method_return(m, "o", path);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("GetUnit", "s", "o", get_unit, 0),
	SD_BUS_VTABLE_END,
};

/* The fake manager's side, in the child: serve until the client hangs up. */
__attribute__((noreturn)) static void serve(int fd)
{
	sd_bus *bus = NULL;
	sd_id128_t id = {};
	int k;

	k = sd_bus_new(&bus);
	if (k >= 0)
		k = sd_bus_set_fd(bus, fd, fd);
	if (k >= 0)
		k = sd_bus_set_server(bus, 1, id);
	if (k >= 0)
		k = sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1",
					     "org.freedesktop.systemd1.Manager", manager_vtable,
					     NULL);
	if (k >= 0)
		k = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX,
					       "org.freedesktop.systemd1.Unit", unit_vtable,
					       find_unit, NULL);
	if (k >= 0)
		k = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX,
					       "org.freedesktop.systemd1.Service", cgroup_vtable,
					       find_unit, NULL);
	if (k >= 0)
		k = sd_bus_add_fallback_vtable(bus, NULL, UNIT_PREFIX,
					       "org.freedesktop.systemd1.Slice", cgroup_vtable,
					       find_unit, NULL);
	if (k >= 0)
		k = sd_bus_start(bus);
	while (k >= 0) {
		k = sd_bus_process(bus, NULL);
		if (k == 0)
			k = sd_bus_wait(bus, UINT64_MAX);
	}
	_exit(k == -ECONNRESET || k == -ENOTCONN ? 0 : 1);
}

struct fake {
	sd_bus *bus;
	pid_t pid;
};

static int fake_setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	int fds[2];

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		close(fds[0]);
		serve(fds[1]);
	}
	close(fds[1]);
	assert_int_equal(sd_bus_new(&f->bus), 0);
	assert_int_equal(sd_bus_set_fd(f->bus, fds[0], fds[0]), 0);
	assert_int_equal(sd_bus_start(f->bus), 0);
	*state = f;
	return 0;
}

static int fake_teardown(void **state)
{
	struct fake *f = *state;
	int status;

	sd_bus_flush_close_unref(f->bus);
	assert_int_equal(waitpid(f->pid, &status, 0), f->pid);
	free(f);
	return 0;
}

static void read_unit(struct fake *f, const char *name, struct usernet_unit *ret)
{
	_cleanup_free_ char *path = NULL;

	assert_int_equal(usernet_unit_path_by_name(f->bus, name, &path), 0);
	assert_int_equal(usernet_unit_read(f->bus, path, ret), 0);
}

/* Its own list first, then each slice's up the chain, marked; the slices' other settings not. */
static void test_unit_with_slices(void **state)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};

	read_unit(*state, "x.service", &u);
	assert_string_equal(u.slice, "a.slice");
	assert_int_equal(u.settings_error, 0);
	assert_int_equal(u.settings.n, 3);
	assert_string_equal(u.settings.v[0], "IPAddressAllow=127.0.0.2/32");
	assert_null(u.settings.from[0]);
	assert_string_equal(u.settings.v[1], "IPAddressDeny=0.0.0.0/0 ::/0");
	assert_string_equal(u.settings.from[1], "a.slice");
	assert_string_equal(u.settings.v[2], "IPAddressAllow=10.0.0.0/8");
	assert_string_equal(u.settings.from[2], "b.slice");
	assert_int_equal(u.passed_down.n, 0);
}

/* Nothing of its own: its slices' lists are its settings (the watcher acts on it). */
static void test_unit_without_own(void **state)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};

	read_unit(*state, "bare.service", &u);
	assert_int_equal(u.settings_error, 0);
	assert_int_equal(u.settings.n, 2);
	assert_string_equal(u.settings.from[0], "a.slice");
	assert_string_equal(u.settings.from[1], "b.slice");
}

/* A slice: no IP access control of its own (for its units), the rest kept. */
static void test_slice(void **state)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};

	read_unit(*state, "b.slice", &u);
	assert_int_equal(u.settings_error, 0);
	assert_int_equal(u.settings.n, 1);
	assert_string_equal(u.settings.v[0], "IPAccounting=yes");
	assert_int_equal(u.passed_down.n, 1);
	assert_string_equal(u.passed_down.v[0], "IPAddressAllow=10.0.0.0/8");
	usernet_unit_done(&u);
	read_unit(*state, "a.slice", &u);
	assert_int_equal(u.settings.n, 0);
	assert_int_equal(u.passed_down.n, 1);
}

/* A slice that cannot be read, or a chain that does not end: an error to fail closed on. */
static void test_slice_unreadable(void **state)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};

	read_unit(*state, "broken.service", &u);
	assert_true(u.settings_error < 0);
	assert_string_equal(u.name, "broken.service");
	usernet_unit_done(&u);
	read_unit(*state, "loop.service", &u);
	assert_int_equal(u.settings_error, -ELOOP);
}

/*
 * A unit with a control group in no slice: its slices' lists cannot be known, an error to
 * fail closed on; the root slice, in none, is not one.
 */
static void test_no_slice(void **state)
{
	_cleanup_(usernet_unit_done) struct usernet_unit u = {};

	read_unit(*state, "noslice.service", &u);
	assert_int_equal(u.settings_error, -EBADMSG);
	usernet_unit_done(&u);
	read_unit(*state, "-.slice", &u);
	assert_string_equal(u.slice, "");
	assert_int_equal(u.settings_error, 0);
}

/* What usernet_unit_path_by_name(name) writes to stderr, into buf; its result into *k. */
static void capture_stderr(struct fake *f, const char *name, int *k, char *buf, size_t size)
{
	_cleanup_free_ char *path = NULL;
	int fd = memfd_create("stderr", MFD_CLOEXEC), saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	*k = usernet_unit_path_by_name(f->bus, name, &path);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_true(*k < 0 || path);
}

/* A unit not loaded: -ENOENT and nothing printed (the caller says it); other errors said. */
static void test_not_loaded(void **state)
{
	char out[512];
	int k;

	capture_stderr(*state, "nothere.service", &k, out, sizeof(out));
	assert_int_equal(k, -ENOENT);
	assert_string_equal(out, "");
	capture_stderr(*state, "denied.service", &k, out, sizeof(out));
	assert_true(k < 0);
	assert_non_null(strstr(out, "Access denied to denied.service."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_with_slices),
		cmocka_unit_test(test_unit_without_own),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_slice_unreadable),
		cmocka_unit_test(test_no_slice),
		cmocka_unit_test(test_not_loaded),
	};

	/* The client's end of a socketpair the child has closed: no SIGPIPE, an error. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, fake_setup, fake_teardown);
}
