/* SPDX-License-Identifier: MIT */
#include "sha256.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void block_portable(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      k[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

#if defined(__x86_64__)
/*
 * The same compression function with the SHA extensions (SHA-NI): about ten
 * times faster, which matters because the daemon hashes every object it
 * loads for the audit record (1.8 MB took 12 ms with the portable code).
 *
 * sha256rnds2 does two rounds on the state split in two registers, ABEF
 * and CDGH (A in the highest dword); sha256msg1/msg2 compute the message
 * schedule four words at a time.
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void block_shani(uint32_t h[8], const uint8_t *p)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
	__m128i abef, cdgh, abef_start, cdgh_start, tmp, w[4];

	/* h[] is A..H in order: rearrange into ABEF and CDGH. */
	tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1); /* B A D C */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b); /* H G F E */
	abef = _mm_alignr_epi8(tmp, cdgh, 8); /* F E B A */
	cdgh = _mm_blend_epi16(cdgh, tmp, 0xf0); /* H G D C */
	abef_start = abef;
	cdgh_start = cdgh;

	for (int i = 0; i < 4; i++)
		w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
	for (int g = 0; g < 16; g++) {
		/* w[g % 4] holds words 4g..4g+3; from g = 4 on they come from the schedule. */
		if (g >= 4)
			w[g % 4] = _mm_sha256msg2_epu32(
				_mm_add_epi32(_mm_sha256msg1_epu32(w[g % 4], w[(g + 1) % 4]),
					      _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4)),
				w[(g + 3) % 4]);
		tmp = _mm_add_epi32(w[g % 4], _mm_loadu_si128((const __m128i *)&k[4 * g]));
		cdgh = _mm_sha256rnds2_epu32(cdgh, abef, tmp);
		/* After two rounds the old ABEF is the new CDGH: swap roles. */
		abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(tmp, 0x0e));
	}
	abef = _mm_add_epi32(abef, abef_start);
	cdgh = _mm_add_epi32(cdgh, cdgh_start);

	tmp = _mm_shuffle_epi32(abef, 0x1b); /* A B E F */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1); /* G H C D */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(tmp, cdgh, 0xf0)); /* A B C D */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(cdgh, tmp, 8)); /* E F G H */
}

static bool have_shani;

/* Once, at startup: CPUID traps to the hypervisor on a VM, so never per hash. */
__attribute__((constructor)) static void sha256_detect(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
		return;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return;
	have_shani = (b & bit_SHA) != 0;
}

static void block(uint32_t h[8], const uint8_t *p)
{
	if (have_shani)
		block_shani(h, p);
	else
		block_portable(h, p);
}

void sha256_portable_only(bool on)
{
	sha256_detect();
	if (on)
		have_shani = false;
}
#else
static void block(uint32_t h[8], const uint8_t *p)
{
	block_portable(h, p);
}

void sha256_portable_only(bool on)
{
}
#endif

void sha256(const void *data, size_t size, uint8_t digest[32])
{
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const uint8_t *p = data;
	uint8_t tail[128] = {0};
	size_t n = size, rest;
	uint64_t bits = (uint64_t)size * 8;

	for (; n >= 64; n -= 64, p += 64)
		block(h, p);
	memcpy(tail, p, n);
	tail[n] = 0x80;
	rest = n + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[rest - 1 - i] = (uint8_t)(bits >> (8 * i));
	block(h, tail);
	if (rest == 128)
		block(h, tail + 64);
	for (int i = 0; i < 8; i++) {
		digest[4 * i] = (uint8_t)(h[i] >> 24);
		digest[4 * i + 1] = (uint8_t)(h[i] >> 16);
		digest[4 * i + 2] = (uint8_t)(h[i] >> 8);
		digest[4 * i + 3] = (uint8_t)h[i];
	}
}

void sha256_hex(const void *data, size_t size, char hex[SHA256_HEX_SIZE])
{
	uint8_t d[32];

	sha256(data, size, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
