/* SPDX-License-Identifier: MIT */
/* Map access straight on a map's fd, for callers that hold one. */
#include "libbpfbroker.h"

#include <bpf/bpf.h>

#include "common/macro.h"

int bpfbroker_map_lookup(int map_fd, const void *key, void *value)
{
	return bpf_map_lookup_elem(map_fd, key, value) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_update(int map_fd, const void *key, const void *value, uint64_t flags)
{
	return bpf_map_update_elem(map_fd, key, value, flags) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_delete(int map_fd, const void *key)
{
	return bpf_map_delete_elem(map_fd, key) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_next_key(int map_fd, const void *key, void *next_key)
{
	return bpf_map_get_next_key(map_fd, key, next_key) < 0 ? negative_errno() : 0;
}
