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
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <libbpfbroker.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NOBODY 65534
#define TRUSTED 70100 /* a policy rule grants this uid load_with_perfmon */
#define FIRST_UID 70001
#define MAX_CLIENTS 32
#define SLOT_CAP 65536
#define N_NAMED 1000
#define N_CONNS 1000

struct stats {
	size_t n;
	double median, p99, mean, min, max;
};

struct obj {
	const char *name;
	char path[600];
	void *buf;
	size_t size;
	unsigned insns;
};

struct slot {
	size_t n, errors;
	double t_end;
	char error[256];
	double lat[SLOT_CAP];
};

static struct {
	char build[PATH_MAX];
	char dir[64], socket[108], policy_dir[300], state_dir[300], pin_root[256], log[300];
	char bpfctl[PATH_MAX + 32], daemon_exe[PATH_MAX + 32], worker_exe[PATH_MAX + 32],
		bpftool[64];
	const char *workers;
	const char *jobs_per_worker; /* --jobs-per-worker of the daemon, NULL: its default */
	pid_t daemon;
	bool quick;
} G = {.daemon = -1};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void rm_rf(const char *path)
{
	if (path[0] && access(path, F_OK) == 0)
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup(void)
{
	if (G.daemon > 0) {
		kill(G.daemon, SIGTERM);
		waitpid(G.daemon, NULL, 0);
		G.daemon = -1;
	}
	rm_rf(G.pin_root);
	if (G.state_dir[0])
		umount2(G.state_dir, MNT_DETACH);
	rm_rf(G.dir);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bpfbroker-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (G.log[0]) {
		char cmd[400];

		fprintf(stderr, "--- daemon log (tail) ---\n");
		snprintf(cmd, sizeof(cmd), "tail -n 20 %s >&2", G.log);
		if (system(cmd) < 0)
			perror("system");
	}
	cleanup();
	exit(1);
}

static void on_signal(int sig)
{
	/* Not async-signal-safe, but a bench interrupted by hand should not leave pins behind. */
	cleanup();
	_exit(128 + sig);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct stats compute(double *v, size_t n)
{
	struct stats s = {.n = n};
	double sum = 0;

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.mean = sum / n;
	s.min = v[0];
	s.max = v[n - 1];
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p99 = v[(size_t)ceil(0.99 * n) - 1];
	return s;
}

static void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	return p;
}

static void drop_to(uid_t uid)
{
	gid_t gid = uid == NOBODY ? 65534 : uid;

	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		perror("dropping privileges");
		_exit(120);
	}
	if (uid != 0 && setuid(0) == 0)
		_exit(121);
}

/* Fork a child running fn(arg) as uid; returns its pid. */
static pid_t spawn_as(uid_t uid, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		drop_to(uid);
		_exit(fn(arg));
	}
	return pid;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_as(uid_t uid, int (*fn)(void *), void *arg)
{
	return wait_child(spawn_as(uid, fn, arg));
}

static struct bpfbroker *connect_or_die(void)
{
	struct bpfbroker *b;
	int r = bpfbroker_connect(G.socket, &b);

	if (r < 0) {
		fprintf(stderr, "connect %s: %s\n", G.socket, strerror(-r));
		_exit(2);
	}
	return b;
}

static int load_one(struct bpfbroker *b, const struct obj *o, const char *name, char *msg,
		    size_t msg_size)
{
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .name = name};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int r = bpfbroker_load_mem(b, o->buf, o->size, name ? &opts : NULL, &res, &err);

	if (r < 0) {
		if (msg)
			snprintf(msg, msg_size, "load %s: %s%s%.120s", o->name,
				 err ? err->message : strerror(-r),
				 err && err->verifier_log ? "; verifier: " : "",
				 err && err->verifier_log ? err->verifier_log : "");
		bpfbroker_error_free(err);
		return r;
	}
	bpfbroker_result_free(res);
	return 0;
}

/* ---- the daemon ---- */

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

static void write_policy(void)
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

static void start_daemon(void)
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
static void restart_daemon(const char *jobs_per_worker)
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

static long daemon_rss(void)
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
static long workers_rss(int *count)
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

static int daemon_fds(void)
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

/* ---- objects ---- */

