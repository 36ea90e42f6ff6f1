/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 of a buffer, to name objects in the audit log by their content: OpenSSL's libcrypto
 * (EVP), not code of our own.
 *
 * Why libcrypto and not the kernel's AF_ALG ("hash", "sha256", the memfd spliced in): AF_ALG
 * needs CONFIG_CRYPTO_USER_API_HASH, which kernels may leave out (this machine's 6.18 has it
 * unset: socket(AF_ALG) fails with EAFNOSUPPORT) and hardened ones do, as attack surface; the
 * audit record would then need a second implementation anyway, and a worker's seccomp filter
 * would have to allow socket(AF_ALG). So AF_ALG could not even be measured here, and libcrypto
 * is as fast as the SHA-NI code we had, on every CPU it knows.
 *
 * Measured here (a CPU with SHA-NI), per hash: 64 bytes 0.4 us (0.17 us hand-written); 1.8 MB
 * 1.17 ms (1.44 ms hand-written). The cost is elsewhere: mapping libcrypto
 * into a process takes about 0.65 ms and 126 page faults at exec, and its first digest about
 * 0.6 ms (the default provider's setup; 0.9 ms with openssl.cnf read). So: a process that will
 * hash calls sha256_init() before it forks workers, which then inherit the set-up state; an
 * exec'd worker should link libcrypto only if it writes audit records. We never read
 * openssl.cnf or $OPENSSL_CONF: a root daemon loads no providers or engines named there.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE (2 * SHA256_DIGEST_SIZE + 1) /* 64 hex digits and a NUL */

/* Set libcrypto up (once; later calls return at once): 0, -ENOMEM or -EOPNOTSUPP. */
int sha256_init(void);
/* The digest of data into digest: 0 or a negative errno (digest untouched). */
int sha256(const void *data, size_t size, uint8_t digest[SHA256_DIGEST_SIZE]);
/* The same as lowercase hex into hex[SHA256_HEX_SIZE]: 0 or a negative errno (hex untouched). */
int sha256_hex(const void *data, size_t size, char hex[SHA256_HEX_SIZE]);
