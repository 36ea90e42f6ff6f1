/* SPDX-License-Identifier: MIT */
/*
 * bpfctl's number parsing (number.h): decimal (common/parse.h) or 0x hex, whole,
 * range-checked, and NAME=N; no strtoul(), which takes signs, spaces and wraps "-1".
 */
#include "number.h"

#include "common/hex.h"
#include "common/parse.h"

#include <errno.h>
#include <string.h>

int bpfctl_parse_u64_hex(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return parse_u64(s, max, ret);
	s += 2;
	if (!*s || strspn(s, "0123456789abcdefABCDEF") != strlen(s))
		return -EINVAL;
	for (; *s; s++) {
		if (v >> 60)
			return -ERANGE;
		v = v << 4 | (uint64_t)hex_digit_value(*s);
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int bpfctl_parse_u32(const char *s, bool hex, uint32_t *ret)
{
	uint64_t v;
	int k = hex ? bpfctl_parse_u64_hex(s, UINT32_MAX, &v) : parse_u64(s, UINT32_MAX, &v);

	if (k < 0)
		return k;
	*ret = (uint32_t)v;
	return 0;
}

int bpfctl_parse_assignment(char *arg, uint64_t max, const char **ret_name, uint64_t *ret)
{
	char *eq = strchr(arg, '=');
	uint64_t v;
	int k;

	if (!eq)
		return -EINVAL;
	k = parse_u64(eq + 1, max, &v);
	if (k < 0)
		return k;
	*eq = '\0';
	*ret_name = arg;
	*ret = v;
	return 0;
}