static void load_object(struct obj *o, const char *src)
{
	char dst[600];
	FILE *f = fopen(src, "re");
	long size;

	if (!f)
		die("%s: %s (build first: ninja -C %s)", src, strerror(errno), G.build);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	o->buf = malloc(size);
	if (!o->buf || fread(o->buf, 1, size, f) != (size_t)size)
		die("%s: read failed", src);
	fclose(f);
	o->size = size;
	/* A copy uid 65534 can read, for bpfctl run. */
	snprintf(dst, sizeof(dst), "%s/%s.bpf.o", G.dir, o->name);
	f = fopen(dst, "we");
	if (!f || fwrite(o->buf, 1, o->size, f) != o->size || fclose(f) != 0)
		die("%s: write failed", dst);
	chmod(dst, 0644);
	snprintf(o->path, sizeof(o->path), "%s", dst);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* (a) libbpf in this process, as root: open_mem + load + close. */
static double direct_load(struct obj *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	double t0 = now_us(), t1;
	struct bpf_object *bo = bpf_object__open_mem(o->buf, o->size, &opts);
	struct bpf_program *p;
	int r;

	if (!bo)
		die("bpf_object__open_mem %s: %s", o->name, strerror(errno));
	r = bpf_object__load(bo);
	if (r < 0)
		die("bpf_object__load %s: %s", o->name, strerror(-r));
	if (!o->insns)
		bpf_object__for_each_program(p, bo) o->insns += bpf_program__insn_cnt(p);
	bpf_object__close(bo);
	t1 = now_us();
	return t1 - t0;
}

/*
 * (a'): the same in a child that keeps only CAP_BPF, still uid 0: the
 * privileges the broker's worker loads a socket filter with, so the verifier
 * applies the same Spectre mitigations as through the broker.
 */
struct direct_arg {
	struct obj *o;
	size_t n;
	struct slot *s;
};

static int direct_capbpf_main(void *v)
{
	struct direct_arg *a = v;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	d[CAP_BPF / 32].permitted = d[CAP_BPF / 32].effective = 1u << (CAP_BPF % 32);
	if (syscall(SYS_capset, &h, d) < 0) {
		snprintf(a->s->error, sizeof(a->s->error), "capset: %s", strerror(errno));
		return 1;
	}
	direct_load(a->o); /* warm-up: libbpf's feature probes */
	for (size_t i = 0; i < a->n && i < SLOT_CAP; i++)
		a->s->lat[a->s->n++] = direct_load(a->o);
	return 0;
}

/* ---- what this machine's primitives cost ---- */

struct primitives {
	double hop_cross_cpu_us, hop_same_cpu_us; /* one message to a blocked process */
	double page_fault_us; /* first touch of an anonymous page */
	double fork_us, exit_wait_us; /* of this (small) process */
};

/* Half a round trip over a SOCK_SEQPACKET pair: the cost of every hop between processes. */
static double hop_us(bool same_cpu)
{
	enum { N = 5000 };
	int sv[2];
	char c = 0;
	cpu_set_t one, saved;
	double t0, t;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair: %s", strerror(errno));
	sched_getaffinity(0, sizeof(saved), &saved);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (same_cpu)
		sched_setaffinity(0, sizeof(one), &one);
	pid = fork();
	if (pid == 0) {
		close(sv[0]); /* or its read would never see the end */
		while (read(sv[1], &c, 1) == 1 && write(sv[1], &c, 1) == 1)
			;
		_exit(0);
	}
	t0 = now_us();
	for (int i = 0; i < N; i++)
		if (write(sv[0], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
			die("ping-pong: %s", strerror(errno));
	t = now_us() - t0;
	close(sv[0]);
	close(sv[1]);
	waitpid(pid, NULL, 0);
	sched_setaffinity(0, sizeof(saved), &saved);
	return t / N / 2;
}

static struct primitives measure_primitives(void)
{
	enum { PAGES = 2048, FORKS = 100 };
	struct primitives m = {.hop_cross_cpu_us = hop_us(false), .hop_same_cpu_us = hop_us(true)};
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	double t0;

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	t0 = now_us();
	for (long i = 0; i < PAGES; i++)
		p[i * page] = 1;
	m.page_fault_us = (now_us() - t0) / PAGES;
	munmap(p, PAGES * page);
	for (int i = 0; i < FORKS; i++) {
		double t1, t2;
		pid_t pid;

		t1 = now_us();
		pid = fork();
		if (pid == 0)
			_exit(0);
		t2 = now_us();
		waitpid(pid, NULL, 0);
		m.fork_us += (t2 - t1) / FORKS;
		m.exit_wait_us += (now_us() - t2) / FORKS;
	}
	return m;
}

/* ---- client children ---- */

enum op { OP_LOAD, OP_POLICY };

struct client_arg {
	enum op op;
	const struct obj *o;
	size_t iterations; /* or, if 0, run until deadline */
	double seconds;
	volatile double *start; /* shared: set by the parent when all are connected */
	int ready_fd, go_fd;
	int close_fds[2]; /* the parent's ends, closed in the child (or -1) */
	struct slot *s;
};

static int client_main(void *v)
{
	struct client_arg *a = v;
	struct bpfbroker *b = connect_or_die();
	char c = 0, *json;
	double deadline;

	if (a->ready_fd >= 0) {
		/* Else the read below would not see EOF when the parent closes its end. */
		close(a->close_fds[0]);
		close(a->close_fds[1]);
		/* Warm up this connection, then wait for the others. */
		if (a->op == OP_POLICY && bpfbroker_policy(b, &json, NULL) == 0)
			free(json);
		if (a->op == OP_LOAD &&
		    load_one(b, a->o, NULL, a->s->error, sizeof(a->s->error)) < 0)
			return 4;
		if (write(a->ready_fd, "r", 1) != 1 || read(a->go_fd, &c, 1) < 0)
			return 3;
	} else if (a->op == OP_LOAD) {
		if (load_one(b, a->o, NULL, a->s->error, sizeof(a->s->error)) < 0) /* warm-up */
			return 4;
	}
	deadline = (a->start ? *a->start : now_us()) + a->seconds * 1e6;
	for (size_t i = 0;; i++) {
		double t0, t1;
		int r;

		if (a->iterations ? i >= a->iterations : now_us() >= deadline)
			break;
		t0 = now_us();
		if (a->op == OP_LOAD) {
			r = load_one(b, a->o, NULL, a->s->error, sizeof(a->s->error));
		} else {
			r = bpfbroker_policy(b, &json, NULL);
			if (r == 0)
				free(json);
		}
		t1 = now_us();
		if (r < 0) {
			a->s->errors++;
			if (a->iterations)
				return 5;
			continue;
		}
		if (a->s->n < SLOT_CAP)
			a->s->lat[a->s->n] = t1 - t0;
		a->s->n++;
	}
	a->s->t_end = now_us();
	bpfbroker_close(b);
	return 0;
}

static struct stats direct_load_capbpf(struct obj *o, size_t n)
{
	struct slot *s = shared_alloc(sizeof(*s));
	struct direct_arg a = {.o = o, .n = n, .s = s};
	struct stats st;
	int r = run_as(0, direct_capbpf_main, &a);

	if (r != 0)
		die("direct load of %s with CAP_BPF only failed (%d): %s", o->name, r, s->error);
	st = compute(s->lat, s->n);
	munmap(s, sizeof(*s));
	return st;
}

/* (b): N loads of o through the broker as uid, one connection. */
static struct stats broker_load(const struct obj *o, size_t n, uid_t uid)
{
	struct slot *s = shared_alloc(sizeof(*s));
	struct client_arg a = {.op = OP_LOAD, .o = o, .iterations = n, .ready_fd = -1, .s = s};
	struct stats st;
	int r = run_as(uid, client_main, &a);

	if (r != 0)
		die("broker load of %s as uid %d failed (%d): %s", o->name, (int)uid, r, s->error);
	st = compute(s->lat, s->n < SLOT_CAP ? s->n : SLOT_CAP);
	munmap(s, sizeof(*s));
	return st;
}

struct concurrency {
	int clients;
	double per_s, seconds;
	size_t total, errors;
	struct stats lat;
};

/* n clients (uids FIRST_UID..) doing op for `seconds` at once. */
static struct concurrency run_concurrent(int n, enum op op, const struct obj *o, double seconds)
{
	struct slot *s = shared_alloc(sizeof(*s) * n);
	volatile double *start = shared_alloc(sizeof(double));
	struct concurrency c = {.clients = n};
	int ready[2], go[2];
	pid_t pids[MAX_CLIENTS];
	double *all, t_end = 0;
	size_t m = 0;
	char ch;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		struct client_arg a = {.op = op,
				       .o = o,
				       .seconds = seconds,
				       .start = start,
				       .ready_fd = ready[1],
				       .go_fd = go[0],
				       .close_fds = {ready[0], go[1]},
				       .s = &s[i]};

		pids[i] = spawn_as(FIRST_UID + i, client_main, &a);
	}
	close(ready[1]);
	close(go[0]);
	for (int i = 0; i < n; i++)
		if (read(ready[0], &ch, 1) != 1)
			die("a concurrent client died before starting");
	*start = now_us();
	close(go[1]); /* releases them all */
	for (int i = 0; i < n; i++)
		if (wait_child(pids[i]) != 0)
			die("concurrent client %d failed: %s", i, s[i].error);
	close(ready[0]);
	all = malloc(sizeof(double) * SLOT_CAP * n);
	for (int i = 0; i < n; i++) {
		size_t k = s[i].n < SLOT_CAP ? s[i].n : SLOT_CAP;

		memcpy(all + m, s[i].lat, k * sizeof(double));
		m += k;
		c.total += s[i].n;
		c.errors += s[i].errors;
		if (s[i].t_end > t_end)
			t_end = s[i].t_end;
	}
	c.seconds = (t_end - *start) / 1e6;
	c.per_s = c.total / c.seconds;
	c.lat = compute(all, m);
	free(all);
	munmap(s, sizeof(*s) * n);
	munmap((void *)start, sizeof(double));
	return c;
}

/* ---- whole processes (c) ---- */

static double time_process(uid_t uid, char *const argv[])
{
	double t0 = now_us();
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (uid != 0)
			drop_to(uid);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("%s %s %s failed (status %d)", argv[0], argv[1], argv[2], status);
	return now_us() - t0;
}

static struct stats process_bpfctl(const struct obj *o, size_t n)
{
	char *argv[] = {G.bpfctl,	 "--socket", G.socket,	  "run",
			(char *)o->path, "--",	     "/bin/true", NULL};
	double *v = malloc(sizeof(double) * n);
	struct stats s;

	time_process(TRUSTED, argv); /* warm-up */
	for (size_t i = 0; i < n; i++)
		v[i] = time_process(TRUSTED, argv);
	s = compute(v, n);
	free(v);
	return s;
}

/*
 * bpfctl load --name: like bpftool prog loadall, a persistent load whose
 * objects are pinned; the unload after each is not timed, as bpftool's pins
 * are removed untimed.
 */
static struct stats process_bpfctl_load(const struct obj *o, size_t n)
{
	char name[32];
	char *argv[] = {G.bpfctl,	 "--socket", G.socket, "load",
			(char *)o->path, "--name",   name,     NULL};
	char *unload[] = {G.bpfctl, "--socket", G.socket, "unload", name, NULL};
	double *v = malloc(sizeof(double) * (n + 1));
	struct stats s;

	for (size_t i = 0; i <= n; i++) { /* the first is a warm-up */
		snprintf(name, sizeof(name), "bench-c-%zu", i);
		v[i] = time_process(TRUSTED, argv);
		time_process(TRUSTED, unload);
	}
	s = compute(v + 1, n);
	free(v);
	return s;
}

/* What an exec of /bin/true costs by itself: part of (c)'s bpfctl run. */
static struct stats process_true(size_t n)
{
	char *argv[] = {"/bin/true", NULL};
	double *v = malloc(sizeof(double) * n);
	struct stats s;

	for (size_t i = 0; i < n; i++)
		v[i] = time_process(TRUSTED, argv);
	s = compute(v, n);
	free(v);
	return s;
}

static struct stats process_bpftool(const struct obj *o, size_t n)
{
	char pin[128];
	char *argv[] = {G.bpftool, "prog", "loadall", (char *)o->path, pin, NULL};
	double *v = malloc(sizeof(double) * (n + 1));
	struct stats s;

	for (size_t i = 0; i <= n; i++) { /* the first is a warm-up */
		snprintf(pin, sizeof(pin), "/sys/fs/bpf/bench-%d-%zu", (int)getpid(), i);
		v[i] = time_process(0, argv);
		rm_rf(pin);
	}
	s = compute(v + 1, n);
	free(v);
	return s;
}

/* ---- scale: named objects, connections ---- */

struct named_arg {
	const struct obj *o;
	int phase; /* 0 load, 1 list, 2 unload */
	int lists; /* list requests in phase 1 (0: 7) */
	struct slot *s;
};

static int named_main(void *v)
{
	struct named_arg *a = v;
	struct bpfbroker *b = connect_or_die();
	char name[32], *json;

	for (int i = 0; i < (a->phase == 1 ? (a->lists ? a->lists : 7) : N_NAMED); i++) {
		struct bpfbroker_error *err = NULL;
		double t0 = now_us();
		int r;

		snprintf(name, sizeof(name), "n%d", i);
		if (a->phase == 0) {
			r = load_one(b, a->o, name, a->s->error, sizeof(a->s->error));
		} else if (a->phase == 1) {
			r = bpfbroker_list(b, NULL, &json, &err);
			if (r == 0) {
				a->s->errors = strlen(json); /* reply size, reported */
				free(json);
			}
		} else {
			r = bpfbroker_unload(b, name, &err);
		}
		if (r < 0) {
			snprintf(a->s->error, sizeof(a->s->error), "phase %d, %s: %s", a->phase,
				 name, err ? err->message : strerror(-r));
			return 6;
		}
		bpfbroker_error_free(err);
		a->s->lat[a->s->n++] = now_us() - t0;
	}
	bpfbroker_close(b);
	return 0;
}

struct conns_arg {
	int ready_fd, go_fd, close_fds[2];
};

static int conns_main(void *v)
{
	struct conns_arg *a = v;
	struct bpfbroker **b = calloc(N_CONNS, sizeof(*b));
	char c, *json;

	close(a->close_fds[0]);
	close(a->close_fds[1]);
	for (int i = 0; i < N_CONNS; i++)
		b[i] = connect_or_die();
	/* Once the last one is answered, the daemon has accepted them all. */
	if (bpfbroker_policy(b[N_CONNS - 1], &json, NULL) < 0)
		return 7;
	free(json);
	if (write(a->ready_fd, "r", 1) != 1 || read(a->go_fd, &c, 1) < 0)
		return 8;
	for (int i = 0; i < N_CONNS; i++)
		bpfbroker_close(b[i]);
	free(b);
	return 0;
}

/* Runs as root, raises RLIMIT_NOFILE, then drops to 65534. */
static pid_t spawn_conns(struct conns_arg *a)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		struct rlimit rl = {N_CONNS + 64, N_CONNS + 64};

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(9);
		drop_to(NOBODY);
		_exit(conns_main(a));
	}
	return pid;
}

