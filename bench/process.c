/* SPDX-License-Identifier: MIT */
/*
 * (c): whole processes timed from fork to exit: bpfctl load and bpfctl run
 * against bpftool prog loadall, and an exec of /bin/true for scale.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

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

void process_run(struct results *r)
{
	/*
	 * (c): whole processes. bpfctl load --name pins, as bpftool prog loadall
	 * does; bpfctl run also execs a command, whose own cost is shown apart.
	 * bpfctl runs as the uid granted load_with_perfmon: the same verifier
	 * privileges as bpftool has as root.
	 */
	r->ptrue = process_true(r->n_proc);
	printf("\nwhole processes, us, median / p99 (an exec of /bin/true alone: %.0f / %.0f)\n",
	       r->ptrue.median, r->ptrue.p99);
	printf("%-7s | %-17s | %-17s | %-17s | %s\n", "object", "(c) bpfctl load",
	       "bpftool loadall", "bpfctl run -- true", "load/loadall");
	for (int i = 0; i < 3; i++) {
		r->pload[i] = process_bpfctl_load(&r->objs[i], r->n_proc);
		r->pctl[i] = process_bpfctl(&r->objs[i], r->n_proc);
		if (G.bpftool[0])
			r->ptool[i] = process_bpftool(&r->objs[i], r->n_proc);
		else
			r->ptool[i] = (struct stats){0};
		printf("%-7s | %8.0f %8.0f | %8.0f %8.0f | %8.0f %8.0f | %6.2f\n", r->objs[i].name,
		       r->pload[i].median, r->pload[i].p99, r->ptool[i].median, r->ptool[i].p99,
		       r->pctl[i].median, r->pctl[i].p99,
		       r->ptool[i].n ? r->pload[i].median / r->ptool[i].median : NAN);
	}
}
