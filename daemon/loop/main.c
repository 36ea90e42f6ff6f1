/* SPDX-License-Identifier: MIT */
/*
 * bpfbrokerd: lets unprivileged users load BPF objects under a per-user
 * policy and hands back fds with exactly the access the policy grants.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <stdarg.h>

#include "common/macro.h"
#include "common/parse.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "policy/attach_type.h"
#include "policy/policy.h"
#include "proto/proto.h"
#include "server.h"
#include "spawn.h"
#include "worker.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

#define DEFAULT_POLICY_DIR "/etc/bpfbroker/policy.d"
#define DEFAULT_PIN_ROOT "/sys/fs/bpf/bpfbroker"
#define DEFAULT_STATE_DIR "/run/bpfbroker/state"

struct options {
	const char *socket_path;
	const char *policy_dir;
	const char *pin_root;
	const char *state_dir;
	const char *admin_group;
	const char *fault_inject;
	const char *worker_exe;
	const char *objects_dir; /* system objects (policy/vetted.h); NULL: the defaults */
	unsigned workers;
	unsigned timeout_sec;
	double verifier_timeout_sec;
	unsigned idle_timeout_sec;
	unsigned max_jobs_per_uid;
	unsigned jobs_per_worker;
	bool allow_writable_bpffs;
	unsigned max_connections;
	unsigned max_connections_per_uid;
	bool check_config;
};

static const struct policy *current_policy;

/*
 * A worker bound to a connection that sent nothing for this long exits (the
 * next request pays a fresh one: about half a millisecond). How far its memory
 * may grow is the worker's own limit (worker/serve.h).
 */
#define WORKER_IDLE_USEC (5 * 1000 * 1000ull)

