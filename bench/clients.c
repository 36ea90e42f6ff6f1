/* SPDX-License-Identifier: MIT */
/*
 * Clients of the broker: one client's loop of loads or policy requests, and
 * 1 to 32 clients of distinct uids at once, with reused workers and with a
 * fresh worker per request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

static const int levels[5] = {1, 2, 4, 8, 32};

int client_main(void *v)
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

/* (b): N loads of o through the broker as uid, one connection. */
struct stats broker_load(const struct obj *o, size_t n, uid_t uid)
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

/* n clients (uids FIRST_UID..) doing op for `seconds` at once. */
struct concurrency run_concurrent(int n, enum op op, const struct obj *o, double seconds)
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

void concurrency_run(struct results *r)
{
	/* 3: concurrency */
	printf("\nconcurrent clients loading tiny for %.1f s (distinct uids)\n", r->seconds);
	printf("%8s %10s %12s %12s %8s\n", "clients", "loads/s", "median us", "p99 us", "errors");
	for (int i = 0; i < 5; i++) {
		r->conc[i] = run_concurrent(levels[i], OP_LOAD, &r->objs[0], r->seconds);
		printf("%8d %10.0f %12.0f %12.0f %8zu\n", levels[i], r->conc[i].per_s,
		       r->conc[i].lat.median, r->conc[i].lat.p99, r->conc[i].errors);
	}
	printf("\npolicy requests for %.1f s\n%8s %10s %12s %12s\n", r->seconds, "conns", "req/s",
	       "median us", "p99 us");
	for (int i = 0; i < 2; i++) {
		r->pol[i] = run_concurrent(i ? 8 : 1, OP_POLICY, NULL, r->seconds);
		printf("%8d %10.0f %12.1f %12.1f\n", r->pol[i].clients, r->pol[i].per_s,
		       r->pol[i].lat.median, r->pol[i].lat.p99);
	}
}

void single_use_run(struct results *r)
{
	const char *jobs_per_worker;

	/*
	 * The same with a fresh worker for every request (--jobs-per-worker 1,
	 * as before workers served several requests of a connection): in this
	 * run, so that the comparison is not run-to-run noise.
	 */
	jobs_per_worker = G.jobs_per_worker;
	restart_daemon("1");
	r->single_tiny = broker_load(&r->objs[0], r->n_small, NOBODY);
	for (int i = 0; i < 2; i++)
		r->single[i] = run_concurrent(i + 1, OP_LOAD, &r->objs[0], r->seconds);
	restart_daemon(jobs_per_worker);
	printf("\nthe same with a fresh worker per request (--jobs-per-worker 1): tiny %.0f / "
	       "%.0f us (b/a' %.2f, against %.2f); 1 client %.0f loads/s, 2 clients %.0f "
	       "(%.2fx, against %.2fx)\n",
	       r->single_tiny.median, r->single_tiny.p99,
	       r->single_tiny.median / r->direct_bpf[0].median,
	       r->broker[0].median / r->direct_bpf[0].median, r->single[0].per_s,
	       r->single[1].per_s, r->single[1].per_s / r->single[0].per_s,
	       r->conc[1].per_s / r->conc[0].per_s);
}

/*
 * The concurrency section alone (its many clients churn through
 * the pool's workers and spawners), for a quick before/after.
 */
void clients_profile(const struct obj *o, double seconds)
{
	struct concurrency conc[5];

	for (int i = 0; i < 5; i++) {
		conc[i] = run_concurrent(levels[i], OP_LOAD, o, seconds);
		printf("%d clients: %.0f loads/s, median %.0f us, p99 %.0f us, %zu "
		       "errors\n",
		       levels[i], conc[i].per_s, conc[i].lat.median, conc[i].lat.p99,
		       conc[i].errors);
	}
}
