/* SPDX-License-Identifier: MIT */
/*
 * Kernel addresses taken out of text that goes back to a client (verifier
 * logs, libbpf's messages). The verifier prints what it knows, pointers
 * into the kernel included (a 64-bit load of a kernel symbol, register
 * bounds), so a log would give away where the kernel is (KASLR) to a client
 * whose programs could never read such a pointer themselves.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lowest and highest values taken for kernel addresses: the kernel half of x86-64 and arm64. */
#define KADDR_MIN 0xffff800000000000ull
#define KADDR_MAX 0xffffffffffffefffull /* -4097: -1 .. -4096 are errno values, not addresses */

/* The text that replaces each kernel address. */
#define KADDR_REPLACEMENT "<kernel address>"

bool kaddr_is_kernel(uint64_t v);

/*
 * A copy of text (len bytes, need not be NUL-terminated) in which every
 * number whose value is a kernel address, in hex ("0xffffffff81234567") or
 * decimal ("-2128334233", "18446744071581217383"), is KADDR_REPLACEMENT.
 * NUL-terminated, *ret_len its length; NULL only when out of memory.
 */
char *kaddr_scrub(const char *text, size_t len, size_t *ret_len);
