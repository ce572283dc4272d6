/* Buffered text output for mt-unwind's lines: to a file descriptor, or to
 * memory (lines formatted now and written later, trace-mode entries).  No
 * stdio on the hot path: numbers are formatted by hand. */
#ifndef MT_UNWIND_OUT_H
#define MT_UNWIND_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/error.h"

struct mt_unwind_out {
	char *buf;
	size_t len, cap;
	int fd;			/* -1: discard (decode-only); -2: memory */
	int error;		/* errno of a failed write or allocation, sticky */
};

/* Embedded object.  init_fd: fd -1 discards everything. */
void mt_unwind_out_init_fd(struct mt_unwind_out *o, int fd);
void mt_unwind_out_init_mem(struct mt_unwind_out *o);

/* Memory mode: @return : the NUL-terminated text (caller frees), or NULL
 * when out of memory; o is released. */
char *mt_unwind_out_detach(struct mt_unwind_out *o);

/* fd mode: write what is buffered.  @return : 0, or MT_UNWIND_EIO (o->error
 * set to the errno). */
int mt_unwind_out_flush(struct mt_unwind_out *o);
void mt_unwind_out_release(struct mt_unwind_out *o);

/* Make room for n more bytes (flushing or growing). */
void mt_unwind_out_grow(struct mt_unwind_out *o, size_t n);

static inline void mt_unwind_out_add(struct mt_unwind_out *o, const char *s, size_t n)
{
	if (!n)
		return;
	if (o->cap - o->len < n + 1)
		mt_unwind_out_grow(o, n + 1);
	if (o->cap - o->len < n + 1)
		return;	/* failed: error is set */
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline void mt_unwind_out_str(struct mt_unwind_out *o, const char *s)
{
	mt_unwind_out_add(o, s, strlen(s));
}

static inline void mt_unwind_out_char(struct mt_unwind_out *o, char c)
{
	mt_unwind_out_add(o, &c, 1);
}

void mt_unwind_out_u64(struct mt_unwind_out *o, uint64_t v);
void mt_unwind_out_x64(struct mt_unwind_out *o, uint64_t v);

#endif
