/* Architecture-specific pieces of the sampler (x86_64 here): the markers
 * defined in sampler_x86_64.S and counter updates that a signal handler
 * cannot tear (one instruction each, no lock prefix: single writer). */
#ifndef MT_SAMPLER_ARCH_H
#define MT_SAMPLER_ARCH_H

#include <stdint.h>

/* Markers: do nothing; mt-capture uprobes them.  Arguments: see
 * docs/formats/capture-events.md. */
void mt_sampler_mark_alloc(uint64_t size, const void *ptr, uint64_t points, uint64_t rate,
			   uint64_t fn, uint64_t seq);
void mt_sampler_mark_free(const void *ptr, uint64_t size, uint64_t points, uint64_t rate,
			  uint64_t fn, uint64_t seq);
void mt_sampler_mark_totals(void);
void mt_sampler_mark_tick(void);

/* Calls mt_sampler_mark_totals with v[0..12] in DI SI DX CX R8 R9 AX R10 R11
 * R12 R13 R14 R15. */
#define MT_SAMPLER_TOTALS 13

/* R15 of mt:totals: the sampling rate with this tag in its top 16 bits
 * ("mt"), so that a consumer tells it from a sampler that set no R15. */
#define MT_SAMPLER_RATE_TAG (0x6d74ULL << 48)
void mt_sampler_report_totals(const uint64_t v[MT_SAMPLER_TOTALS]);
/* Calls mt_sampler_mark_tick with v[0..12] in the same registers. */
void mt_sampler_report_tick(const uint64_t v[MT_SAMPLER_TOTALS]);

/* *p += v as one instruction: a signal handler that allocates in between
 * cannot lose an update; other threads read it with relaxed loads. */
static inline void mt_sampler_add(uint64_t *p, uint64_t v)
{
	__asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(v) : "cc");
}

/* *p -= v; @return : the new value is <= 0 (the flag itself: no setcc). */
static inline int mt_sampler_sub_le0(int64_t *p, uint64_t v)
{
	int le;
	__asm__ volatile("subq %2, %0" : "+m"(*p), "=@ccle"(le) : "er"(v));
	return le;
}

/* *p -= v; @return : the new value is < 0. */
static inline int mt_sampler_sub_lt0(int64_t *p, uint64_t v)
{
	int lt;
	__asm__ volatile("subq %2, %0" : "+m"(*p), "=@ccl"(lt) : "er"(v));
	return lt;
}

/* *p += v; @return : the new value is > limit (a 32-bit constant). */
static inline int mt_sampler_add_gt(int64_t *p, uint64_t v, int32_t limit)
{
	int gt;
	__asm__ volatile("addq %2, %0\n\tcmpq %3, %0" : "+m"(*p), "=@ccg"(gt) : "er"(v), "er"((int64_t)limit));
	return gt;
}

#endif