static void help(void)
{
	printf("Usage: bpfbrokerd [OPTIONS]\n\n"
	       "Load BPF objects for unprivileged clients under a per-user policy.\n\n"
	       "  --socket PATH              listen here (default %s), unless systemd\n"
	       "                             passes a socket\n"
	       "  --policy-dir DIR           policy drop-in directory (default %s)\n"
	       "  --pin-root DIR             bpffs directory for per-user pins (default %s)\n"
	       "  --state-dir DIR            metadata of named objects (default %s)\n"
	       "  --admin-group GROUP        members may list, show and unload everyone's\n"
	       "                             objects; they get fds only for what is shared\n"
	       "                             with them\n"
	       "  --workers N                loads handled at once (default: number of CPUs)\n"
	       "  --timeout SEC              limit for one request, the worker is killed after "
	       "(default 60)\n"
	       "  --verifier-timeout SEC     limit for the verifier in one load, stopped "
	       "after (default 10)\n"
	       "  --idle-timeout SEC         drop connections idle this long (default 120)\n"
	       "  --max-jobs-per-uid N       workers one user may hold at once (default:\n"
	       "                             workers - 1, at least 1)\n"
	       "  --jobs-per-worker N        requests of one connection a worker serves\n"
	       "                             before it exits (default 64; 1: a fresh worker\n"
	       "                             for every request)\n"
	       "  --allow-writable-bpffs     hand out read-only and write-only map fds even\n"
	       "                             while a bpffs is writable by non-root (unsafe)\n"
	       "  --max-connections N        connections in total (default 1024)\n"
	       "  --max-connections-per-uid N  connections per client uid (default 64)\n"
	       "  --worker-exe PATH          the worker executable (default %s)\n"
	       "  --objects-dir DIR          system objects only from here (default\n"
	       "                             /etc/bpfbroker/objects, then %s)\n"
	       "  --check-config             parse the policy, report problems, and exit\n"
	       "  -v, --verbose              log debug messages\n"
	       "  -h, --help                 show this help\n",
	       PROTO_DEFAULT_SOCKET, DEFAULT_POLICY_DIR, DEFAULT_PIN_ROOT, DEFAULT_STATE_DIR,
	       BPFBROKER_WORKER_EXE, BPFBROKER_OBJECTS_DIR);
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	uint64_t v;

	if (parse_u64(s, max, &v) < 0 || v < min)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_SOCKET = 256,
		OPT_POLICY_DIR,
		OPT_PIN_ROOT,
		OPT_WORKERS,
		OPT_TIMEOUT,
		OPT_MAXCONN,
		OPT_MAXCONN_UID,
		OPT_CHECK,
		OPT_STATE_DIR,
		OPT_ADMIN_GROUP,
		OPT_FAULT,
		OPT_VERIFIER_TIMEOUT,
		OPT_IDLE_TIMEOUT,
		OPT_JOBS_PER_UID,
		OPT_ALLOW_WRITABLE_BPFFS,
		OPT_JOBS_PER_WORKER,
		OPT_WORKER_EXE,
		OPT_OBJECTS_DIR,
	};
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, OPT_SOCKET},
		{"policy-dir", required_argument, NULL, OPT_POLICY_DIR},
		{"pin-root", required_argument, NULL, OPT_PIN_ROOT},
		{"workers", required_argument, NULL, OPT_WORKERS},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"max-connections", required_argument, NULL, OPT_MAXCONN},
		{"max-connections-per-uid", required_argument, NULL, OPT_MAXCONN_UID},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"state-dir", required_argument, NULL, OPT_STATE_DIR},
		{"admin-group", required_argument, NULL, OPT_ADMIN_GROUP},
		/* Testing only: crash (store_fault()) or stall (worker-stall) at a named point. */
		{"fault-inject", required_argument, NULL, OPT_FAULT},
		{"verifier-timeout", required_argument, NULL, OPT_VERIFIER_TIMEOUT},
		{"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
		{"max-jobs-per-uid", required_argument, NULL, OPT_JOBS_PER_UID},
		{"allow-writable-bpffs", no_argument, NULL, OPT_ALLOW_WRITABLE_BPFFS},
		{"jobs-per-worker", required_argument, NULL, OPT_JOBS_PER_WORKER},
		/* For running from a build tree (tests, tools/quickstart.sh). */
		{"worker-exe", required_argument, NULL, OPT_WORKER_EXE},
		{"objects-dir", required_argument, NULL, OPT_OBJECTS_DIR},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	*o = (struct options){
		.socket_path = PROTO_DEFAULT_SOCKET,
		.policy_dir = DEFAULT_POLICY_DIR,
		.pin_root = DEFAULT_PIN_ROOT,
		.state_dir = DEFAULT_STATE_DIR,
		.worker_exe = BPFBROKER_WORKER_EXE,
		.workers = ncpu > 0 ? (unsigned)ncpu : 1,
		.timeout_sec = 60,
		.verifier_timeout_sec = 10,
		.idle_timeout_sec = 120,
		.max_connections = 1024,
		.max_connections_per_uid = 64,
		.jobs_per_worker = 64,
	};
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) >= 0) {
		int k = 0;

		switch (c) {
		case OPT_SOCKET:
			o->socket_path = optarg;
			break;
		case OPT_POLICY_DIR:
			o->policy_dir = optarg;
			break;
		case OPT_PIN_ROOT:
			o->pin_root = optarg;
			break;
		case OPT_WORKERS:
			k = parse_unsigned(optarg, 1, 256, &o->workers);
			break;
		case OPT_TIMEOUT:
			k = parse_unsigned(optarg, 1, 3600, &o->timeout_sec);
			break;
		case OPT_MAXCONN:
			k = parse_unsigned(optarg, 1, 65536, &o->max_connections);
			break;
		case OPT_MAXCONN_UID:
			k = parse_unsigned(optarg, 1, 65536, &o->max_connections_per_uid);
			break;
		case OPT_CHECK:
			o->check_config = true;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_ADMIN_GROUP:
			o->admin_group = optarg;
			break;
		case OPT_FAULT:
			o->fault_inject = optarg;
			break;
		case OPT_VERIFIER_TIMEOUT: {
			char *end;

			errno = 0;
			o->verifier_timeout_sec = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->verifier_timeout_sec >= 0.001) ||
			    o->verifier_timeout_sec > 3600)
				k = -EINVAL;
			break;
		}
		case OPT_IDLE_TIMEOUT:
			k = parse_unsigned(optarg, 1, 86400, &o->idle_timeout_sec);
			break;
		case OPT_JOBS_PER_UID:
			k = parse_unsigned(optarg, 1, 256, &o->max_jobs_per_uid);
			break;
		case OPT_ALLOW_WRITABLE_BPFFS:
			o->allow_writable_bpffs = true;
			break;
		case OPT_JOBS_PER_WORKER:
			k = parse_unsigned(optarg, 1, 4096, &o->jobs_per_worker);
			break;
		case OPT_WORKER_EXE:
			o->worker_exe = optarg;
			break;
		case OPT_OBJECTS_DIR:
			o->objects_dir = optarg;
			break;
		case 'v':
			log_max_level = LOG_DEBUG;
			break;
		case 'h':
			help();
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
		if (k < 0) {
			fprintf(stderr, "bpfbrokerd: invalid value \"%s\" for --%s\n", optarg,
				longopts[c - OPT_SOCKET].name);
			return -EINVAL;
		}
	}
	/* Leave one worker free of any one user, so one can't starve the rest. */
	if (o->max_jobs_per_uid == 0)
		o->max_jobs_per_uid = o->workers > 1 ? o->workers - 1 : 1;
	if ((uint64_t)(o->verifier_timeout_sec * 1e6) >= (uint64_t)o->timeout_sec * 1000000)
		fprintf(stderr, "bpfbrokerd: --verifier-timeout should be below --timeout, or the "
				"worker is killed first and the client learns less\n");
	if (optind < argc) {
		fprintf(stderr, "bpfbrokerd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void policy_warn(void *userdata, const char *message)
{
	log_warning("policy: %s", message);
}

/*
 * The policy in dir, and the files it was parsed from in a sealed memfd for
 * the spawner (SPAWN_POLICY_FD), which parses the same text: what changes on
 * disk later counts only at the next reload. Or a negative errno and what is
 * wrong (which file, why) in why.
 */
static int policy_load(const char *dir, struct policy **ret, int *ret_fd, char *why,
		       size_t why_size)
{
	_cleanup_free_ char *error = NULL, *snap = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t size = 0;
	int k;

	k = policy_snapshot_dir(dir, policy_warn, NULL, &snap, &size, &error);
	if (k >= 0)
		k = policy_load_snapshot(snap, size, policy_warn, NULL, ret, &error);
	if (k < 0) {
		snprintf(why, why_size, "%s", error ? error : strerror(-k));
		return k;
	}
	/* Sealed: nothing, not even a bug of ours, changes it under a spawner reading it. */
	fd = memfd_create("bpfbroker-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		k = negative_errno();
	else if (size > 0 && write(fd, snap, size) != (ssize_t)size)
		k = -EIO; /* a memfd takes all of it at once, or ENOMEM */
	else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) <
		 0)
		k = negative_errno();
	if (k < 0) {
		snprintf(why, why_size, "cannot keep the policy for workers: %s", strerror(-k));
		*ret = policy_free(*ret);
		return k;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

struct daemon {
	struct options opt;
	gid_t admin_gid;
	struct policy *policy;
	int policy_fd; /* what policy was parsed from, for the spawner (policy_load()) */
	int worker_exe_fd; /* bpfbroker-worker, checked once (spawn_open_exe()) */
	char **worker_argv;
	struct worker_pool *pool;
	struct server *server;
	sd_event *event;
	bool stopping;
	sd_event_source *stop_deadline;
};

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct policy *p = NULL;
	char why[1024], reason[1200];
	int fd = -EBADF;

	sd_notify(0, "RELOADING=1");
	if (policy_load(d->opt.policy_dir, &p, &fd, why, sizeof(why)) < 0) {
		log_error("policy reload failed; the previous policy stays in force: %s", why);
		snprintf(reason, sizeof(reason),
			 "the new policy is invalid (%s); the previous one stays in force", why);
		audit_log(&(struct audit_record){
			.event = "policy-reload", .decision = "error", .reason = reason});
	} else {
		policy_free(d->policy);
		d->policy = p;
		current_policy = p;
		safe_close(d->policy_fd);
		d->policy_fd = fd;
		/* Idle workers and the spawner hold the old policy. */
		worker_pool_refresh(d->pool);
		log_info("policy reloaded from %s: %zu rules", d->opt.policy_dir,
			 policy_n_rules(p));
		audit_log(&(struct audit_record){.event = "policy-reload", .decision = "allow"});
	}
	sd_notify(0, "READY=1");
	return 0;
}

static void on_drained(void *userdata)
{
	struct daemon *d = userdata;

	log_info("every running request has finished; exiting");
	sd_event_exit(d->event, 0);
}

/* Only if a worker outlives its own time limit, which the pool enforces: exit anyway. */
static int on_stop_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	log_warning("requests still running past the time limit; exiting anyway");
	worker_pool_log_workers(d->pool);
	return sd_event_exit(d->event, 0);
}

/*
 * Stop by draining: accept and read nothing more, let every request that
 * runs finish (a change half made is what nobody could see or undo), answer
 * it, then exit. Each worker is bounded by --timeout, so is this; the service
 * manager is told how long it may take. A second signal exits at once.
 */
static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t limit = (uint64_t)d->opt.timeout_sec * 1000000 + 5000000;

	if (d->stopping) {
		log_warning("signal %u while stopping: exiting now", si->ssi_signo);
		worker_pool_log_workers(d->pool);
		return sd_event_exit(d->event, 0);
	}
	d->stopping = true;
	sd_notifyf(0, "STOPPING=1\nEXTEND_TIMEOUT_USEC=%llu", (unsigned long long)limit);
	log_info("stopping: no new requests; waiting for %u running to finish",
		 worker_pool_n_busy(d->pool));
	(void)sd_event_add_time_relative(d->event, &d->stop_deadline, CLOCK_MONOTONIC, limit, 0,
					 on_stop_deadline, d);
	server_drain(d->server);
	worker_pool_drain(d->pool, on_drained, d);
	return 0;
}

