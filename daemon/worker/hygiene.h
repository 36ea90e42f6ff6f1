/* SPDX-License-Identifier: MIT */
/*
 * What a worker checks and puts back between two jobs of one connection, so
 * that what a request left in the process (a raised capability, an fd, a
 * namespace, a signal handler, an rlimit, a working directory, memory) never
 * reaches the next one: the state taken before the first job is the state
 * every later job starts from, or the worker exits and the pool starts the
 * next job in a fresh one.
 *
 * This catches our own bugs and libbpf's (a leaked fd, a netns not left), not
 * a worker an object has taken over: such a worker could fake any check. See
 * SECURITY.md, "Workers serve one connection", for why that is acceptable.
 */
#pragma once

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#define HYGIENE_N_NS 4 /* net, mnt, user, pid: the namespaces we check we are still in */
/* A worker starts with stdio, its socket and its journald socket: room to spare. */
#define HYGIENE_MAX_FDS 16

struct hygiene_file {
	int fd;
	dev_t dev;
	ino_t ino;
};

struct hygiene_baseline {
	/*
	 * Open fds, stdio and the socket to the event loop: each by number and
	 * what it is, for a job that closes one and leaks another keeps the count.
	 */
	struct hygiene_file fds[HYGIENE_MAX_FDS];
	unsigned n_fds;
	struct {
		dev_t dev;
		ino_t ino;
	} ns[HYGIENE_N_NS], cwd, root;
	struct rlimit rlimits[RLIM_NLIMITS];
	struct sigaction signals[_NSIG];
	mode_t umask;
	uid_t uid[3];
	gid_t gid[3];
	uint64_t rss_max_bytes; /* resident memory past this: the worker is done */
};

/*
 * Take the state the worker is in before its first job. rss_growth: how far
 * its resident memory may grow over what it is now before it exits.
 */
int hygiene_baseline_take(struct hygiene_baseline *b, uint64_t rss_growth);

/*
 * After a job: put back what a job may change on purpose (signal dispositions
 * and mask, the interval timer, the umask, libbpf's log, per-job caches),
 * then check the rest. 0 if the next job may run here; -errno if not, with
 * why (for the log) in why.
 */
int hygiene_restore(const struct hygiene_baseline *b, char *why, size_t size);
