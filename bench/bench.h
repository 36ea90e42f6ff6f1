/* SPDX-License-Identifier: MIT */
/*
 * What bpfbroker-bench's files share (bench.c, harness.c, daemon.c,
 * primitives.c, latency.c, process.c, clients.c, scale.c, report.c): the
 * figures of one run, the objects loaded, and what each file gives the others.
 */
#pragma once

#include <libbpfbroker.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/utsname.h>

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

struct bench_globals {
	char build[PATH_MAX];
	char dir[64], socket[108], policy_dir[300], state_dir[300], pin_root[256], log[300];
	char bpfctl[PATH_MAX + 32], daemon_exe[PATH_MAX + 32], worker_exe[PATH_MAX + 32],
		bpftool[64];
	const char *workers;
	const char *jobs_per_worker; /* --jobs-per-worker of the daemon, NULL: its default */
	pid_t daemon;
	bool quick;
};
/* The paths and settings of this run (harness.c). */
extern struct bench_globals G;

struct primitives {
	double hop_cross_cpu_us, hop_same_cpu_us; /* one message to a blocked process */
	double page_fault_us; /* first touch of an anonymous page */
	double fork_us, exit_wait_us; /* of this (small) process */
};

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

struct concurrency {
	int clients;
	double per_s, seconds;
	size_t total, errors;
	struct stats lat;
};

/* Every figure of one run: what the sections measure and report.c prints and writes. */
struct results {
	struct obj objs[3]; /* tiny, medium, large */
	size_t n_small, n_large, n_proc, n_rss_loads; /* samples: fewer with --quick */
	double seconds; /* of each concurrency run */
	struct utsname un;
	int nworkers, conn_fds;
	struct primitives prim;
	struct stats direct[3], direct_bpf[3], broker[3], broker_perf[3], pctl[3], pload[3],
		ptool[3], ptrue;
	struct concurrency conc[5], pol[2], single[2];
	struct stats single_tiny;
	struct stats named_load, named_list, named_unload, first100, last100;
	long rss_idle, rss_loads, rss_named, rss_conns, rss_conns_closed, wrss;
	size_t list_bytes;
};

/* harness.c: timing, statistics, cleaning up, children as another uid, one load. */
double now_us(void);
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void rm_rf(const char *path);
void cleanup(void);
void on_signal(int sig);
struct stats compute(double *v, size_t n);
void *shared_alloc(size_t size);
void drop_to(uid_t uid);
pid_t spawn_as(uid_t uid, int (*fn)(void *), void *arg);
int wait_child(pid_t pid);
int run_as(uid_t uid, int (*fn)(void *), void *arg);
struct bpfbroker *connect_or_die(void);
int load_one(struct bpfbroker *b, const struct obj *o, const char *name, char *msg,
	     size_t msg_size);

/* daemon.c: the bpfbrokerd under test, and what it costs in memory and fds. */
void find_paths(const char *build_opt);
void write_policy(void);
void start_daemon(void);
void restart_daemon(const char *jobs_per_worker);
long daemon_rss(void);
long workers_rss(int *count);
int daemon_fds(void);

/* primitives.c: what a message between processes, a page fault and a fork cost here. */
struct primitives measure_primitives(void);

/* latency.c: (a), (a') and (b): one object loaded by libbpf and through the broker. */
void load_object(struct obj *o, const char *src);
void libbpf_quiet_init(void);
void latency_run(struct results *r);

/* process.c: (c): bpfctl and bpftool as whole processes. */
void process_run(struct results *r);

/* clients.c: a client's loop, and many clients at once. */
int client_main(void *v);
struct stats broker_load(const struct obj *o, size_t n, uid_t uid);
struct concurrency run_concurrent(int n, enum op op, const struct obj *o, double seconds);
void concurrency_run(struct results *r);
void single_use_run(struct results *r);
void clients_profile(const struct obj *o, double seconds);

/* scale.c: 1,000 named objects listed, many loads, 1,000 idle connections. */
void scale_run(struct results *r);
void scale_profile_list(const struct obj *o, size_t lists);

/* report.c: the targets, and the figures as JSON. */
void report(const struct results *r, const char *json_path);
