/* Blocks of a regular output file allocated ahead of its writes.
 *
 * fallocate (size kept) some MiB at a time: ext4 then does no delayed
 * allocation in each write(2), a large part of its time, and closing a
 * file that a shell had just truncated (a '>' over an earlier output) no
 * longer flushes every dirty page (bench/codec.sh's decoding and
 * bench/capture.sh's output, docs/BENCHMARKS.md).  Pipes, terminals,
 * tmpfs files (memfds too) and files opened for appending are left alone. */
#ifndef MT_PREALLOC_H
#define MT_PREALLOC_H

#include <stddef.h>
#include <stdint.h>

struct mt_prealloc {
	int fd;
	int on;				/* still allocating ahead */
	uint64_t pos;			/* offset after the writes announced */
	uint64_t start, allocated;	/* blocks allocated in [start, allocated) */
};

void mt_prealloc_init(struct mt_prealloc *pa, int fd);

/* Before writing n bytes at the file's offset: allocate ahead when they
 * pass what is allocated.  A refusal (no room, not supported) only stops
 * the allocating: the write then says what is wrong. */
void mt_prealloc_ahead(struct mt_prealloc *pa, size_t n);

/* After the last write: release the blocks allocated past the file's end,
 * unless something else wrote past our writes. */
void mt_prealloc_end(struct mt_prealloc *pa);

#endif
