/* SPDX-License-Identifier: MIT */
/* Hex text of bytes and back, for values in the protocol and digests in the audit log. */
#include "hex.h"

#include <errno.h>
#include <stdlib.h>

void hex_encode_to(const void *buf, size_t size, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = buf;

	for (size_t i = 0; i < size; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * size] = '\0';
}

char *hex_encode(const void *buf, size_t size)
{
	char *s;

	/* 2 * size + 1 must not wrap: a size that large is no buffer anyone has. */
	if (size > (SIZE_MAX - 1) / 2)
		return NULL;
	s = malloc(2 * size + 1);
	if (s)
		hex_encode_to(buf, size, s);
	return s;
}

int hex_decode(const char *s, size_t len, uint8_t **ret, size_t *ret_size)
{
	uint8_t *buf;

	if (len % 2)
		return -EINVAL;
	buf = malloc(len / 2 ? len / 2 : 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = hex_digit_value(s[2 * i]), lo = hex_digit_value(s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(buf);
			return -EINVAL;
		}
		buf[i] = (uint8_t)(hi << 4 | lo);
	}
	*ret = buf;
	*ret_size = len / 2;
	return 0;
}
