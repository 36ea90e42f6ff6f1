/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the job a worker takes from the event loop (daemon/shared/jobmsg.c),
 * decoded strictly; what decodes must encode back to the same bytes (one encoder, one
 * decoder). Seeds (corpus/fuzz_jobmsg/): a load, an attach with the netns flag and a unit, a
 * sweep, written by make_jobmsg_corpus.py in jobmsg.h's layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/jobmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of its own size, so reading past it is caught. */
	uint8_t *buf = malloc(size ? size : 1);
	char *ident = NULL, *again = NULL;
	size_t ident_len = 0, len = 0;
	struct jobmsg j = {};

	if (!buf)
		abort();
	memcpy(buf, data, size);
	if (jobmsg_decode(buf, size, &j) == 0) {
		if (strlen(j.params) != j.params_len)
			abort();
		if (jobmsg_identity_encode(&j.ident, &ident, &ident_len) < 0 ||
		    jobmsg_encode(j.method, j.flags, j.id, ident, ident_len, j.params, j.params_len,
				  &again, &len) < 0)
			abort();
		if (len != size || memcmp(again, buf, size) != 0)
			abort();
		free(ident);
		free(again);
		jobmsg_done(&j);
	}
	free(buf);
	return 0;
}
