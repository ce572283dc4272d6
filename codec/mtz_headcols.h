/* Version 3's head section: the words of delta-coded heads in column order.
 *
 * A SAMPLE entry whose head is coded against a reference's (HEAD_REF) sends
 * the head words that changed: the time step, the registers.  In entry
 * order they lie a few words from each entry, and zstd finds little in
 * them; gathered by position in the head (column: word 64 g + k of group g,
 * mask bit k), the same register's changes, sample after sample, lie side by
 * side, and match one another: a smaller head section on allocation
 * streams (bench/codec.sh's malloc and threads).  Everything else of the
 * section (presence bitmaps, masks, keyframe heads, tails, the words of
 * heads coded against zeros) stays in entry order, first; the columns
 * follow, column 0 first.
 * The section keeps its size: these functions permute its bytes, guided
 * by the frame's ops and hash sections (docs/formats/mtz.md). */
#ifndef MTZ_HEADCOLS_H
#define MTZ_HEADCOLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* The sections that say how the head section is laid out. */
struct mtz_headcols_guide {
	const uint8_t *ops, *hash;
	size_t ops_len, hash_len;
	size_t hash_size;	/* bytes of one stack hash: 8, or 4 (HASH32) */
};

/* Entry order to column order (the encoder), or back (the decoder): out
 * receives len bytes, the head section in the other order.
 * @return : 0, MTZ_ENOMEM, or MTZ_ETRUNC / MTZ_EFORMAT when the guide does
 *           not describe exactly len bytes (out is then undefined). */
int mtz_headcols_to_columns(const struct mtz_headcols_guide *g, const uint8_t *head, size_t len,
			    struct mt_buf *out);
int mtz_headcols_to_rows(const struct mtz_headcols_guide *g, const uint8_t *head, size_t len,
			 struct mt_buf *out);

#endif
