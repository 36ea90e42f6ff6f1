/* SPDX-License-Identifier: MIT */
/* Opening the fds a client gets: maps with exactly the granted access. */
#pragma once

#include <stdint.h>

#include "policy/policy.h"

/*
 * A new fd for the map behind map_fd, opened with exactly access (not NONE),
 * and its kernel id. Raises CAP_SYS_ADMIN for BPF_MAP_GET_FD_BY_ID only.
 */
int handout_map_fd(int map_fd, enum map_access access, uint32_t *ret_id);
/* A program's kernel id and tag (hex, 17 bytes with NUL). */
int handout_prog_info(int prog_fd, uint32_t *ret_id, char ret_tag[17]);
