/* The .mtz checksum: FNV-1a 64 taken over 64-bit little-endian words.
 *
 * Classic FNV-1a folds one byte per multiply (about 0.9 GB/s here); folding
 * a whole word per multiply runs at about 7 GB/s, which matters because the
 * encoder hashes every stack twice.  Definition, for a second decoder:
 *   h = 0xcbf29ce484222325
 *   for each full 8-byte word w (little-endian):  h ^= w; h *= 0x100000001b3
 *   for each remaining byte b:                    h ^= b; h *= 0x100000001b3
 */
#ifndef MTZ_HASH_H
#define MTZ_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MTZ_FNV_BASIS 0xcbf29ce484222325ull
#define MTZ_FNV_PRIME 0x100000001b3ull

/* Continues hash h over p[i..n) (i a multiple of 8). */
static inline uint64_t mtz_hash_from(uint64_t h, const unsigned char *p, size_t i, size_t n)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h ^= w;
		h *= MTZ_FNV_PRIME;
	}
	for (; i < n; i++) {
		h ^= p[i];
		h *= MTZ_FNV_PRIME;
	}
	return h;
}

static inline uint64_t mtz_hash(const void *buf, size_t n)
{
	return mtz_hash_from(MTZ_FNV_BASIS, buf, 0, n);
}

/* Does a rebuilt stack's hash differ from the one its entry carries?  In
 * fuzzing builds (tests/fuzz: FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, as
 * libFuzzer users name it) never: the fuzzer then reaches the decoding past
 * the check, where a file written on purpose, with right hashes, goes. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MTZ_STACK_HASH_DIFFERS(got, want) ((void)(got), (void)(want), 0)
#else
#define MTZ_STACK_HASH_DIFFERS(got, want) ((got) != (want))
#endif

/* The hashes of four buffers at once.  One hash is a chain of multiplies,
 * each waiting for the one before (about 7 GB/s); four chains side by side
 * keep the multiplier busy: about three times the throughput. */
static inline void mtz_hash4(const unsigned char *const p[4], const size_t n[4], uint64_t h[4])
{
	uint64_t a = MTZ_FNV_BASIS, b = a, c = a, d = a;
	size_t m = n[0];
	for (int k = 1; k < 4; k++)
		m = n[k] < m ? n[k] : m;
	size_t i = 0;
	for (; i + 8 <= m; i += 8) {
		uint64_t w0, w1, w2, w3;
		memcpy(&w0, p[0] + i, 8);
		memcpy(&w1, p[1] + i, 8);
		memcpy(&w2, p[2] + i, 8);
		memcpy(&w3, p[3] + i, 8);
		a = (a ^ w0) * MTZ_FNV_PRIME;
		b = (b ^ w1) * MTZ_FNV_PRIME;
		c = (c ^ w2) * MTZ_FNV_PRIME;
		d = (d ^ w3) * MTZ_FNV_PRIME;
	}
	h[0] = mtz_hash_from(a, p[0], i, n[0]);
	h[1] = mtz_hash_from(b, p[1], i, n[1]);
	h[2] = mtz_hash_from(c, p[2], i, n[2]);
	h[3] = mtz_hash_from(d, p[3], i, n[3]);
}

#endif
