/* SPDX-License-Identifier: MIT */
/*
 * bpfctl ringbuf: print a ring buffer's records as they come, until a signal
 * or --count records.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>

#include "bpfctl.h"
#include "common/hex.h"
#include "common/macro.h"

struct ringbuf_print {
	bool json;
	uint64_t seen, count;
};

static int ringbuf_print_record(void *ctx, const void *data, size_t size)
{
	struct ringbuf_print *p = ctx;
	_cleanup_free_ char *hex = p->json ? hex_encode(data, size) : format_hex(data, size);

	if (!hex)
		return -ENOMEM;
	if (p->json)
		printf("{\"size\":%zu,\"data\":\"%s\"}\n", size, hex);
	else
		printf("%s\n", hex);
	fflush(stdout);
	/* Stop right after the last record wanted: the rest stays for the next consumer. */
	return ++p->seen == p->count ? -ECANCELED : 0;
}

/*
 * Consume until SIGINT or SIGTERM (or --count records): both are blocked and
 * read from a signalfd polled with the ring, so none is lost between a check
 * and the wait.
 */
static int ringbuf_follow(struct bpfbroker_ringbuf *rb)
{
	_cleanup_close_ int sfd = -1;
	sigset_t mask;
	int k;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negative_errno();
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return negative_errno();
	/* What is already there first, then whatever comes. */
	for (k = bpfbroker_ringbuf_consume(rb); k >= 0; k = bpfbroker_ringbuf_consume(rb)) {
		struct pollfd fds[] = {{.fd = bpfbroker_ringbuf_epoll_fd(rb), .events = POLLIN},
				       {.fd = sfd, .events = POLLIN}};

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			return negative_errno();
		if (fds[1].revents)
			return 0;
	}
	return k == -ECANCELED ? 0 : k;
}

/* Print a ring buffer's records as they come, until a signal or --count records. */
int cmd_ringbuf(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct ringbuf_print p = {.json = c->json, .count = c->count};
	struct bpfbroker_ringbuf *rb = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	const struct bpfbroker_map *m;
	char *ref, *name;
	int k;

	if (split_ref(argv[0], "MAP", &ref, &name) < 0)
		return EXIT_ERROR;
	k = bpfbroker_fds(b, ref, &r, &e);
	if (k < 0)
		return report_error(c, k, e, ref);
	m = bpfbroker_result_map(r, name);
	if (!m || m->access != BPFBROKER_ACCESS_CONSUME || m->fd < 0) {
		fprintf(stderr, "bpfctl: map %s: %s\n", name,
			!m ? "not in this object, or not yours (ring buffers are not shared)"
			: strcmp(m->type, "ringbuf") != 0 ? "not a ring buffer"
							  : "your policy does not grant consume");
		bpfbroker_result_free(r);
		return EXIT_DENIED;
	}
	k = bpfbroker_ringbuf_new(m->fd, m->max_entries, ringbuf_print_record, &p, &rb);
	bpfbroker_result_free(r);
	if (k < 0)
		return die_errno(k, "cannot map the ring buffer");
	k = ringbuf_follow(rb);
	bpfbroker_ringbuf_free(rb);
	return k < 0 ? die_errno(k, "ring buffer") : EXIT_SUCCESS;
}
