/* SPDX-License-Identifier: MIT */
#include "caps.h"

#include <errno.h>
#include <sys/prctl.h>

#include "common/macro.h"

/*
 * What a worker may ever need, and why:
 *  CAP_BPF       - program and map creation, BTF load;
 *  CAP_PERFMON   - tracing program types and helpers that read memory;
 *  CAP_NET_ADMIN - networking program types and socket/device map types;
 *  CAP_SYS_ADMIN - BPF_MAP_GET_FD_BY_ID, the only way to open a map with
 *                  BPF_F_RDONLY/BPF_F_WRONLY, and BPF_OBJ_GET_INFO details.
 */
static const cap_value_t worker_caps[] = {CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN, CAP_SYS_ADMIN};

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}

int caps_worker_init(void)
{
	_cleanup_(cap_freep) cap_t c = cap_init(); /* all clear */

	if (!c)
		return -ENOMEM;
	if (cap_set_flag(c, CAP_PERMITTED, ARRAY_SIZE(worker_caps), worker_caps, CAP_SET) < 0)
		return negative_errno();
	/* Keep the capabilities when nothing else changes; uid stays 0. */
	if (cap_set_proc(c) < 0)
		return negative_errno();
	return 0;
}

int caps_set_effective(const cap_value_t *caps, int n)
{
	_cleanup_(cap_freep) cap_t c = cap_get_proc();

	if (!c)
		return negative_errno();
	if (cap_clear_flag(c, CAP_EFFECTIVE) < 0)
		return negative_errno();
	if (n > 0 && cap_set_flag(c, CAP_EFFECTIVE, n, caps, CAP_SET) < 0)
		return negative_errno();
	if (cap_set_proc(c) < 0)
		return negative_errno();
	return 0;
}

int caps_clear_effective(void)
{
	return caps_set_effective(NULL, 0);
}

bool caps_is_effective(cap_value_t cap)
{
	_cleanup_(cap_freep) cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!c || cap_get_flag(c, cap, CAP_EFFECTIVE, &v) < 0)
		return false;
	return v == CAP_SET;
}
