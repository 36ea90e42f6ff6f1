/* SPDX-License-Identifier: MIT */
/*
 * The bpfbrokerd bpfbroker-bench measures: where the build's executables are,
 * its policy, starting and restarting it, and its memory and fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static bool daemon_accepts(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", G.socket);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

void write_policy(void)
{
	char path[400], uids[64], uids_trusted[16];
	FILE *f;

	snprintf(uids, sizeof(uids), "\"%d\", \"%d-%d\"", NOBODY, FIRST_UID,
		 FIRST_UID + MAX_CLIENTS - 1);
	snprintf(uids_trusted, sizeof(uids_trusted), "\"%d\"", TRUSTED);
	snprintf(path, sizeof(path), "%s/50-bench.json", G.policy_dir);
	f = fopen(path, "we");
	if (!f)
		die("%s: %s", path, strerror(errno));
	/* The same rule twice: the second also loads with CAP_PERFMON, as root would. */
	fprintf(f, "{\n  \"rules\": [\n");
	for (int i = 0; i < 2; i++)
		fprintf(f,
			"    {\n"
			"      \"match\": { \"uids\": [%s] },\n"
			"      \"allow\": {\n"
			"        \"program_types\": [\"socket_filter\"],\n"
			"        \"helper_classes\": [\"base\"],%s\n"
			"        \"maps\": [ { \"name\": \"*\", \"access\": \"rw\" } ]\n"
			"      },\n"
			"      \"limits\": { \"max_loads_per_minute\": 100000, "
			"\"max_named_objects\": 4096,\n"
			"                  \"max_insns_per_program\": 1000000, \"max_programs\": "
			"128,\n"
			"                  \"max_object_bytes\": 67108864, "
			"\"max_loaded_programs\": "
			"65536,\n"
			"                  \"max_map_memory_bytes\": 4294967296 }\n"
			"    }%s\n",
			i ? uids_trusted : uids, i ? "\n        \"load_with_perfmon\": true," : "",
			i ? "" : ",");
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0)
		die("%s: %s", path, strerror(errno));
}

void start_daemon(void)
{
	G.daemon = fork();
	if (G.daemon < 0)
		die("fork: %s", strerror(errno));
	if (G.daemon == 0) {
		char *argv[32] = {
			G.daemon_exe, "--socket",	   G.socket,	"--policy-dir",
			G.policy_dir, "--pin-root",	   G.pin_root,	"--state-dir",
			G.state_dir,  "--max-connections", "2048",	"--max-connections-per-uid",
			"2048",	      "--worker-exe",	   G.worker_exe};
		int n = 15, fd;
		struct rlimit rl = {8192, 8192};

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setrlimit(RLIMIT_NOFILE, &rl);
		if (G.workers) {
			argv[n++] = "--workers";
			argv[n++] = (char *)G.workers;
		}
		if (G.jobs_per_worker) {
			argv[n++] = "--jobs-per-worker";
			argv[n++] = (char *)G.jobs_per_worker;
		}
		argv[n] = NULL;
		fd = open(G.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		execv(G.daemon_exe, argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int status;

		if (daemon_accepts())
			return;
		if (waitpid(G.daemon, &status, WNOHANG) == G.daemon) {
			G.daemon = -1;
			die("bpfbrokerd exited at startup (status %d)", status);
		}
		usleep(10000);
	}
	die("bpfbrokerd does not accept connections");
}

/* The same daemon with other options (--jobs-per-worker): for comparisons within one run. */
void restart_daemon(const char *jobs_per_worker)
{
	if (G.daemon > 0) {
		kill(G.daemon, SIGTERM);
		waitpid(G.daemon, NULL, 0);
		G.daemon = -1;
	}
	G.jobs_per_worker = jobs_per_worker;
	start_daemon();
	usleep(300000);
}

static long proc_status_kib(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t len = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

long daemon_rss(void)
{
	return proc_status_kib(G.daemon, "VmRSS");
}

static int children_of(pid_t parent, pid_t *pids, int max)
{
	char path[96];
	int n = 0;
	long p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < max && fscanf(f, "%ld", &p) == 1)
		pids[n++] = (pid_t)p;
	fclose(f);
	return n;
}

/*
 * RSS of the daemon's helpers, added up: its child, the spawner, and the
 * spawner's children, the pre-forked workers (*count of them).
 */
long workers_rss(int *count)
{
	pid_t spawners[4], workers[64];
	int n_spawners = children_of(G.daemon, spawners, 4), n = 0;
	long sum = 0;

	for (int i = 0; i < n_spawners; i++) {
		long r = proc_status_kib(spawners[i], "VmRSS");

		if (r > 0)
			sum += r;
		n += children_of(spawners[i], workers + n, 64 - n);
	}
	for (int i = 0; i < n; i++) {
		long r = proc_status_kib(workers[i], "VmRSS");

		if (r > 0)
			sum += r;
	}
	*count = n;
	return sum;
}

int daemon_fds(void)
{
	char path[64], cmd[128], out[32] = "";
	FILE *p;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)G.daemon);
	snprintf(cmd, sizeof(cmd), "ls %s | wc -l", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);
	return atoi(out);
}

void find_paths(const char *build_opt)
{
	static const char *tools[] = {"/usr/sbin/bpftool", "/usr/bin/bpftool", "/sbin/bpftool",
				      "/usr/local/sbin/bpftool", NULL};

	if (build_opt) {
		snprintf(G.build, sizeof(G.build), "%s", build_opt);
	} else {
		/* build/bench/bpfbroker-bench -> build */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n < 0)
			die("readlink /proc/self/exe: %s", strerror(errno));
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(G.build, sizeof(G.build), "%s", exe);
	}
	snprintf(G.daemon_exe, sizeof(G.daemon_exe), "%s/daemon/bpfbrokerd", G.build);
	/* The build's worker, not an installed one. */
	snprintf(G.worker_exe, sizeof(G.worker_exe), "%s/daemon/bpfbroker-worker", G.build);
	snprintf(G.bpfctl, sizeof(G.bpfctl), "%s/client/bpfctl", G.build);
	for (const char **t = tools; *t; t++)
		if (access(*t, X_OK) == 0) {
			snprintf(G.bpftool, sizeof(G.bpftool), "%s", *t);
			break;
		}
}
