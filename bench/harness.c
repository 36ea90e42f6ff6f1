/* SPDX-License-Identifier: MIT */
/*
 * What every scenario of bpfbroker-bench uses: the clock and statistics,
 * cleaning up and dying cleanly, children run as another uid, and one load
 * through the broker.
 */
#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct bench_globals G = {.daemon = -1};

double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

void rm_rf(const char *path)
{
	if (path[0] && access(path, F_OK) == 0)
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void cleanup(void)
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

void die(const char *fmt, ...)
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

void on_signal(int sig)
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

struct stats compute(double *v, size_t n)
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

void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	return p;
}

void drop_to(uid_t uid)
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
pid_t spawn_as(uid_t uid, int (*fn)(void *), void *arg)
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

int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_as(uid_t uid, int (*fn)(void *), void *arg)
{
	return wait_child(spawn_as(uid, fn, arg));
}

struct bpfbroker *connect_or_die(void)
{
	struct bpfbroker *b;
	int r = bpfbroker_connect(G.socket, &b);

	if (r < 0) {
		fprintf(stderr, "connect %s: %s\n", G.socket, strerror(-r));
		_exit(2);
	}
	return b;
}

int load_one(struct bpfbroker *b, const struct obj *o, const char *name, char *msg, size_t msg_size)
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
