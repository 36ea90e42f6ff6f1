/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the BTF a non-owner gets (daemon/worker/btffilter.c). The
 * input is two type ids (4 bytes each, native order) and then a raw BTF, as
 * the broker reads one back from the kernel. Whatever comes out must filter
 * again to exactly itself: only types reachable from the ids, renumbered,
 * with only their names.
 *
 * Seeds (corpus/fuzz_btffilter/): the .BTF sections of test objects
 * (llvm-objcopy --dump-section .BTF=...), each after the ids of a map's key
 * and value type in it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/worker/btffilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t ids[2], again_ids[2];
	void *out = NULL, *again = NULL;
	size_t out_size = 0, again_size = 0;

	if (size < sizeof(ids))
		return 0;
	memcpy(ids, data, sizeof(ids));
	if (btffilter_build(data + sizeof(ids), size - sizeof(ids), ids, 2, &out, &out_size) < 0 ||
	    !out)
		return 0;
	memcpy(again_ids, ids, sizeof(ids));
	if (btffilter_build(out, out_size, again_ids, 2, &again, &again_size) < 0 || !again ||
	    again_size != out_size || memcmp(again, out, out_size) != 0 ||
	    memcmp(again_ids, ids, sizeof(ids)) != 0)
		abort();
	free(again);
	free(out);
	return 0;
}
