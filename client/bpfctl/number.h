/* SPDX-License-Identifier: MIT */
/*
 * The numbers on bpfctl's command line, read in one place: whole, in range,
 * decimal (or 0x hex for flags and offsets), alone or as NAME=N.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Decimal as common/parse.h's parse_u64() reads it, or hexadecimal after "0x" or "0X" (map flags,
 * file offsets). */
int bpfctl_parse_u64_hex(const char *s, uint64_t max, uint64_t *ret);
/* A uint32 as one of those two reads it (hex: with "0x" too). */
int bpfctl_parse_u32(const char *s, bool hex, uint32_t *ret);
/*
 * NAME=N, N as parse_u64() reads it: on success arg is cut at the '='
 * and *ret_name is arg (maybe empty); on failure arg is unchanged.
 */
int bpfctl_parse_assignment(char *arg, uint64_t max, const char **ret_name, uint64_t *ret);
