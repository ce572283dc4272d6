/* Parsing one line of mt-unwind's text output (docs/formats/unwind-text.md).
 *
 * The parser never allocates: an event's strings point into the line, which
 * must outlive the event.  Comment lines (`#`) are recognised separately so
 * that the caller can check the version header.
 */
#ifndef MT_FOLD_LINE_H
#define MT_FOLD_LINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	MT_FOLD_OK = 0,
	MT_FOLD_EFIELDS = -1,	/* not six TAB-separated fields */
	MT_FOLD_EKIND = -2,	/* unknown event kind */
	MT_FOLD_EPID = -3,	/* PID/TID is not two decimals */
	MT_FOLD_ETIME = -4,	/* TIME is not a decimal */
	MT_FOLD_EWEIGHT = -5,	/* a weight is not key=value */
	MT_FOLD_EVALUE = -6,	/* a known weight has a bad value */
	MT_FOLD_EMISSING = -7,	/* a weight this kind needs is missing */
	MT_FOLD_ESTACK = -8,	/* STACK does not end in " end=REASON" */
	MT_FOLD_EVERSION = -9,	/* a `# mt-unwind N` header with N != 1 */
	MT_FOLD_ENOMEM = -10,
	MT_FOLD_EIO = -11,
	MT_FOLD_ESTATE = -12,	/* call out of order (e.g. add after finish) */
	MT_FOLD_ENUL = -13,	/* a NUL byte in the line */
	MT_FOLD_ERANGE = -14,	/* a figure too large for its output */
};

/* @return : a static message for an MT_FOLD_E* code. */
const char *mt_fold_strerror(int err);

enum mt_fold_kind {
	MT_FOLD_ALLOC,
	MT_FOLD_FREE,
	MT_FOLD_TOTALS,
	MT_FOLD_SAMPLE,
	MT_FOLD_LOST,
	MT_FOLD_TICK,
	MT_FOLD_NKINDS
};

/* Bits of mt_fold_event.have: which weights the line carried. */
enum {
	MT_FOLD_W_SIZE = 1 << 0,
	MT_FOLD_W_PTR = 1 << 1,
	MT_FOLD_W_POINTS = 1 << 2,
	MT_FOLD_W_RATE = 1 << 3,
	MT_FOLD_W_EVERY = 1 << 4,
	MT_FOLD_W_PERIOD = 1 << 5,
	MT_FOLD_W_FREQ = 1 << 6,
	MT_FOLD_W_COUNT = 1 << 7,
	MT_FOLD_W_SCOPE = 1 << 8,
	MT_FOLD_W_ALLOC_BYTES = 1 << 9,
	MT_FOLD_W_ALLOCS = 1 << 10,
	MT_FOLD_W_FREES = 1 << 11,
	MT_FOLD_W_FREED_BYTES = 1 << 12,
	MT_FOLD_W_PEAK_BYTES = 1 << 13,
	MT_FOLD_W_PEAK_ERROR = 1 << 14,
	MT_FOLD_W_FORKED = 1 << 15,
	MT_FOLD_W_SEQ = 1 << 16,	/* alloc/free: the thread's allocation count */
	MT_FOLD_W_LIVE = 1 << 17,	/* tick weights from here */
	MT_FOLD_W_BLOCK_BYTES = 1 << 18,
	MT_FOLD_W_RSS = 1 << 19,
	MT_FOLD_W_PEAK = 1 << 20,
	MT_FOLD_W_PEAK_TIME = 1 << 21,
};

struct mt_fold_str {
	const char *s;		/* points into the line; not NUL-terminated */
	size_t len;
};

/* Is v the string lit? */
static inline int mt_fold_str_is(struct mt_fold_str v, const char *lit)
{
	return v.len == strlen(lit) && memcmp(v.s, lit, v.len) == 0;
}

struct mt_fold_event {
	enum mt_fold_kind kind;
	uint32_t pid, tid;
	uint64_t time;
	struct mt_fold_str comm;
	struct mt_fold_str frames;	/* root-to-leaf joined by ';'; may be empty */
	struct mt_fold_str end;		/* REASON of end=REASON */
	unsigned have;			/* MT_FOLD_W_* */
	uint64_t size, ptr, points, rate, every, period, count;
	int freq;
	int process_scope;		/* totals: scope=process (else thread) */
	uint64_t alloc_bytes, allocs, frees, freed_bytes, peak_bytes, peak_error;
	uint64_t forked;		/* totals: forked=1, a forked image's */
	uint64_t seq;			/* alloc/free: seq= */
	int64_t live;			/* tick: live= (may be negative) */
	uint64_t alloc_block_bytes, rss, peak, peak_time;	/* tick */
	struct mt_fold_str fn, event, reason;
	/* After an MT_FOLD_EVALUE or MT_FOLD_EMISSING error: the key at fault. */
	const char *bad_key;
};

/* Parse the event line at line[0..len) (no newline).  Unknown weight keys
 * are skipped, as the format asks.  A line holding a NUL byte is refused
 * (MT_FOLD_ENUL): its names would end there in every NUL-terminated copy.
 * @return : 0 with *ev filled, or a negative MT_FOLD_E* code (ev->bad_key
 * names the weight for EVALUE and EMISSING). */
int mt_fold_line_parse(const char *line, size_t len, struct mt_fold_event *ev);

/* For a comment line (starting with '#'): is it a version header?
 * @return : 1 for "# mt-unwind 1", MT_FOLD_EVERSION for another version,
 * 0 for any other comment. */
int mt_fold_line_header(const char *line, size_t len);

#endif
