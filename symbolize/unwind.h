/* The stack walker: from a sample's registers and stack dump to a list of
 * physical frames, leaf first, with the reason the walk stopped.
 *
 * Each step finds the mapping of the pc, takes the compiled CFI rule for
 * the pc (the return address minus one for callers, since a call can be a
 * function's last instruction) and applies it.  Where a pc has no CFI, the
 * frame-pointer convention is tried, as libdwfl does.
 */
#ifndef MT_UNWIND_UNWIND_H
#define MT_UNWIND_UNWIND_H

#include <stdint.h>

#include "symbolize/arch.h"
#include "symbolize/cfi.h"
#include "symbolize/maps.h"

enum mt_unwind_end {
	MT_UNWIND_END_COMPLETE,		/* outermost frame reached */
	MT_UNWIND_END_DUMP,		/* the stack copy ended */
	MT_UNWIND_END_NO_CFI,		/* no unwind info and no frame-pointer chain */
	MT_UNWIND_END_UNKNOWN_MODULE,	/* pc outside every mapping */
	MT_UNWIND_END_DEPTH,		/* the depth limit */
	MT_UNWIND_END_BAD_FRAME,	/* an impossible step */
	MT_UNWIND_END_NONE,		/* no stack was recorded */
	MT_UNWIND_END_COUNT
};

/* @return : the reason's word in the output ("end-of-dump", ...). */
const char *mt_unwind_end_str(enum mt_unwind_end e);

struct mt_unwind_frame {
	uint64_t pc;			/* runtime address as found */
	uint64_t lookup;		/* pc, or pc - 1 for a return address */
	struct mt_unwind_map *map;	/* NULL: in no mapping */
};

struct mt_unwind_stats {
	uint64_t steps_cfi;		/* steps taken with compiled CFI rules */
	uint64_t steps_fp;		/* steps taken with the frame-pointer rule */
	uint64_t rules_failed;		/* CFI rows that did not compile */
	uint64_t memo_hits, memo_misses;/* per-space pc memo probes */
	/* Set by each walk: it ended where the dump ends (END_DUMP) after a
	 * signal frame had moved it to a stack outside the dump (a handler
	 * run on an alternate signal stack: the interrupted stack was never
	 * copied, and no larger dump would reach it). */
	int last_other_stack;
};

/* Walk the stack.  frames has room for max frames; *nr gets the count.
 * sp is the address space (may be NULL: then the first pc is unknown).
 * @return : an enum mt_unwind_end. */
int mt_unwind_walk(struct mt_unwind_maps *mp, struct mt_unwind_space *sp,
		   const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
		   struct mt_unwind_frame *frames, unsigned max, unsigned *nr,
		   struct mt_unwind_stats *stats);

/* The lookups of a walk made on another thread than the one that owns the
 * space (mt-unwind -j, symbolize/jobs.h): find returns the rule for the
 * lookup address addr of space sp, with its mapping in *map (NULL: none),
 * and counts its probes in stats; it must not change sp. */
struct mt_unwind_finder {
	const struct mt_unwind_rule *(*find)(void *ctx, struct mt_unwind_space *sp,
					     uint64_t addr, struct mt_unwind_map **map,
					     struct mt_unwind_stats *stats);
	void *ctx;
};

/* mt_unwind_walk with finder's lookups instead of the space's memo; the
 * same frames and end, the same counts but the memo's. */
int mt_unwind_walk_with(const struct mt_unwind_finder *finder, struct mt_unwind_space *sp,
			const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
			struct mt_unwind_frame *frames, unsigned max, unsigned *nr,
			struct mt_unwind_stats *stats);

#endif
