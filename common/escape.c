/* SPDX-License-Identifier: MIT */
#include "escape.h"

#include <stdio.h>
#include <string.h>

/* How s[0] is written: into e (at most 4 bytes), its length returned. */
static size_t escape_char(unsigned char c, unsigned flags, char e[static 4])
{
	static const char hex[] = "0123456789abcdef";

	if (c == '\\' || (c == '"' && (flags & ESCAPE_QUOTES))) {
		e[0] = '\\';
		e[1] = (char)c;
		return 2;
	}
	if (c < 0x20 || c >= 0x7f) {
		e[0] = '\\';
		e[1] = 'x';
		e[2] = hex[c >> 4];
		e[3] = hex[c & 15];
		return 4;
	}
	e[0] = (char)c;
	return 1;
}

char *escape_text(char *buf, size_t size, const char *s, unsigned flags)
{
	size_t need = 0, o = 0;
	char e[4];

	if (size == 0)
		return buf;
	if (!s)
		s = "";
	for (const char *c = s; *c; c++)
		need += escape_char((unsigned char)*c, flags, e);
	for (const char *c = s; *c; c++) {
		size_t n = escape_char((unsigned char)*c, flags, e);

		/* What does not fit whole is cut, visibly: room kept for "...". */
		if (need >= size && o + n + 3 >= size) {
			if (o + 3 < size) {
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(buf + o, e, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

bool escape_is_bare(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || *s == '"' ||
		    *s == '\\')
			return false;
	return true;
}
