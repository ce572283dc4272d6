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

#include "symbolize/error.h"

struct mt_unwind_order;

/* @return : 0 or MT_UNWIND_ENOMEM. */
int mt_unwind_order_new(struct mt_unwind_order **out);
void mt_unwind_order_free(struct mt_unwind_order *q);

/* Queue a copy of a (alen bytes) followed by b (blen bytes, b may be NULL
 * when blen is 0) with its time and a kind the caller chooses.
 * @return : 0 or MT_UNWIND_ENOMEM. */
int mt_unwind_order_push(struct mt_unwind_order *q, int kind, const void *a, size_t alen,
			 const void *b, size_t blen, uint64_t time);

/* Push in two steps, for an item made in place: room for up to max bytes
 * (8-aligned; NULL when out of memory), then the item's real size (<= max)
 * and time.  Nothing else may be pushed in between. */
void *mt_unwind_order_reserve(struct mt_unwind_order *q, size_t max);
void mt_unwind_order_commit(struct mt_unwind_order *q, int kind, size_t size, uint64_t time);

typedef void (*mt_unwind_order_fn)(int kind, void *data, size_t size, void *ctx);

/* Called by mt_unwind_order_flush with the item released after the one it
 * is about to give fn (same ctx), so that the caller can start loading
 * what that one will need.  NULL: none (the default). */
typedef void (*mt_unwind_order_ahead_fn)(int kind, const void *data, void *ctx);
void mt_unwind_order_set_ahead(struct mt_unwind_order *q, mt_unwind_order_ahead_fn ahead);

/* Release the queued items with time <= limit, oldest first (ties in
 * arrival order), to fn.  The data fn gets is 8-aligned, writable, and
 * lives until fn returns. */
int mt_unwind_order_flush(struct mt_unwind_order *q, uint64_t limit,
			  mt_unwind_order_fn fn, void *ctx);

/* @return : bytes held (to bound memory when rounds are missing). */
size_t mt_unwind_order_bytes(const struct mt_unwind_order *q);

#endif
