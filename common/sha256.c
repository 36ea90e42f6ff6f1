/* SPDX-License-Identifier: MIT */
/* SHA-256 through libcrypto's EVP interface, its algorithm fetched once per process. */
#include "sha256.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <string.h>

#include "hex.h"

static EVP_MD *sha256_md;

int sha256_init(void)
{
	if (sha256_md)
		return 0;
	/*
	 * Before anything else in libcrypto, or it would read openssl.cnf on first use. No atexit
	 * handler: freeing libcrypto's state at exit() took about 100 us a process here, for
	 * memory the kernel takes back anyway.
	 */
	if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL) != 1) {
		ERR_clear_error();
		return -ENOMEM;
	}
	/* An explicit fetch: EVP_sha256() would look the algorithm up again on every digest. */
	sha256_md = EVP_MD_fetch(NULL, "SHA2-256", NULL);
	if (!sha256_md) {
		ERR_clear_error();
		return -EOPNOTSUPP;
	}
	return 0;
}

int sha256(const void *data, size_t size, uint8_t digest[SHA256_DIGEST_SIZE])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int r = sha256_init();

	if (r < 0)
		return r;
	/* EVP_Digest needs a non-NULL pointer even for no data. */
	if (EVP_Digest(size ? data : "", size, d, &n, sha256_md, NULL) != 1 ||
	    n != SHA256_DIGEST_SIZE) {
		ERR_clear_error();
		return -ENOMEM;
	}
	memcpy(digest, d, SHA256_DIGEST_SIZE);
	return 0;
}

int sha256_hex(const void *data, size_t size, char hex[SHA256_HEX_SIZE])
{
	uint8_t d[SHA256_DIGEST_SIZE];
	int r = sha256(data, size, d);

	if (r < 0)
		return r;
	hex_encode_to(d, sizeof(d), hex);
	return 0;
}
