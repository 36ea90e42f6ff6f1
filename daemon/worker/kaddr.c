/* SPDX-License-Identifier: MIT */
#include "kaddr.h"

#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/macro.h"

bool kaddr_is_kernel(uint64_t v)
{
	return v >= KADDR_MIN && v <= KADDR_MAX;
}

static bool is_word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_';
}

/*
 * The number at text[i] (a token start): its length in *ret_len and whether
 * its 64-bit value is a kernel address. Numbers longer than 64 bits are not
 * addresses (and are skipped whole).
 */
static bool number_at(const char *text, size_t len, size_t i, size_t *ret_len)
{
	size_t j = i;
	bool neg = false, overflow = false;
	uint64_t v = 0;

	if (j + 2 < len && text[j] == '0' && (text[j + 1] == 'x' || text[j + 1] == 'X') &&
	    hex_digit_value(text[j + 2]) >= 0) {
		for (j += 2; j < len && hex_digit_value(text[j]) >= 0; j++) {
			overflow = overflow || v >> 60;
			v = v << 4 | (uint64_t)hex_digit_value(text[j]);
		}
	} else {
		if (text[j] == '-') {
			neg = true;
			j++;
		}
		for (; j < len && text[j] >= '0' && text[j] <= '9'; j++) {
			uint64_t d = (uint64_t)(text[j] - '0');

			overflow = overflow || v > (UINT64_MAX - d) / 10;
			v = v * 10 + d;
		}
		/* Printed as a signed 64-bit value: -x is the address 2^64 - x. */
		if (neg)
			v = 0 - v;
	}
	*ret_len = j - i;
	/* "123abc" is a word, not a number. */
	if (j < len && is_word_char(text[j]))
		return false;
	return !overflow && kaddr_is_kernel(v);
}

char *kaddr_scrub(const char *text, size_t len, size_t *ret_len)
{
	const size_t rlen = strlen(KADDR_REPLACEMENT);
	/* A replaced number has at least 5 characters ("-4097"): room for the worst case. */
	size_t cap = len + (len / 5 + 1) * rlen + 1, o = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		bool start = (i == 0 || !is_word_char(text[i - 1])) &&
			     ((text[i] >= '0' && text[i] <= '9') ||
			      (text[i] == '-' && i + 1 < len && text[i + 1] >= '0' &&
			       text[i + 1] <= '9'));
		size_t n = 1;

		if (start && number_at(text, len, i, &n)) {
			memcpy(out + o, KADDR_REPLACEMENT, rlen);
			o += rlen;
		} else {
			if (!start)
				n = 1;
			memcpy(out + o, text + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	if (ret_len)
		*ret_len = o;
	return out;
}
