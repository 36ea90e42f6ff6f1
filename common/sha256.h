/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4), to name objects in the audit log by their content. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_SIZE 65 /* 64 hex digits and a NUL */

void sha256(const void *data, size_t size, uint8_t digest[32]);
/* The digest of data as lowercase hex into hex[SHA256_HEX_SIZE]. */
void sha256_hex(const void *data, size_t size, char hex[SHA256_HEX_SIZE]);

/* Tests: compare the accelerated and the portable code (on: portable only; off: the best). */
void sha256_portable_only(bool on);
