/* SPDX-License-Identifier: MIT */
/*
 * Stopping on SIGTERM or SIGINT: the server and the worker pool drained, then
 * exit, within a deadline.
 */
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "daemon/shared/log.h"

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
int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
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
