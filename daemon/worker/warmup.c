/* SPDX-License-Identifier: MIT */
/* libbpf's kernel feature probes, run once in the spawner for every worker it forks. */
#include "warmup.h"

#include <bpf/libbpf.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"

extern const unsigned char warmup_object[];
extern const size_t warmup_object_size;

/*
 * libbpf probes kernel features lazily and caches the answers in the
 * process. Workers are forked from the spawner: probing there, once, with our
 * own compiled-in object (not a client's) saves every load the probes. A
 * failure only means workers probe themselves.
 */
void warmup_libbpf(void)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "warmup");
	struct bpf_object *obj;
	int k;

	obj = bpf_object__open_mem(warmup_object, warmup_object_size, &opts);
	if (!obj) {
		log_debug("libbpf warm-up: cannot open our object");
		return;
	}
	k = caps_set_effective(bpf_cap, 1);
	if (k >= 0)
		k = bpf_object__load(obj);
	caps_clear_effective();
	bpf_object__close(obj);
	if (k < 0)
		log_debug("libbpf warm-up: %s", strerror(-k));
}
