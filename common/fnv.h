/* FNV-1a 64 taken over 64-bit little-endian words: the .mtz checksum
 * (docs/formats/mtz.md) and the check of mt-unwind's cache files.
 *
 * Classic FNV-1a folds one byte per multiply; folding a whole word per
 * multiply is several times faster, which matters because the encoder
 * hashes every stack twice.  Definition, for a second decoder:
 *   h = 0xcbf29ce484222325
 *   for each full 8-byte word w (little-endian):  h ^= w; h *= 0x100000001b3
 *   for each remaining byte b:                    h ^= b; h *= 0x100000001b3
 */
#ifndef MT_FNV_H
#define MT_FNV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_FNV_BASIS 0xcbf29ce484222325ull
#define MT_FNV_PRIME 0x100000001b3ull

/* Continues hash h over p[i..n) (i a multiple of 8). */
static inline uint64_t mt_fnv_from(uint64_t h, const unsigned char *p, size_t i, size_t n)
{
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h ^= w;
		h *= MT_FNV_PRIME;
	}
	for (; i < n; i++) {
		h ^= p[i];
		h *= MT_FNV_PRIME;
	}
	return h;
}

static inline uint64_t mt_fnv(const void *buf, size_t n)
{
	return mt_fnv_from(MT_FNV_BASIS, buf, 0, n);
}

/* The hashes of four buffers at once.  One hash is a chain of multiplies,
 * each waiting for the one before; four chains side by side keep the
 * multiplier busy. */
static inline void mt_fnv4(const unsigned char *const p[4], const size_t n[4], uint64_t h[4])
{
	uint64_t a = MT_FNV_BASIS, b = a, c = a, d = a;
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
		a = (a ^ w0) * MT_FNV_PRIME;
		b = (b ^ w1) * MT_FNV_PRIME;
		c = (c ^ w2) * MT_FNV_PRIME;
		d = (d ^ w3) * MT_FNV_PRIME;
	}
	h[0] = mt_fnv_from(a, p[0], i, n[0]);
	h[1] = mt_fnv_from(b, p[1], i, n[1]);
	h[2] = mt_fnv_from(c, p[2], i, n[2]);
	h[3] = mt_fnv_from(d, p[3], i, n[3]);
}

#endif