static int dir_secure(const char *path);

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Where users' pins live: a directory on bpffs that only root can enter. */
static void pin_root_prepare(const char *pin_root)
{
	_cleanup_free_ char *parent = strdup(pin_root);
	char *slash = parent ? strrchr(parent, '/') : NULL;
	struct statfs sfs;

	if (slash && slash != parent)
		*slash = '\0';
	if (!parent || statfs(parent, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC) {
		log_warning("%s is not on bpffs; objects that pin maps by name will be refused "
			    "(mount -t bpf -o mode=0700 bpf /sys/fs/bpf)",
			    parent ? parent : pin_root);
		return;
	}
	if (mkdir(pin_root, 0700) < 0 && errno != EEXIST)
		log_warning("cannot create %s: %m; pinning by name will fail", pin_root);
	dir_secure(pin_root);
}

/*
 * A directory the broker keeps its pins or state in must be root's and 0700,
 * also when it existed before: a user who owned it could reach every pin.
 */
static int dir_secure(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
		log_error("%s is not a directory owned by root: refusing to keep pins or state "
			  "there",
			  path);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
		return log_error_errno(-errno, "cannot restrict %s to mode 0700: %m", path);
	return 0;
}

/* Where named objects' metadata lives: root's, closed to users. */
static int state_dir_prepare(const char *state_dir)
{
	_cleanup_free_ char *parent = strdup(state_dir);
	char *slash = parent ? strrchr(parent, '/') : NULL;

	if (!parent)
		return -ENOMEM;
	if (slash && slash != parent) {
		*slash = '\0';
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return log_error_errno(-errno, "cannot create %s: %m", parent);
	}
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "cannot create %s: %m", state_dir);
	return dir_secure(state_dir);
}

