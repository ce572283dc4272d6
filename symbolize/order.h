/* Time ordering of records.  perf writes each CPU's ring buffer in turn, so
 * a thread's sample can come before the MMAP it depends on when the two
 * were recorded on different CPUs.  Like perf's ordered events, records are
 * queued (copied) and released in time order up to the newest time of the
 * round before the last FINISHED_ROUND: by then every ring buffer has been
 * drained past it. */
#ifndef MT_UNWIND_ORDER_H
#define MT_UNWIND_ORDER_H

#include <stddef.h>
#include <stdint.h>

struct mt_unwind_order;

/* @return : 0 or -ENOMEM. */
int mt_unwind_order_new(struct mt_unwind_order **out);
void mt_unwind_order_free(struct mt_unwind_order *q);

/* Queue a copy of rec (size bytes, 8-aligned copy) with its time.
 * @return : 0 or -ENOMEM. */
int mt_unwind_order_push(struct mt_unwind_order *q, const void *rec, size_t size,
			 uint64_t time);

/* Release the queued records with time <= limit, oldest first (ties in
 * arrival order), to fn.  The pointer fn gets lives until fn returns. */
int mt_unwind_order_flush(struct mt_unwind_order *q, uint64_t limit,
			  void (*fn)(const void *rec, size_t size, void *ctx), void *ctx);

/* @return : bytes held (to bound memory when rounds are missing). */
size_t mt_unwind_order_bytes(const struct mt_unwind_order *q);

#endif
