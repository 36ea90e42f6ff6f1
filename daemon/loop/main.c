/* SPDX-License-Identifier: MIT */
/*
 * bpfbrokerd, which lets unprivileged users load BPF objects under a per-user
 * policy and hands back fds with exactly the access the policy grants: main()
 * wires the options, policy, directories, worker pool, server, listening
 * sockets and signals together and runs the event loop.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/macro.h"
#include "common/parse.h"
#include "daemon.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "policy/attach_type.h"
#include "policy/policy.h"
#include "server.h"
#include "spawn.h"
#include "worker.h"

/*
 * A worker bound to a connection that sent nothing for this long exits (the
 * next request pays a fresh one: about half a millisecond). How far its memory
 * may grow is the worker's own limit (worker/serve.h).
 */
#define WORKER_IDLE_USEC (5 * 1000 * 1000ull)

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int listen_sockets(struct daemon *d)
{
	int n = sd_listen_fds(true), k;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
			log_error("fd %d passed by the service manager is not a listening "
				  "AF_UNIX SOCK_SEQPACKET socket",
				  fd);
			return -EINVAL;
		}
		k = server_listen_fd(d->server, fd);
		if (k < 0)
			return k;
	}
	if (n > 0) {
		log_info("listening on %d socket(s) from the service manager", n);
		return 0;
	}
	k = server_listen_path(d->server, d->opt.socket_path);
	if (k < 0) {
		log_error("cannot listen on %s: %s", d->opt.socket_path, strerror(-k));
		return k;
	}
	log_info("listening on %s", d->opt.socket_path);
	return 0;
}

int main(int argc, char **argv)
{
	struct daemon d = {.policy_fd = -EBADF, .worker_exe_fd = -EBADF};
	sd_event *event = NULL;
	sigset_t mask;
	int k;

	if (parse_options(argc, argv, &d.opt) < 0)
		return EXIT_FAILURE;
	/*
	 * The daemon's libbpf prints nothing (workers set their own printer):
	 * set first, so that reading the attach types' names from a kernel
	 * without BTF does not put libbpf's warning on stderr.
	 */
	libbpf_set_print(libbpf_quiet);
	/* Before the policy names them (the spawner reads them again for itself). */
	attach_type_init();
	{
		char why[1024];

		if (policy_load(d.opt.policy_dir, &d.policy, &d.policy_fd, why, sizeof(why)) < 0) {
			log_error("policy: %s", why);
			return EXIT_FAILURE;
		}
	}
	if (d.opt.check_config) {
		printf("%s: %zu rules, OK\n", d.opt.policy_dir, policy_n_rules(d.policy));
		policy_free(d.policy);
		safe_close(d.policy_fd);
		return EXIT_SUCCESS;
	}
	current_policy = d.policy;
	k = spawn_open_exe(d.opt.worker_exe);
	if (k < 0)
		goto out;
	d.worker_exe_fd = k;

	/* From here on the daemon holds only what it needs, none of it effective. */
	k = caps_daemon_init();
	if (k < 0) {
		log_error("cannot reduce our capabilities: %s", strerror(-k));
		goto out;
	}
	/*
	 * Not dumpable: a worker some object took over holds the same
	 * capabilities, which would let it ptrace-access us (write our memory
	 * through /proc/PID/mem, have a perf event SIGTRAP us); now only
	 * CAP_SYS_PTRACE may. The spawner does the same after its exec.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) < 0) {
		k = negative_errno();
		log_error("cannot make ourselves undumpable: %s", strerror(-k));
		goto out;
	}

	/* sd-event takes these through signalfd and child sources; workers unblock them. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	pin_root_prepare(d.opt.pin_root);
	k = state_dir_prepare(d.opt.state_dir);
	if (k < 0)
		goto out;
	if (d.opt.admin_group) {
		k = parse_gid(d.opt.admin_group, &d.admin_gid);
		if (k < 0) {
			log_error("--admin-group: no group \"%s\"", d.opt.admin_group);
			goto out;
		}
	}
	k = worker_argv_new(&d, &d.worker_argv);
	if (k < 0)
		goto out;
	store_recover_in_child(&d);

	k = sd_event_default(&event);
	if (k < 0)
		goto out;
	d.event = event;
	sd_event_add_signal(event, NULL, SIGHUP, on_sighup, &d);
	sd_event_add_signal(event, NULL, SIGTERM, on_sigterm, &d);
	sd_event_add_signal(event, NULL, SIGINT, on_sigterm, &d);

	{
		struct worker_pool_config wc = {
			.max_workers = d.opt.workers,
			.job_timeout_usec = (uint64_t)d.opt.timeout_sec * 1000000,
			.max_jobs_per_uid = d.opt.max_jobs_per_uid,
			.max_jobs_per_worker = d.opt.jobs_per_worker,
			.worker_idle_usec = WORKER_IDLE_USEC,
			.worker_exe_fd = d.worker_exe_fd,
			.worker_argv = d.worker_argv,
			.policy_fd = &d.policy_fd,
		};
		struct server_config sc = {
			.max_connections = d.opt.max_connections,
			.max_connections_per_uid = d.opt.max_connections_per_uid,
			.job_timeout_usec = wc.job_timeout_usec,
			.idle_timeout_usec = (uint64_t)d.opt.idle_timeout_sec * 1000000,
			.policy = &current_policy,
		};

		k = worker_pool_new(event, &wc, &d.pool);
		if (k >= 0)
			k = server_new(event, d.pool, &sc, &d.server);
	}
	if (k < 0)
		goto out;
	k = listen_sockets(&d);
	if (k < 0)
		goto out;

	log_info("bpfbrokerd ready: policy %s (%zu rules), %u workers, pins under %s",
		 d.opt.policy_dir, policy_n_rules(d.policy), d.opt.workers, d.opt.pin_root);
	sd_notify(0, "READY=1");
	k = sd_event_loop(event);
out:
	if (k < 0)
		log_error("bpfbrokerd: %s", strerror(-k));
	sd_event_source_disable_unref(d.stop_deadline);
	server_free(d.server);
	worker_pool_free(d.pool);
	sd_event_unref(event);
	policy_free(d.policy);
	safe_close(d.policy_fd);
	safe_close(d.worker_exe_fd);
	argv_free(d.worker_argv);
	return k < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
