/* SPDX-License-Identifier: MIT */
/* Hex text of bytes and back: lowercase out, either case in, two digits a byte, no prefix. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The value of hex digit c, or -1 if c is none. */
static inline int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 2 * size digits of buf and a NUL into out (2 * size + 1 bytes). */
void hex_encode_to(const void *buf, size_t size, char *out);
/* The same, malloc'ed; NULL if out of memory. */
char *hex_encode(const void *buf, size_t size);
/*
 * The len / 2 bytes that the first len characters of s spell (len even, hex digits only: no
 * prefix, sign or space), malloc'ed (non-NULL even for len 0). -EINVAL if s is not that,
 * -ENOMEM; *ret and *ret_size are written only on success. Callers bound len first.
 */
int hex_decode(const char *s, size_t len, uint8_t **ret, size_t *ret_size);
