/* The stack walker. */
#include "symbolize/unwind.h"

#include <stdlib.h>

const char *mt_unwind_end_str(enum mt_unwind_end e)
{
	static const char *const s[MT_UNWIND_END_COUNT] = {
		"complete", "end-of-dump", "no-cfi", "unknown-module", "depth",
		"bad-frame", "none",
	};
	return (unsigned)e < MT_UNWIND_END_COUNT ? s[e] : "?";
}

/* The frame-pointer step, usable only when rbp points into the dump above
 * the stack pointer (a chain through unrelated values stops here). */
static int fp_step(const struct mt_unwind_regs *in, const struct mt_unwind_memory *mem,
		   struct mt_unwind_regs *out)
{
	const uint32_t need = (1u << MT_UNWIND_REG_FP) | (1u << MT_UNWIND_REG_SP);
	if ((in->valid & need) != need)
		return MT_UNWIND_STEP_BAD;
	uint64_t fp = in->r[MT_UNWIND_REG_FP];
	if (fp < in->r[MT_UNWIND_REG_SP] || (fp & 7))
		return MT_UNWIND_STEP_BAD;
	return mt_unwind_rule_apply(mt_unwind_rule_frame_pointer(), in, mem, out);
}

/* Does rule find the return address in a register?  Then its frame's
 * caller may have the same sp. */
static int popped_return_address(const struct mt_unwind_rule *rule)
{
	return rule && rule->status == MT_UNWIND_RULE_OK &&
	       rule->kind[MT_UNWIND_REG_RA] == MT_UNWIND_REG;
}

/* The space's pc memo for this walk: small at first, large once the space
 * has had MT_UNWIND_PCCACHE_GROW walks (see maps.h).  Without one (no
 * memory) every frame is looked up. */
static void memo_prepare(struct mt_unwind_space *sp)
{
	if (sp->pccache && (sp->pcmask + 1 == MT_UNWIND_PCCACHE_LARGE ||
			    ++sp->walks < MT_UNWIND_PCCACHE_GROW))
		return;
	size_t n = sp->pccache ? MT_UNWIND_PCCACHE_LARGE : MT_UNWIND_PCCACHE_SMALL;
	struct mt_unwind_pcentry *c = calloc(n, sizeof(*c));
	if (!c)
		return;		/* the small one stays, or none */
	free(sp->pccache);
	sp->pccache = c;
	sp->pcmask = (uint32_t)n - 1;
}

/* The walk, with the space's memo (finder NULL: the caller's thread owns
 * the space) or with a finder's lookups (a worker of mt-unwind -j, which
 * must not touch the space).  Inlined into both, so that the single-thread
 * walk keeps its memo probe inline. */
