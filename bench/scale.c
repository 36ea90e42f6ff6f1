/* SPDX-License-Identifier: MIT */
/*
 * Scale and memory: 1,000 named objects loaded, listed and unloaded, the
 * daemon's RSS after many loads, and 1,000 idle connections held.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

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

void scale_run(struct results *r)
{
	double t0;

	/* 4: scale and memory */
	{
		struct slot *s = shared_alloc(sizeof(*s));
		struct named_arg a = {.o = &r->objs[0], .s = s};

		t0 = now_us();
		if (run_as(NOBODY, named_main, &a) != 0)
			die("named loads: %s", s->error);
		/* Does a named load get slower as the user has more? First and last 100. */
		r->first100 = compute(s->lat, 100);
		r->last100 = compute(s->lat + N_NAMED - 100, 100);
		r->named_load = compute(s->lat, s->n);
		printf("\n%d named loads of tiny: %.2f s, median %.0f us, p99 %.0f us (median of "
		       "the first 100 %.0f us, of the last 100 %.0f us)\n",
		       N_NAMED, (now_us() - t0) / 1e6, r->named_load.median, r->named_load.p99,
		       r->first100.median, r->last100.median);
		r->rss_named = daemon_rss();
		memset(s, 0, sizeof(*s));
		a.phase = 1;
		if (run_as(NOBODY, named_main, &a) != 0)
			die("list: %s", s->error);
		r->list_bytes = s->errors;
		r->named_list = compute(s->lat, s->n);
		printf("list with %d objects: median %.0f us, p99 %.0f us (%zu bytes of JSON)\n",
		       N_NAMED, r->named_list.median, r->named_list.p99, r->list_bytes);
		memset(s, 0, sizeof(*s));
		a.phase = 2;
		t0 = now_us();
		if (run_as(NOBODY, named_main, &a) != 0)
			die("unload: %s", s->error);
		r->named_unload = compute(s->lat, s->n);
		printf("unload all: %.2f s, median %.0f us, p99 %.0f us\n", (now_us() - t0) / 1e6,
		       r->named_unload.median, r->named_unload.p99);
		munmap(s, sizeof(*s));
	}
	{
		struct slot *s = shared_alloc(sizeof(*s));
		struct client_arg a = {.op = OP_LOAD,
				       .o = &r->objs[0],
				       .iterations = r->n_rss_loads,
				       .ready_fd = -1,
				       .s = s};
		long before = daemon_rss();

		t0 = now_us();
		if (run_as(NOBODY, client_main, &a) != 0)
			die("%zu loads: %s", r->n_rss_loads, s->error);
		r->rss_loads = daemon_rss();
		printf("\ndaemon RSS: idle %ld KiB, with %d named objects %ld KiB, before %zu "
		       "loads "
		       "%ld KiB, after %ld KiB (%.0f loads/s on one connection)\n",
		       r->rss_idle, N_NAMED, r->rss_named, r->n_rss_loads, before, r->rss_loads,
		       r->n_rss_loads / ((now_us() - t0) / 1e6));
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
		r->rss_conns = daemon_rss();
		r->conn_fds = daemon_fds();
		close(go[1]);
		if (wait_child(pid) != 0)
			die("the connection holder failed");
		close(ready[0]);
		usleep(300000);
		r->rss_conns_closed = daemon_rss();
		printf("daemon RSS with %d idle connections: %ld KiB (%d fds open), after they "
		       "closed: %ld KiB\n",
		       N_CONNS, r->rss_conns, r->conn_fds, r->rss_conns_closed);
	}
}

/* The scale section's list alone, for perf or a quick before/after. */
void scale_profile_list(const struct obj *o, size_t lists)
{
	struct stats named_list;
	struct slot *s = shared_alloc(sizeof(*s));
	struct named_arg a = {.o = o, .s = s, .lists = (int)lists};

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
}
