/* SPDX-License-Identifier: MIT */
/*
 * What any design built of processes pays on this machine, the scale for the
 * rest: a message to a waiting process, a page fault, a fork and an exit.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

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

struct primitives measure_primitives(void)
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
