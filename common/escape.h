/* SPDX-License-Identifier: MIT */
/*
 * Text made safe for a log line, an audit record or a journal field: the
 * daemon's one choke point for what ends up in its logs. Every byte outside
 * printable ASCII (control characters such as newline, carriage return, ESC
 * and NUL's neighbours, DEL, and every byte of 0x80 and above, so also
 * Unicode line separators and C1 controls) becomes \xNN, and a backslash
 * \\, so a client's string can never start a new line, record or field,
 * rewrite a terminal, or pass for an escape: the output is reversible.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum {
	ESCAPE_QUOTES = 1 << 0, /* also '"' as \", for a quoted key="value" */
};

/*
 * s (NULL: "") escaped into buf of size bytes, always NUL-terminated; if it
 * does not fit, as much as fits whole and then "...". Returns buf.
 */
char *escape_text(char *buf, size_t size, const char *s, unsigned flags);

/*
 * Can s stand bare as the value of a key=value field: not empty, and only
 * printable ASCII other than space, '"' and '\\'? Else it goes in quotes,
 * escaped with ESCAPE_QUOTES.
 */
bool escape_is_bare(const char *s);
