/* Page-table population of the input's mapping on a second core.
 *
 * mt-unwind's main thread reads a regular file through a mapping (see
 * mt_perf_reader_mapping); mapping each page of it on first touch was much
 * of that thread's time.  A prefault thread maps the pages ahead of it by
 * reading a byte of each (page faults, not madvise: see prefault.c).  When
 * the reader reads whole records (the unwinder walks the stack dumps), the
 * thread also reads the bytes just ahead of it, so that they come from the
 * shared cache rather than from memory.  Like the reader, it needs the file
 * not to shrink meanwhile (SIGBUS).
 */
#ifndef MT_UNWIND_PREFAULT_H
#define MT_UNWIND_PREFAULT_H

#include <stddef.h>

struct mt_unwind_prefault;

/* Start populating [p, p + len); with warm, also read the bytes the reader
 * reaches next into the cache.  @return : the thread's handle, or NULL when
 * it could not start (nothing is lost: pages then fault in as before). */
struct mt_unwind_prefault *mt_unwind_prefault_start(const void *p, size_t len, int warm);

/* The reader no longer needs the bytes before p + off (p as given to
 * start), and reads on from there: the thread drops the pages before it
 * (MADV_DONTNEED) a chunk at a time, and warms those after it.  Accepts
 * NULL. */
void mt_unwind_prefault_done(struct mt_unwind_prefault *pf, size_t off);

/* Stop the thread (it finishes its current chunk) and join it; before the
 * mapping goes away.  Accepts NULL. */
void mt_unwind_prefault_stop(struct mt_unwind_prefault *pf);

#endif
