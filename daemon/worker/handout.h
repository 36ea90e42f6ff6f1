/* SPDX-License-Identifier: MIT */
/* Opening the fds a client gets: maps with exactly the granted access. */
#pragma once

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/*
 * The writable-bpffs guard. While any bpffs this process sees is writable by
 * someone other than root, an ro or wo map fd could be pinned there and
 * reopened read-write, so they are not handed out: 0 when they may be, else
 * -EACCES with msg saying which mount and how to fix it. The result is kept
 * until handout_forget(): a worker checks again for each job, as a fresh one
 * would (a mount or sysctl may change between two jobs of one connection).
 */
int handout_check_bpffs(char *msg, size_t size);
void handout_forget(void);
/* The administrator's explicit opt-out (--allow-writable-bpffs). */
void handout_allow_writable_bpffs(bool allow);

/*
 * Around several handout_map_fd() calls: CAP_SYS_ADMIN raised once, not per
 * map. handout_batch_end() drops every effective capability.
 */
int handout_batch_begin(void);
void handout_batch_end(void);

/* What the kernel says of a map handed out. */
struct handout_map {
	uint32_t id;
	uint32_t map_flags;
	bool frozen; /* BPF_MAP_FREEZE: no fd may write it from user space */
};

/*
 * A new fd for the map behind map_fd, opened with exactly access (not NONE),
 * and what the kernel says of the map. Raises CAP_SYS_ADMIN for
 * BPF_MAP_GET_FD_BY_ID only. ro and wo fds are BPF_F_RDONLY/BPF_F_WRONLY,
 * rw and consume (ring buffers) O_RDWR, and so is ro on a frozen mmapable
 * array: the kernel maps no fd opened without write access (see
 * handout_map_fd_flags() in handout.c), and on a frozen map an O_RDWR fd
 * writes nothing.
 */
int handout_map_fd(int map_fd, enum map_access access, struct handout_map *ret);
/* The same with the map's info as the kernel gave it for map_fd (read once per load). */
int handout_map_fd_info(int map_fd, const struct bpf_map_info *info, enum map_access access,
			struct handout_map *ret);
/* A program's kernel id and tag (hex, 17 bytes with NUL). */
int handout_prog_info(int prog_fd, uint32_t *ret_id, char ret_tag[17]);
/* The tag of a program's info, in hex. */
void handout_prog_tag(const struct bpf_prog_info *info, char ret_tag[17]);