static inline __attribute__((always_inline)) int
walk(struct mt_unwind_maps *mp, struct mt_unwind_space *sp, const struct mt_unwind_regs *regs,
     const struct mt_unwind_memory *mem, struct mt_unwind_frame *frames, unsigned max,
     unsigned *nr, struct mt_unwind_stats *stats, const struct mt_unwind_finder *finder)
{
	/* Common rows change the register set in place; the others compute
	 * the caller's frame into the other set, no copy back. */
	struct mt_unwind_regs set[2];
	struct mt_unwind_regs *cur = &set[0], *next;
	*cur = *regs;
	int activation = 1;	/* the pc is exact: first frame, or after a signal */
	if (sp && !finder)
		memo_prepare(sp);
	unsigned n = 0;
	int end;
	int other_stack = 0;	/* a signal frame left the dump's stack */

	for (;;) {
		uint64_t pc = cur->r[MT_UNWIND_REG_RA];
		if (n >= max) {
			end = MT_UNWIND_END_DEPTH;
			break;
		}
		struct mt_unwind_frame *f = &frames[n++];
		f->pc = pc;
		f->lookup = activation ? pc : pc - 1;
		const struct mt_unwind_rule *rule = NULL;
		struct mt_unwind_pcentry *e = NULL;
		if (finder) {
			f->map = NULL;
			if (sp)
				rule = finder->find(finder->ctx, sp, f->lookup, &f->map, stats);
		} else if (sp && sp->pccache) {
			uint64_t h = (f->lookup * 0x9E3779B97F4A7C15ULL) >> 52;
			e = &sp->pccache[h & sp->pcmask];
		}
		if (finder) {
			/* found above */
		} else if (e && e->key == f->lookup + 1) {
			stats->memo_hits++;
			f->map = e->map;
			rule = e->rule;
		} else {
			stats->memo_misses++;
			f->map = sp ? mt_unwind_maps_find(mp, sp, f->lookup) : NULL;
			if (f->map && f->map->mod && f->map->delta_ok)
				rule = mt_unwind_rule_get(f->map->mod,
							  f->lookup + (uint64_t)f->map->delta);
			if (e && (rule || !f->map || !f->map->mod || !f->map->delta_ok))
				*e = (struct mt_unwind_pcentry){ .key = f->lookup + 1,
								 .map = f->map, .rule = rule };
		}
		int step;
		uint64_t sp_was = cur->r[MT_UNWIND_REG_SP];
		next = cur == &set[0] ? &set[1] : &set[0];
		if (rule && rule->status == MT_UNWIND_RULE_OK) {
			if (rule->cfa_only) {
				step = mt_unwind_rule_apply_common(rule, cur, mem);
				next = cur;
			} else {
				step = mt_unwind_rule_apply(rule, cur, mem, next);
			}
			stats->steps_cfi++;
		} else {
			if (rule && rule->status == MT_UNWIND_RULE_FAIL)
				stats->rules_failed++;
			step = fp_step(cur, mem, next);
			if (step == MT_UNWIND_STEP_OK)
				stats->steps_fp++;
			else if (step == MT_UNWIND_STEP_BAD || step == MT_UNWIND_STEP_NO_MEMORY) {
				end = !f->map ? MT_UNWIND_END_UNKNOWN_MODULE
				      : step == MT_UNWIND_STEP_NO_MEMORY && rule ? MT_UNWIND_END_DUMP
				      : MT_UNWIND_END_NO_CFI;
				if (!f->map || !f->map->mod || f->map->mod->state != MT_UNWIND_MOD_OK)
					end = MT_UNWIND_END_UNKNOWN_MODULE;
				break;
			}
		}
		if (step == MT_UNWIND_STEP_OUTERMOST) {
			end = MT_UNWIND_END_COMPLETE;
			break;
		}
		if (step == MT_UNWIND_STEP_NO_MEMORY) {
			end = MT_UNWIND_END_DUMP;
			break;
		}
		if (step != MT_UNWIND_STEP_OK) {
			end = MT_UNWIND_END_BAD_FRAME;
			break;
		}
		uint64_t npc = next->r[MT_UNWIND_REG_RA];
		if (npc == 0) {
			end = MT_UNWIND_END_COMPLETE;
			break;
		}
		int signal = rule && rule->status == MT_UNWIND_RULE_OK && rule->signal;
		/* Stacks grow down: a caller's sp below its callee's is bogus,
		 * except across a signal frame (alternate stacks); the same sp
		 * too, unless the interrupted frame popped its return address
		 * into a register (vfork: the child runs with it in rdi).  Only
		 * there: a row that kept finding the return address in the
		 * same register would repeat one frame to the depth limit. */
		if (!signal && (!(next->valid & (1u << MT_UNWIND_REG_SP)) ||
				next->r[MT_UNWIND_REG_SP] < sp_was ||
				(next->r[MT_UNWIND_REG_SP] == sp_was &&
				 !(activation && popped_return_address(rule))))) {
			end = MT_UNWIND_END_BAD_FRAME;
			break;
		}
		if (signal) {
			uint64_t nsp = next->r[MT_UNWIND_REG_SP];
			other_stack = (next->valid & (1u << MT_UNWIND_REG_SP)) &&
				      (nsp < mem->base || nsp - mem->base > mem->size);
		}
		activation = signal;
		cur = next;
	}
	stats->last_other_stack = end == MT_UNWIND_END_DUMP && other_stack;
	*nr = n;
	return end;
}

int mt_unwind_walk(struct mt_unwind_maps *mp, struct mt_unwind_space *sp,
		   const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
		   struct mt_unwind_frame *frames, unsigned max, unsigned *nr,
		   struct mt_unwind_stats *stats)
{
	return walk(mp, sp, regs, mem, frames, max, nr, stats, NULL);
}

int mt_unwind_walk_with(const struct mt_unwind_finder *finder, struct mt_unwind_space *sp,
			const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
			struct mt_unwind_frame *frames, unsigned max, unsigned *nr,
			struct mt_unwind_stats *stats)
{
	return walk(NULL, sp, regs, mem, frames, max, nr, stats, finder);
}
