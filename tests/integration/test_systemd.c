/* SPDX-License-Identifier: MIT */
/*
 * The daemon as systemd runs it, without systemd as PID 1: started on the
 * first connection by systemd-socket-activate, which passes the listening
 * socket as bpfbrokerd.socket would, with a notify socket of ours to read
 * its sd_notify() messages; and the per-user service example, whose unit's
 * ExecStart line runs as an unprivileged user against a broker.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"

#define UID_NOBODY 65534

static const struct user nobody = {UID_NOBODY, UID_NOBODY};

static const char *socket_activate(void)
{
	static const char *const candidates[] = {"/usr/bin/systemd-socket-activate",
						 "/bin/systemd-socket-activate",
						 "/usr/lib/systemd/systemd-socket-activate"};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

/* ---- the notify socket: what the daemon tells its service manager ---- */

static int notify_fd = -1;
static char notify_path[100]; /* fits sun_path */

static int notify_open(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(notify_path, sizeof(notify_path), "%s/notify.sock", H.dir);
	memcpy(sa.sun_path, notify_path, sizeof(notify_path));
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (notify_fd < 0 || bind(notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* Wait (up to 10 s) for a datagram that holds the line want, such as "READY=1". */
static int notify_expect(const char *want)
{
	for (int i = 0; i < 100; i++) {
		struct pollfd p = {.fd = notify_fd, .events = POLLIN};
		char buf[512];
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return -errno;
		buf[n] = '\0';
		for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			if (strcmp(line, want) == 0)
				return 0;
	}
	fprintf(stderr, "no %s from the daemon\n", want);
	return -ETIMEDOUT;
}

/* Nothing queued on the notify socket right now. */
static bool notify_quiet(void)
{
	struct pollfd p = {.fd = notify_fd, .events = POLLIN};

	return poll(&p, 1, 0) == 0;
}

/* ---- socket activation ---- */

static void test_socket_activation(void **state)
{
	char out[4096], obj[512], exe[512], unused[128], path[64], target[512];
	const char *run[] = {"run", obj, "--", exe, NULL};
	const char *activate = socket_activate();
	ssize_t n;

	if (!activate)
		skip();
	snprintf(obj, sizeof(obj), "%s/examples/count_packets.bpf.o", H.build_dir);
	snprintf(exe, sizeof(exe), "%s/examples/socket-counter", H.build_dir);
	/* The daemon must use the socket it is passed, not --socket. */
	snprintf(unused, sizeof(unused), "%s/unused.sock", H.dir);
	unlink(H.socket);
	assert_int_equal(harness_start_activated(activate, true, notify_path, unused, NULL), 0);
	/* Listening, but not started: nothing has connected yet. */
	assert_true(notify_quiet());

	/* The first connection, an unprivileged client's load, starts the daemon. */
	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), run), 0);
	assert_non_null(strstr(out, "counted 3 packets"));
	assert_int_equal(notify_expect("READY=1"), 0);
	assert_int_equal(access(unused, F_OK), -1);

	/* The activator exec'd the daemon in its own place, as systemd's service would be. */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)H.daemon);
	n = readlink(path, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_non_null(strstr(target, "/bpfbrokerd"));

	/* Reload (systemctl reload sends SIGHUP): RELOADING=1, then READY=1 again. */
	kill(H.daemon, SIGHUP);
	assert_int_equal(notify_expect("RELOADING=1"), 0);
	assert_int_equal(notify_expect("READY=1"), 0);
	assert_int_equal(harness_bpfctl(&nobody, out, sizeof(out), run), 0);

	/* Stop: STOPPING=1 and a clean exit. */
	kill(H.daemon, SIGTERM);
	assert_int_equal(notify_expect("STOPPING=1"), 0);
	assert_int_equal(harness_wait_death(), 0);
}

static void test_stream_socket_refused(void **state)
{
	char log[128], text[8192] = "";
	const char *activate = socket_activate();
	FILE *f;

	if (!activate)
		skip();
	snprintf(log, sizeof(log), "%s/daemon-stream.log", H.dir);
	H.daemon_log = log;
	unlink(H.socket);
	/* A SOCK_STREAM socket (ListenStream= by mistake): refused, not served wrongly. */
	assert_int_equal(harness_start_activated(activate, false, NULL, H.socket, NULL), 0);
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", H.socket);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(fd);
	}
	/* Exit status 1 (EXIT_FAILURE), as a wait status. */
	assert_int_equal(harness_wait_death(), 1 << 8);
	H.daemon_log = NULL;
	f = fopen(log, "re");
	assert_non_null(f);
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "is not a listening AF_UNIX SOCK_SEQPACKET socket"));
}

/* ---- the per-user service example: netmon.service's ExecStart line ---- */

/*
 * The ExecStart= command line of a unit file, split into words. The test
 * runs it as it is, so it refuses what it would have to interpret like
 * systemd (quotes, specifiers, variables, prefixes such as "-" or "+").
 */
