/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-bench: start a bpfbrokerd of our own (temporary policy, socket,
 * pin root and state directory) and measure, as root:
 *   - load latency of a tiny, a medium and a large object: libbpf in this
 *     process as root, libbpfbroker as uid 65534 on one connection, and whole
 *     processes (bpfctl run as 65534, bpftool prog loadall as root);
 *   - throughput and latency with 1..32 concurrent clients (uids 70001..),
 *     and requests per second of a cheap request (policy);
 *   - list with 1,000 named objects, and the daemon's RSS idle, after many
 *     loads and with 1,000 idle connections.
 * Prints a table and, with --json FILE, writes the figures as JSON.
 * Everything it creates (daemon, temp dir, pins) is removed at the end.
 * This file is its main(): the options, the temporary directory and daemon,
 * and the sections run in order (bench.h lists the files of each).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bpfbroker-bench [--quick] [--json FILE] [--workers N] "
		"[--jobs-per-worker N]\n"
		"                       [--build-dir DIR]\n"
		"       bpfbroker-bench --profile-loads N   only N loads of tiny (for perf)\n"
		"       bpfbroker-bench --profile-list N    only %d named loads, N lists of them\n"
		"       bpfbroker-bench --profile-clients S only the concurrent clients, S seconds "
		"each\n"
		"Run as root. Starts its own bpfbrokerd; removes everything it creates.\n",
		N_NAMED);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"quick", no_argument, NULL, 'q'},
						 {"json", required_argument, NULL, 'j'},
						 {"workers", required_argument, NULL, 'w'},
						 {"jobs-per-worker", required_argument, NULL, 'J'},
						 {"build-dir", required_argument, NULL, 'b'},
						 {"profile-loads", required_argument, NULL, 'p'},
						 {"profile-list", required_argument, NULL, 'l'},
						 {"profile-clients", required_argument, NULL, 'c'},
						 {"help", no_argument, NULL, 'h'},
						 {}};
	const char *json_path = NULL, *build_opt = NULL;
	struct results res = {.objs = {{.name = "tiny"}, {.name = "medium"}, {.name = "large"}}};
	struct results *r = &res;
	size_t profile_loads = 0, profile_lists = 0;
	double profile_clients = 0;
	int c;
	char src[PATH_MAX + 64];

	while ((c = getopt_long(argc, argv, "qj:w:J:b:p:l:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			profile_lists = strtoul(optarg, NULL, 10);
			if (profile_lists == 0 || profile_lists > 1000)
				die("--profile-list: expected 1 to 1000");
			break;
		case 'c':
			profile_clients = strtod(optarg, NULL);
			if (!(profile_clients > 0 && profile_clients <= 60))
				die("--profile-clients: expected 0 to 60 seconds");
			break;
		case 'J':
			G.jobs_per_worker = optarg;
			break;
		case 'p':
			profile_loads = strtoul(optarg, NULL, 10);
			if (profile_loads == 0)
				die("--profile-loads: expected a positive number");
			break;
		case 'q':
			G.quick = true;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'w':
			G.workers = optarg;
			break;
		case 'b':
			build_opt = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr,
			"bpfbroker-bench: run as root (it starts the daemon and switches uids)\n");
		return 1;
	}
	r->n_small = G.quick ? 10 : 200;
	r->n_large = G.quick ? 3 : 50;
	r->n_proc = G.quick ? 3 : 50;
	r->n_rss_loads = G.quick ? 500 : 10000;
	r->seconds = G.quick ? 0.3 : 2.0;
	find_paths(build_opt);
	libbpf_quiet_init();
	setvbuf(stdout, NULL, _IOLBF, 0);

	snprintf(G.dir, sizeof(G.dir), "/tmp/bpfbroker-bench-XXXXXX");
	if (!mkdtemp(G.dir))
		die("mkdtemp: %s", strerror(errno));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal); /* output piped into head: still clean up */
	chmod(G.dir, 0755);
	snprintf(G.socket, sizeof(G.socket), "%s/broker.sock", G.dir);
	snprintf(G.policy_dir, sizeof(G.policy_dir), "%s/policy.d", G.dir);
	snprintf(G.state_dir, sizeof(G.state_dir), "%s/state", G.dir);
	snprintf(G.log, sizeof(G.log), "%s/daemon.log", G.dir);
	snprintf(G.pin_root, sizeof(G.pin_root), "/sys/fs/bpf/bpfbroker-bench-%d", (int)getpid());
	if (mkdir(G.policy_dir, 0755) < 0)
		die("mkdir: %s", strerror(errno));
	/*
	 * The state directory on tmpfs, as /run is under systemd: on this
	 * machine /run (and /tmp) are on the disk, where every named load's
	 * fsync would be measured instead of the broker.
	 */
	if (mkdir(G.state_dir, 0700) < 0 ||
	    mount("bpfbroker-bench", G.state_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0700") < 0)
		die("tmpfs for %s: %s", G.state_dir, strerror(errno));
	write_policy();
	for (int i = 0; i < 3; i++) {
		snprintf(src, sizeof(src), "%s/bench/bench_%s.bpf.o", G.build, r->objs[i].name);
		load_object(&r->objs[i], src);
	}
	start_daemon();
	usleep(300000);
	r->rss_idle = daemon_rss();
	r->wrss = workers_rss(&r->nworkers);
	if (profile_loads) {
		/* Just the loads, for `perf record -a` around this (bench/profile.sh). */
		struct stats st = broker_load(&r->objs[0], profile_loads, NOBODY);

		printf("%zu loads of tiny as uid %d: median %.0f us, p99 %.0f us\n", st.n, NOBODY,
		       st.median, st.p99);
		cleanup();
		return 0;
	}
	if (profile_clients > 0) {
		clients_profile(&r->objs[0], profile_clients);
		cleanup();
		return 0;
	}
	if (profile_lists) {
		scale_profile_list(&r->objs[0], profile_lists);
		cleanup();
		return 0;
	}
	uname(&r->un);
	printf("bpfbroker-bench%s: kernel %s, %ld CPUs, daemon pid %d with a spawner and %d "
	       "pre-forked workers\n",
	       G.quick ? " (quick)" : "", r->un.release, sysconf(_SC_NPROCESSORS_ONLN),
	       (int)G.daemon, r->nworkers);
	printf("daemon RSS idle: %ld KiB (spawner and workers: %ld KiB together)\n", r->rss_idle,
	       r->wrss);
	/* What any design built of processes pays here: the scale for what follows. */
	r->prim = measure_primitives();
	printf("this machine: a message to a waiting process %.1f us (other CPU) / %.1f us (same "
	       "CPU), a page fault %.2f us, fork %.0f us, exit+wait %.0f us (small process)\n\n",
	       r->prim.hop_cross_cpu_us, r->prim.hop_same_cpu_us, r->prim.page_fault_us,
	       r->prim.fork_us, r->prim.exit_wait_us);

	latency_run(r);
	process_run(r);
	concurrency_run(r);
	single_use_run(r);
	scale_run(r);
	report(r, json_path);
	cleanup();
	return 0;
}
