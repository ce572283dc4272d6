/* A growable byte buffer owned by its user, and little-endian loads and
 * stores at any alignment. */
#ifndef MT_BUF_H
#define MT_BUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mt_buf {
	uint8_t *data;
	size_t len, cap;
};

/* Makes room for more bytes after len.  @return : 0 or -1 (out of memory,
 * or a size that would overflow). */
static inline int mt_buf_reserve(struct mt_buf *b, size_t more)
{
	if (more <= b->cap - b->len)
		return 0;
	if (more > SIZE_MAX / 2 - b->len)
		return -1;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

/* Appends without checking room: call mt_buf_reserve first. */
static inline void mt_buf_put(struct mt_buf *b, const void *p, size_t n)
{
	if (!n)		/* p may be NULL then (an empty buffer's data) */
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void mt_buf_release(struct mt_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Little-endian loads and stores at any alignment (x86_64 and aarch64 are
 * little-endian; the format is little-endian everywhere). */
static inline uint64_t mt_ld64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t mt_ld32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t mt_ld16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void mt_st64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void mt_st32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void mt_st16(void *p, uint16_t v) { memcpy(p, &v, 2); }

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "mt assumes a little-endian host"
#endif

#endif