static int unit_exec_start(const char *unit, char *buf, size_t size, char **argv, int max)
{
	FILE *f = fopen(unit, "re");
	char line[1024];
	int n = 0;

	if (!f)
		return -errno;
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "ExecStart=", 10) == 0) {
			if (buf[0]) {
				fclose(f);
				return -E2BIG; /* several ExecStart= */
			}
			snprintf(buf, size, "%s", line + 10);
			buf[strcspn(buf, "\n")] = '\0';
		}
	fclose(f);
	if (!buf[0] || buf[0] != '/' || strpbrk(buf, "\"'\\$%;"))
		return -EINVAL;
	for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w && n < max - 1;
	     w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

struct netmon_run {
	char *argv[32];
	char output[8192];
};

/* Read netmon's stdout into r->output until it holds want (or 10 s pass). */
static int output_expect(int fd, struct netmon_run *r, const char *want)
{
	size_t len = strlen(r->output);

	for (int i = 0; i < 100 && !strstr(r->output, want); i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, r->output + len, sizeof(r->output) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		r->output[len] = '\0';
	}
	return strstr(r->output, want) ? 0 : -ETIMEDOUT;
}

/* As nobody, in a network namespace of our own (so port 5140 is surely free). */
static int client_netmon(void *arg)
{
	struct netmon_run *r = arg;
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(5140),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int p[2], s, status;
	pid_t pid;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe: %m");
	pid = fork();
	CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		/* What systemd --user would do: the unit's command, our environment. */
		dup2(p[1], STDOUT_FILENO);
		setenv("BPFBROKER_SOCKET", H.socket, 1);
		execv(r->argv[0], r->argv);
		_exit(127);
	}
	close(p[1]);
	CHECK(output_expect(p[0], r, "counting UDP datagrams on 127.0.0.1:5140") == 0,
	      "netmon did not start: \"%s\"", r->output);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(s >= 0, "socket: %m");
	for (int i = 0; i < 3; i++)
		CHECK(sendto(s, "datagram", 8, 0, (struct sockaddr *)&to, sizeof(to)) == 8,
		      "sendto: %m");
	close(s);
	/* netmon read the counts from its map: the filter saw all three. */
	CHECK(output_expect(p[0], r, "netmon: 3 datagrams") == 0, "netmon did not count: \"%s\"",
	      r->output);
	kill(pid, SIGTERM);
	CHECK(output_expect(p[0], r, "stopping after 3 datagrams") == 0,
	      "netmon did not stop: \"%s\"", r->output);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "netmon exited with status %d", status);
	close(p[0]);
	fprintf(stderr, "netmon said:\n%s", r->output);
	return 0;
}

static void test_netmon_unit(void **state)
{
	char unit[512], exec_start[1024], policy[512], json[4096] = "";
	static struct netmon_run r;
	FILE *f;
	size_t n;

	/* The example policy as shipped: it must be enough for the example unit. */
	snprintf(policy, sizeof(policy), "%s/examples/policy.d/50-example.json",
		 getenv("BPFBROKER_TEST_SRC_DIR"));
	f = fopen(policy, "re");
	assert_non_null(f);
	n = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	json[n] = '\0';
	assert_int_equal(harness_write_policy("50-example.json", json), 0);
	unlink(H.socket);
	assert_int_equal(harness_start(NULL), 0);

	/* The unit as configured for the build tree (same template as the installed one). */
	snprintf(unit, sizeof(unit), "%s/systemd/examples/netmon-build.service", H.build_dir);
	assert_true(unit_exec_start(unit, exec_start, sizeof(exec_start), r.argv, 32) >= 4);
	assert_string_equal(r.argv[1], "run");
	assert_int_equal(harness_in_new_netns_as(&nobody, client_netmon, &r), 0);
	assert_int_equal(harness_kill(SIGTERM), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	if (harness_init() < 0)
		return -1;
	/* uid 65534 may load the quickstart's example object. */
	if (harness_write_policy("50-test.json",
				 "{\"rules\": [{\"match\": {\"uids\": [\"65534\"]},"
				 " \"allow\": {\"program_types\": [\"socket_filter\"],"
				 "  \"helper_classes\": [\"base\"],"
				 "  \"maps\": [{\"name\": \"config*\", \"access\": \"ro\"},"
				 "           {\"name\": \"*\", \"access\": \"rw\"}]}}]}") < 0)
		return -1;
	if (notify_open() < 0)
		return -1;
	harness_mark_kernel_objects();
	return 0;
}

static int teardown(void **state)
{
	if (notify_fd >= 0)
		close(notify_fd);
	if (harness_stop() < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_activation),
		cmocka_unit_test(test_stream_socket_refused),
		cmocka_unit_test(test_netmon_unit),
	};

	return cmocka_run_group_tests_name("systemd", tests, setup, teardown);
}
