/* What kind of mt file some bytes begin: so that every tool given the
 * wrong kind can say what it is and what to run instead.  The magics are
 * those the formats define (codec/mtz.h, perf's PERFILE2, the unwind
 * text's first line); tests/codec holds them against the codec's. */
#ifndef MT_FILEKIND_H
#define MT_FILEKIND_H

#include <stddef.h>

/* Bytes enough to tell every kind apart but collapsed stacks, whose first
 * line must be whole in what is given (mt_file_kind_peek reads up to
 * MT_FILE_KIND_LINE bytes). */
#define MT_FILE_KIND_BYTES 16
#define MT_FILE_KIND_LINE 4096

enum mt_file_kind {
	MT_FILE_EMPTY,		/* not a byte */
	MT_FILE_MTZ,		/* an .mtz file (mt-encode) */
	MT_FILE_PERF_DATA,	/* a perf.data file */
	MT_FILE_PERF_PIPE,	/* a perf pipe-mode stream (mt-capture, perf record -o -) */
	MT_FILE_UNWIND_TEXT,	/* mt-unwind's output ("# mt-unwind N") */
	MT_FILE_FOLDED,		/* collapsed stacks (mt-fold's output): a first
				 * line "frame;frame COUNT", no TAB */
	MT_FILE_OTHER,		/* none of these (text for mt-fold, or anything) */
};

/* The kind of a file whose first n bytes (all of them when fewer than
 * MT_FILE_KIND_BYTES) are p. */
enum mt_file_kind mt_file_kind(const void *p, size_t n);

/* The kind of the regular file at path, from its first bytes.
 * @return : 0 with *kind set, or -1 when path is "-", not a regular file,
 *           or cannot be read (the caller's own open says why). */
int mt_file_kind_peek(const char *path, enum mt_file_kind *kind);

/* "an .mtz file", "a perf.data file", ..., for messages. */
const char *mt_file_kind_str(enum mt_file_kind kind);

#endif