/*
 * Finish or undo what a crash interrupted (worker/store.h), before anything
 * else touches the store: in bpfbroker-worker --recover, which holds the
 * workers' capabilities and raises them as it goes.
 */
static int store_recover_in_child(const struct daemon *d)
{
	char *argv[32];
	size_t n = 0;
	pid_t pid;
	int status = 0, k;

	/* The spawner's arguments, and --recover. */
	for (char **a = d->worker_argv; *a && n < ARRAY_SIZE(argv) - 2; a++)
		argv[n++] = *a;
	argv[n++] = (char *)"--recover";
	argv[n] = NULL;
	k = spawn_exec(d->worker_exe_fd, argv, -EBADF, -EBADF, &pid);
	if (k < 0)
		return log_error_errno(k, "cannot start recovery: %s", strerror(-k));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return log_error_errno(-errno, "waiting for recovery: %m");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warning("recovery of named objects did not finish; see the messages above");
	return 0;
}

static void argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

_printf_(3, 4) static bool argv_add(char **argv, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *a;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&a, fmt, ap);
	va_end(ap);
	if (k < 0)
		return false;
	argv[(*n)++] = a;
	return true;
}

/* What bpfbroker-worker is told (worker/main.c): the same store, limits and testing faults. */
static int worker_argv_new(const struct daemon *d, char ***ret)
{
	char **argv = calloc(16, sizeof(char *)); /* NULL-terminated: at most 11 are set */
	size_t n = 0;
	bool ok = !!argv;

#define ARG(...) (ok = ok && argv_add(argv, &n, __VA_ARGS__))
	ARG("%s", "bpfbroker-worker");
	ARG("--daemon-pid=%d", (int)getpid());
	ARG("--pin-root=%s", d->opt.pin_root);
	ARG("--state-dir=%s", d->opt.state_dir);
	if (d->opt.objects_dir)
		ARG("--objects-dir=%s", d->opt.objects_dir);
	ARG("--verifier-timeout-usec=%llu",
	    (unsigned long long)(d->opt.verifier_timeout_sec * 1e6));
	ARG("--jobs-per-worker=%u", d->opt.jobs_per_worker);
	if (d->opt.admin_group)
		ARG("--admin-gid=%u", (unsigned)d->admin_gid);
	if (d->opt.fault_inject)
		ARG("--fault-inject=%s", d->opt.fault_inject);
	if (d->opt.allow_writable_bpffs)
		ARG("%s", "--allow-writable-bpffs");
	if (log_max_level >= LOG_DEBUG)
		ARG("%s", "--verbose");
#undef ARG
	if (!ok) {
		argv_free(argv);
		return -ENOMEM;
	}
	*ret = argv;
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