/* ---- output ---- */

static void json_stats(FILE *j, const char *key, const struct stats *s)
{
	fprintf(j,
		"\"%s\": {\"n\": %zu, \"median_us\": %.1f, \"p99_us\": %.1f, \"mean_us\": %.1f, "
		"\"min_us\": %.1f, \"max_us\": %.1f}",
		key, s->n, s->median, s->p99, s->mean, s->min, s->max);
}

static void find_paths(const char *build_opt)
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
	struct obj objs[3] = {{.name = "tiny"}, {.name = "medium"}, {.name = "large"}};
	struct stats direct[3], direct_bpf[3], broker[3], broker_perf[3], pctl[3], pload[3],
		ptool[3], ptrue;
	struct primitives prim = {};
	struct concurrency conc[5], pol[2], single[2];
	struct stats single_tiny;
	const char *jobs_per_worker;
	static const int levels[5] = {1, 2, 4, 8, 32};
	struct stats named_load, named_list, named_unload, first100, last100;
	long rss_idle, rss_loads, rss_named, rss_conns, rss_conns_closed, wrss;
	size_t list_bytes, n_small, n_large, n_proc, n_rss_loads;
	double seconds, t0;
	size_t profile_loads = 0, profile_lists = 0;
	double profile_clients = 0;
	int c, nworkers, conn_fds;
	struct utsname un;
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
	n_small = G.quick ? 10 : 200;
	n_large = G.quick ? 3 : 50;
	n_proc = G.quick ? 3 : 50;
	n_rss_loads = G.quick ? 500 : 10000;
	seconds = G.quick ? 0.3 : 2.0;
	find_paths(build_opt);
	libbpf_set_print(libbpf_quiet);
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
		snprintf(src, sizeof(src), "%s/bench/bench_%s.bpf.o", G.build, objs[i].name);
		load_object(&objs[i], src);
	}
	start_daemon();
	usleep(300000);
	rss_idle = daemon_rss();
	wrss = workers_rss(&nworkers);
	if (profile_loads) {
		/* Just the loads, for `perf record -a` around this (bench/profile.sh). */
		struct stats st = broker_load(&objs[0], profile_loads, NOBODY);

		printf("%zu loads of tiny as uid %d: median %.0f us, p99 %.0f us\n", st.n, NOBODY,
		       st.median, st.p99);
		cleanup();
		return 0;
	}
	if (profile_clients > 0) {
		/*
		 * The concurrency section alone (its many clients churn through
		 * the pool's workers and spawners), for a quick before/after.
		 */
		for (int i = 0; i < 5; i++) {
			conc[i] = run_concurrent(levels[i], OP_LOAD, &objs[0], profile_clients);
			printf("%d clients: %.0f loads/s, median %.0f us, p99 %.0f us, %zu "
			       "errors\n",
			       levels[i], conc[i].per_s, conc[i].lat.median, conc[i].lat.p99,
			       conc[i].errors);
		}
		cleanup();
		return 0;
	}
	if (profile_lists) {
		/* The scale section's list alone, for perf or a quick before/after. */
		struct slot *s = shared_alloc(sizeof(*s));
		struct named_arg a = {.o = &objs[0], .s = s, .lists = (int)profile_lists};

		if (run_as(NOBODY, named_main, &a) != 0)
			die("named loads: %s", s->error);
		memset(s, 0, sizeof(*s));
		a.phase = 1;
		if (run_as(NOBODY, named_main, &a) != 0)
			die("list: %s", s->error);
		named_list = compute(s->lat, s->n);
		printf("%zu lists of %d objects as uid %d: median %.0f us, p99 %.0f us (%zu bytes "
		       "of JSON)\n",
		       s->n, N_NAMED, NOBODY, named_list.median, named_list.p99, (size_t)s->errors);
		memset(s, 0, sizeof(*s));
		a.phase = 2;
		if (run_as(NOBODY, named_main, &a) != 0)
			die("unload: %s", s->error);
		munmap(s, sizeof(*s));
		cleanup();
		return 0;
	}
	uname(&un);
	printf("bpfbroker-bench%s: kernel %s, %ld CPUs, daemon pid %d with a spawner and %d "
	       "pre-forked workers\n",
	       G.quick ? " (quick)" : "", un.release, sysconf(_SC_NPROCESSORS_ONLN), (int)G.daemon,
	       nworkers);
	printf("daemon RSS idle: %ld KiB (spawner and workers: %ld KiB together)\n", rss_idle,
	       wrss);
	/* What any design built of processes pays here: the scale for what follows. */
	prim = measure_primitives();
	printf("this machine: a message to a waiting process %.1f us (other CPU) / %.1f us (same "
	       "CPU), a page fault %.2f us, fork %.0f us, exit+wait %.0f us (small process)\n\n",
	       prim.hop_cross_cpu_us, prim.hop_same_cpu_us, prim.page_fault_us, prim.fork_us,
	       prim.exit_wait_us);

	/*
	 * 1, 2: load latency per object. (b) loads with the least privilege the
	 * program type needs (CAP_BPF for a socket filter): its floor is (a'),
	 * libbpf with CAP_BPF only. (b+) is a user whose policy grants
	 * load_with_perfmon, the verifier privileges root has: its floor is (a).
	 */
	printf("latency in us, median / p99\n");
	printf("%-7s %6s %8s | %-15s | %-15s | %-15s %5s | %-15s %5s\n", "object", "insns", "bytes",
	       "(a) libbpf root", "(a') CAP_BPF", "(b) broker", "b/a'", "(b+) +perfmon", "b+/a");
	for (int i = 0; i < 3; i++) {
		size_t n = i == 2 ? n_large : n_small;
		double *v = malloc(sizeof(double) * n);

		direct_load(&objs[i]); /* warm-up, counts instructions */
		for (size_t k = 0; k < n; k++)
			v[k] = direct_load(&objs[i]);
		direct[i] = compute(v, n);
		free(v);
		direct_bpf[i] = direct_load_capbpf(&objs[i], n);
		broker[i] = broker_load(&objs[i], n, NOBODY);
		broker_perf[i] = broker_load(&objs[i], n, TRUSTED);
		printf("%-7s %6u %8zu | %7.0f %7.0f | %7.0f %7.0f | %7.0f %7.0f %5.2f | %7.0f "
		       "%7.0f "
		       "%5.2f\n",
		       objs[i].name, objs[i].insns, objs[i].size, direct[i].median, direct[i].p99,
		       direct_bpf[i].median, direct_bpf[i].p99, broker[i].median, broker[i].p99,
		       broker[i].median / direct_bpf[i].median, broker_perf[i].median,
		       broker_perf[i].p99, broker_perf[i].median / direct[i].median);
	}

	/*
	 * (c): whole processes. bpfctl load --name pins, as bpftool prog loadall
	 * does; bpfctl run also execs a command, whose own cost is shown apart.
	 * bpfctl runs as the uid granted load_with_perfmon: the same verifier
	 * privileges as bpftool has as root.
	 */
	ptrue = process_true(n_proc);
	printf("\nwhole processes, us, median / p99 (an exec of /bin/true alone: %.0f / %.0f)\n",
	       ptrue.median, ptrue.p99);
	printf("%-7s | %-17s | %-17s | %-17s | %s\n", "object", "(c) bpfctl load",
	       "bpftool loadall", "bpfctl run -- true", "load/loadall");
	for (int i = 0; i < 3; i++) {
		pload[i] = process_bpfctl_load(&objs[i], n_proc);
		pctl[i] = process_bpfctl(&objs[i], n_proc);
		if (G.bpftool[0])
			ptool[i] = process_bpftool(&objs[i], n_proc);
		else
			ptool[i] = (struct stats){0};
		printf("%-7s | %8.0f %8.0f | %8.0f %8.0f | %8.0f %8.0f | %6.2f\n", objs[i].name,
		       pload[i].median, pload[i].p99, ptool[i].median, ptool[i].p99, pctl[i].median,
		       pctl[i].p99, ptool[i].n ? pload[i].median / ptool[i].median : NAN);
	}

	/* 3: concurrency */
	printf("\nconcurrent clients loading tiny for %.1f s (distinct uids)\n", seconds);
	printf("%8s %10s %12s %12s %8s\n", "clients", "loads/s", "median us", "p99 us", "errors");
	for (int i = 0; i < 5; i++) {
		conc[i] = run_concurrent(levels[i], OP_LOAD, &objs[0], seconds);
		printf("%8d %10.0f %12.0f %12.0f %8zu\n", levels[i], conc[i].per_s,
		       conc[i].lat.median, conc[i].lat.p99, conc[i].errors);
	}
	printf("\npolicy requests for %.1f s\n%8s %10s %12s %12s\n", seconds, "conns", "req/s",
	       "median us", "p99 us");
	for (int i = 0; i < 2; i++) {
		pol[i] = run_concurrent(i ? 8 : 1, OP_POLICY, NULL, seconds);
		printf("%8d %10.0f %12.1f %12.1f\n", pol[i].clients, pol[i].per_s,
		       pol[i].lat.median, pol[i].lat.p99);
	}

	/*
	 * The same with a fresh worker for every request (--jobs-per-worker 1,
	 * as before workers served several requests of a connection): in this
	 * run, so that the comparison is not run-to-run noise.
	 */
	jobs_per_worker = G.jobs_per_worker;
	restart_daemon("1");
	single_tiny = broker_load(&objs[0], n_small, NOBODY);
	for (int i = 0; i < 2; i++)
		single[i] = run_concurrent(i + 1, OP_LOAD, &objs[0], seconds);
	restart_daemon(jobs_per_worker);
	printf("\nthe same with a fresh worker per request (--jobs-per-worker 1): tiny %.0f / "
	       "%.0f us (b/a' %.2f, against %.2f); 1 client %.0f loads/s, 2 clients %.0f "
	       "(%.2fx, against %.2fx)\n",
	       single_tiny.median, single_tiny.p99, single_tiny.median / direct_bpf[0].median,
	       broker[0].median / direct_bpf[0].median, single[0].per_s, single[1].per_s,
	       single[1].per_s / single[0].per_s, conc[1].per_s / conc[0].per_s);

	/* 4: scale and memory */
	{
		struct slot *s = shared_alloc(sizeof(*s));
		struct named_arg a = {.o = &objs[0], .s = s};

		t0 = now_us();
		if (run_as(NOBODY, named_main, &a) != 0)
			die("named loads: %s", s->error);
		/* Does a named load get slower as the user has more? First and last 100. */
		first100 = compute(s->lat, 100);
		last100 = compute(s->lat + N_NAMED - 100, 100);
		named_load = compute(s->lat, s->n);
		printf("\n%d named loads of tiny: %.2f s, median %.0f us, p99 %.0f us (median of "
		       "the first 100 %.0f us, of the last 100 %.0f us)\n",
		       N_NAMED, (now_us() - t0) / 1e6, named_load.median, named_load.p99,
		       first100.median, last100.median);
		rss_named = daemon_rss();
		memset(s, 0, sizeof(*s));
		a.phase = 1;
		if (run_as(NOBODY, named_main, &a) != 0)
			die("list: %s", s->error);
		list_bytes = s->errors;
		named_list = compute(s->lat, s->n);
		printf("list with %d objects: median %.0f us, p99 %.0f us (%zu bytes of JSON)\n",
		       N_NAMED, named_list.median, named_list.p99, list_bytes);
		memset(s, 0, sizeof(*s));
		a.phase = 2;
		t0 = now_us();
		if (run_as(NOBODY, named_main, &a) != 0)
			die("unload: %s", s->error);
		named_unload = compute(s->lat, s->n);
		printf("unload all: %.2f s, median %.0f us, p99 %.0f us\n", (now_us() - t0) / 1e6,
		       named_unload.median, named_unload.p99);
		munmap(s, sizeof(*s));
	}
	{
		struct slot *s = shared_alloc(sizeof(*s));
		struct client_arg a = {.op = OP_LOAD,
				       .o = &objs[0],
				       .iterations = n_rss_loads,
				       .ready_fd = -1,
				       .s = s};
		long before = daemon_rss();

		t0 = now_us();
		if (run_as(NOBODY, client_main, &a) != 0)
			die("%zu loads: %s", n_rss_loads, s->error);
		rss_loads = daemon_rss();
		printf("\ndaemon RSS: idle %ld KiB, with %d named objects %ld KiB, before %zu "
		       "loads "
		       "%ld KiB, after %ld KiB (%.0f loads/s on one connection)\n",
		       rss_idle, N_NAMED, rss_named, n_rss_loads, before, rss_loads,
		       n_rss_loads / ((now_us() - t0) / 1e6));
		munmap(s, sizeof(*s));
	}
	{
		int ready[2], go[2];
		struct conns_arg a;
		pid_t pid;
		char ch;

		if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0)
			die("pipe: %s", strerror(errno));
		a = (struct conns_arg){
			.ready_fd = ready[1], .go_fd = go[0], .close_fds = {ready[0], go[1]}};
		pid = spawn_conns(&a);
		close(ready[1]);
		close(go[0]);
		if (read(ready[0], &ch, 1) != 1)
			die("the connection holder failed (status %d)", wait_child(pid));
		usleep(200000);
		rss_conns = daemon_rss();
		conn_fds = daemon_fds();
		close(go[1]);
		if (wait_child(pid) != 0)
			die("the connection holder failed");
		close(ready[0]);
		usleep(300000);
		rss_conns_closed = daemon_rss();
		printf("daemon RSS with %d idle connections: %ld KiB (%d fds open), after they "
		       "closed: %ld KiB\n",
		       N_CONNS, rss_conns, conn_fds, rss_conns_closed);
	}

	/* The targets, each as measured in this run against its limit. */
	const struct {
		const char *what;
		double value, limit;
		bool at_least; /* the value must reach the limit, not stay under it */
		const char *unit;
	} targets[] = {
		{"tiny load, broker / libbpf with CAP_BPF (b/a')",
		 broker[0].median / direct_bpf[0].median, 2.5, false, "x"},
		{"medium load, b/a'", broker[1].median / direct_bpf[1].median, 1.3, false, "x"},
		{"large load, b/a'", broker[2].median / direct_bpf[2].median, 1.05, false, "x"},
		{"bpfctl load / bpftool prog loadall, tiny",
		 ptool[0].n ? pload[0].median / ptool[0].median : NAN, 1.5, false, "x"},
		{"2 clients / 1 client, loads/s", conc[1].per_s / conc[0].per_s, 1.6, true, "x"},
		{"list of 1,000 objects, median", named_list.median / 1000, 30, false, " ms"},
		{"daemon RSS idle", rss_idle / 1024.0, 4, false, " MiB"},
	};

	printf("\ntargets (this run; %s)\n", G.quick ? "quick: too few samples to judge"
						     : "compare ratios, not absolute figures");
	for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
		bool met = targets[i].at_least ? targets[i].value >= targets[i].limit
					       : targets[i].value <= targets[i].limit;

		printf("  %-46s %8.2f%s  %s %5.2f%s  %s\n", targets[i].what, targets[i].value,
		       targets[i].unit, targets[i].at_least ? ">=" : "<=", targets[i].limit,
		       targets[i].unit,
		       isnan(targets[i].value) ? "not measured (no bpftool)"
		       : met		       ? "met"
					       : "NOT MET");
	}

	if (json_path) {
		FILE *j = fopen(json_path, "we");

		if (!j)
			die("%s: %s", json_path, strerror(errno));
		fprintf(j, "{\n  \"quick\": %s,\n  \"kernel\": \"%s\",\n  \"cpus\": %ld,\n",
			G.quick ? "true" : "false", un.release, sysconf(_SC_NPROCESSORS_ONLN));
		fprintf(j,
			"  \"machine\": {\"hop_cross_cpu_us\": %.2f, \"hop_same_cpu_us\": %.2f, "
			"\"page_fault_us\": %.3f, \"fork_us\": %.1f, \"exit_wait_us\": %.1f},\n",
			prim.hop_cross_cpu_us, prim.hop_same_cpu_us, prim.page_fault_us,
			prim.fork_us, prim.exit_wait_us);
		fprintf(j, "  \"daemon_workers\": %d,\n  \"load\": [\n", nworkers);
		for (int i = 0; i < 3; i++) {
			fprintf(j, "    {\"object\": \"%s\", \"insns\": %u, \"bytes\": %zu,\n     ",
				objs[i].name, objs[i].insns, objs[i].size);
			json_stats(j, "direct", &direct[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "direct_cap_bpf", &direct_bpf[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "broker", &broker[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "broker_load_with_perfmon", &broker_perf[i]);
			fprintf(j,
				",\n     \"ratio_broker_direct\": %.3f, "
				"\"ratio_broker_direct_cap_bpf\": %.3f, "
				"\"ratio_broker_perfmon_direct\": %.3f}%s\n",
				broker[i].median / direct[i].median,
				broker[i].median / direct_bpf[i].median,
				broker_perf[i].median / direct[i].median, i < 2 ? "," : "");
		}
		fprintf(j, "  ],\n  \"exec_true\": {");
		json_stats(j, "process", &ptrue);
		fprintf(j, "},\n  \"process\": [\n");
		for (int i = 0; i < 3; i++) {
			fprintf(j, "    {\"object\": \"%s\", \"insns\": %u,\n     ", objs[i].name,
				objs[i].insns);
			json_stats(j, "bpfctl_load", &pload[i]);
			fprintf(j, ",\n     ");
			json_stats(j, "bpfctl_run", &pctl[i]);
			if (ptool[i].n) {
				fprintf(j, ",\n     ");
				json_stats(j, "bpftool_loadall", &ptool[i]);
				fprintf(j, ",\n     \"ratio_bpfctl_load_bpftool\": %.3f",
					pload[i].median / ptool[i].median);
			}
			fprintf(j, "}%s\n", i < 2 ? "," : "");
		}
		fprintf(j,
			"  ],\n  \"concurrency\": {\"object\": \"tiny\", \"seconds\": %.2f, "
			"\"levels\": [\n",
			seconds);
		for (int i = 0; i < 5; i++) {
			fprintf(j,
				"    {\"clients\": %d, \"loads\": %zu, \"errors\": %zu, "
				"\"loads_per_s\": %.1f, ",
				conc[i].clients, conc[i].total, conc[i].errors, conc[i].per_s);
			json_stats(j, "latency", &conc[i].lat);
			fprintf(j, "}%s\n", i < 4 ? "," : "");
		}
		fprintf(j, "  ]},\n  \"policy_requests\": [\n");
		for (int i = 0; i < 2; i++) {
			fprintf(j,
				"    {\"connections\": %d, \"requests\": %zu, \"requests_per_s\": "
				"%.1f, ",
				pol[i].clients, pol[i].total, pol[i].per_s);
			json_stats(j, "latency", &pol[i].lat);
			fprintf(j, "}%s\n", i < 1 ? "," : "");
		}
		fprintf(j, "  ],\n  \"named\": {\"objects\": %d, \"list_json_bytes\": %zu,\n    ",
			N_NAMED, list_bytes);
		json_stats(j, "load", &named_load);
		fprintf(j, ",\n    ");
		json_stats(j, "load_first_100", &first100);
		fprintf(j, ",\n    ");
		json_stats(j, "load_last_100", &last100);
		fprintf(j, ",\n    ");
		json_stats(j, "list", &named_list);
		fprintf(j, ",\n    ");
		json_stats(j, "unload", &named_unload);
		fprintf(j,
			"},\n  \"rss_kib\": {\"idle\": %ld, \"workers_idle\": %ld, \"with_named\": "
			"%ld, \"loads\": %zu, \"after_loads\": %ld, \"idle_connections\": %d, "
			"\"with_connections\": %ld, \"daemon_fds_with_connections\": %d, "
			"\"after_connections_closed\": %ld},\n",
			rss_idle, wrss, rss_named, n_rss_loads, rss_loads, N_CONNS, rss_conns,
			conn_fds, rss_conns_closed);
		fprintf(j,
			"  \"single_use_workers\": {\"tiny_ratio_broker_direct_cap_bpf\": "
			"%.3f, \"loads_per_s_1\": %.1f, \"loads_per_s_2\": %.1f},\n  "
			"\"targets\": [\n",
			single_tiny.median / direct_bpf[0].median, single[0].per_s,
			single[1].per_s);
		for (size_t i = 0; i < ARRAY_SIZE(targets); i++)
			fprintf(j,
				"    {\"target\": \"%s\", \"value\": %.3f, \"limit\": %.3f, "
				"\"at_least\": %s}%s\n",
				targets[i].what, isnan(targets[i].value) ? -1.0 : targets[i].value,
				targets[i].limit, targets[i].at_least ? "true" : "false",
				i + 1 < ARRAY_SIZE(targets) ? "," : "");
		fprintf(j, "  ]\n}\n");
		if (fclose(j) != 0)
			die("%s: %s", json_path, strerror(errno));
		printf("\nwrote %s\n", json_path);
	}
	cleanup();
	return 0;
}
