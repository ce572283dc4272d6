/* symbolize/summary.h: mt-unwind's closing lines on stderr. */
#include "symbolize/summary.h"

#include <inttypes.h>
#include <stdio.h>

#include "common/cli.h"

struct modsum {
	uint64_t hits, misses;
	unsigned modules, mismatches, unusable;
	int quiet;
};

static void module_summary(struct mt_unwind_module *m, void *arg)
{
	struct modsum *ms = arg;
	ms->modules++;
	uint64_t hits, misses;
	mt_unwind_module_cache_counts(m, &hits, &misses);
	ms->hits += hits;
	ms->misses += misses;
	if (mt_unwind_module_state(m) == MT_UNWIND_MOD_MISMATCH) {
		char want[41], got[41];
		mt_unwind_module_build_id_hex(m, 1, want);
		mt_unwind_module_build_id_hex(m, 0, got);
		ms->mismatches++;
		mt_warn("'%s': build-id mismatch (recorded %s, file has %s): "
			"its frames are not symbolised and are marked _[x]", mt_unwind_module_path(m),
			want, got[0] ? got : "none");
	}
	char why[160];
	if (mt_unwind_module_unusable_reason(m, why, sizeof(why))) {
		ms->unusable++;
		mt_warn("cannot use '%s': %s: its frames are not symbolised",
			mt_unwind_module_path(m), why);
	}
}

void mt_unwind_summary_print(const struct mt_unwind_summary *r, double secs)
{
	const struct mt_unwind_emit *e = r->emit;
	const struct mt_unwind_events_stats *ev = r->events;
	const struct mt_unwind_replay_stats *rp = r->replay;
	uint64_t undecodable = ev->undecodable + r->replay_undecodable;
	struct modsum ms = { 0 };
	mt_unwind_modules_each(r->modules, module_summary, &ms);
	if (r->quiet)
		return;
	mt_info("%" PRIu64 " events (alloc %" PRIu64 ", free %" PRIu64
		", totals %" PRIu64 ", sample %" PRIu64 ", lost %" PRIu64 ", tick %" PRIu64
		") from %" PRIu64 " records in %.3f s: %.0f events/s", e->events,
		e->by_kind[MT_UNWIND_K_ALLOC], e->by_kind[MT_UNWIND_K_FREE],
		e->by_kind[MT_UNWIND_K_TOTALS], e->by_kind[MT_UNWIND_K_SAMPLE],
		e->by_kind[MT_UNWIND_K_LOST], e->by_kind[MT_UNWIND_K_TICK], rp->records, secs,
		secs > 0 ? e->events / secs : 0.0);
	mt_info("%" PRIu64 " frames (%" PRIu64 " inline); steps: %" PRIu64
		" CFI, %" PRIu64 " frame pointer, %" PRIu64 " CFI rows not compiled",
		e->counts.frames, e->counts.inl, rp->walk.steps_cfi, rp->walk.steps_fp,
		rp->walk.rules_failed);
	char ends[512];
	size_t len = 0;
	uint64_t walked = 0;
	for (int k = 0; k < MT_UNWIND_END_COUNT; k++) {
		len += (size_t)snprintf(ends + len, sizeof(ends) - len, " %s %" PRIu64,
					mt_unwind_end_str(k), e->ends[k]);
		walked += k == MT_UNWIND_END_NONE ? 0 : e->ends[k];
	}
	mt_info("stack ends:%s", ends);
	/* Deep stacks (sqlite3, an LLVM-based compiler) need more than the
	 * 8 KiB perf copies by default.  Said when more than 1% of the stacks
	 * (and 3 at least) were cut: at 1.5% cut, cc1's outer functions came
	 * out 1.7% low (issue 26).  Advice to take a larger dump only for the
	 * stacks it would help: the others get their own reason (replay.h). */
	uint64_t dumped = e->ends[MT_UNWIND_END_DUMP];
	uint64_t other = rp->dump_other_stack, at_max = rp->dump_at_max, whole = rp->dump_whole;
	uint64_t helped = dumped - (other + at_max + whole <= dumped ? other + at_max + whole : dumped);
	if (dumped >= 3 && dumped * 100 > walked) {
		if (helped)
			mt_info("%" PRIu64 " of %" PRIu64 " stacks end where their stack dump "
				"ends: their outer callers are missing; record with a larger dump "
				"(mt-capture --stack-size 65528, perf record --call-graph dwarf,65528)",
				helped, walked);
		if (other)
			mt_info("%" PRIu64 " of %" PRIu64 " stacks end where their stack dump "
				"ends past a signal frame: the handler ran on an alternate signal "
				"stack (sigaltstack) and the interrupted stack was not copied; a "
				"larger dump would not reach it", other, walked);
		if (at_max)
			mt_info("%" PRIu64 " of %" PRIu64 " stacks end where their stack dump "
				"ends with the largest dump perf takes (%u bytes): their outer "
				"callers are missing", at_max, walked, MT_UNWIND_DUMP_MAX);
		if (whole)
			mt_info("%" PRIu64 " of %" PRIu64 " stacks end where their stack dump "
				"ends although it held the whole stack (the copy reached the "
				"stack's end): the walk went past it, a larger dump would not "
				"help", whole, walked);
	}
	uint64_t probes = rp->walk.memo_hits + rp->walk.memo_misses;
	uint64_t look = ms.hits + ms.misses;
	mt_info("%u modules, %u build-id mismatches, %u files that cannot be used; cache hit rate: pc memo %.2f%% of %"
		PRIu64 " frame lookups, rule and symbol caches behind it %.2f%% of %" PRIu64,
		ms.modules, ms.mismatches, ms.unusable,
		probes ? 100.0 * rp->walk.memo_hits / probes : 0.0, probes,
		look ? 100.0 * ms.hits / look : 0.0, look);
	struct mt_unwind_debug_cache_stats dc = mt_unwind_modules_debug_cache_stats(r->modules);
	if (dc.hits || dc.written || dc.failed || dc.bad || dc.untrusted)
		mt_info("debug cache: %u inflated copies used, %u written, %u unsound"
			" ones ignored, %u could not be written", dc.hits, dc.written,
			dc.bad, dc.failed);
	if (dc.untrusted)
		mt_warn("debug cache: %u copies not used: another user's, or writable"
			" by others", dc.untrusted);
	const struct mt_unwind_scopes_stats *sc = r->scopes;
	if (sc->loaded || sc->saved || sc->unsound || sc->failed)
		mt_info("scope index cache: %u indexes read, %u built, %u saved, %u"
			" unsound files ignored, %u files could not be written",
			sc->loaded, sc->built, sc->saved, sc->unsound, sc->failed);
	struct mt_unwind_symtab_stats sy = mt_unwind_modules_symtab_stats(r->modules);
	if (sy.read || sy.saved || sy.unsound || sy.failed)
		mt_info("symbol table cache: %u tables read, %u built, %u saved, %u"
			" unsound files ignored, %u files could not be written",
			sy.read, sy.built, sy.saved, sy.unsound, sy.failed);
	const struct mt_unwind_rules_stats *ru = r->rules;
	if (ru && (ru->read || ru->saved || ru->unsound || ru->failed))
		mt_info("CFI row cache: %" PRIu64 " rules from %u files read (%" PRIu64
			" distinct), %" PRIu64 " rows compiled, %u files saved, %u unsound files"
			" ignored, %u files could not be written", ru->hits, ru->read, ru->made,
			ru->compiled, ru->saved, ru->unsound, ru->failed);
	if (rp->callchains)
		mt_info("%" PRIu64 " samples had no stack dump: their frames are the"
			" kernel's frame-pointer callchains", rp->callchains);
	if (rp->pool_threads)
		mt_info("-j %u: %" PRIu64 " stacks walked on arrival by %u threads, the others"
			" at their turn on one", rp->pool_threads, rp->pool_walks, rp->pool_threads);
	if (rp->spec_rewalks)
		mt_info("%" PRIu64 " samples unwound again: their mappings changed"
			" while they waited for earlier records", rp->spec_rewalks);
	if (ev->lost_records)
		mt_info("the recording lost %" PRIu64 " events (%" PRIu64
			" LOST records)", ev->lost_count, ev->lost_records);
	if (ev->marks_dropped)
		mt_info("%" PRIu64 " marker events are missing without a LOST"
			" record", ev->marks_dropped);
	if (ev->marks_unseen)
		mt_info("%" PRIu64 " marker events the sampler made are missing"
			" (the LOST records may account for them)", ev->marks_unseen);
	if (ev->silent_images)
		mt_info("%" PRIu64 " process images ran libmt-sampler.so and sent no"
			" process totals (killed by a signal, ended by a bare exit system call, still running at"
			" the end, or could not reach the capture): `lost` lines reason=no-totals;"
			" their allocations since their last report are in no totals",
			ev->silent_images);
	if (ev->unsampled_images)
		mt_info("%" PRIu64 " process images never loaded libmt-sampler.so (%s):"
			" static programs, or LD_PRELOAD cleared; `lost` lines reason=no-sampler:"
			" their allocations are in no figure", ev->unsampled_images,
			ev->unsampled_comms[0] ? ev->unsampled_comms : "names unknown");
	if (ev->memptr_unknown)
		mt_info("%" PRIu64 " posix_memalign calls written with ptr=0x0: the"
			" pointer was not in the return's stack dump (not on the stack, or a"
			" recording made before mt-capture copied it)", ev->memptr_unknown);
	if (ev->failed)
		mt_info("%" PRIu64 " allocator calls failed (they returned NULL or an error, or"
			" asked for a size or alignment none is given for): no allocation written",
			ev->failed);
	if (undecodable || rp->no_regs || ev->filtered || ev->superseded || ev->internal ||
	    ev->unpaired)
		mt_info("%" PRIu64 " undecodable records, %" PRIu64
			" samples without registers, %" PRIu64 " filtered out, %" PRIu64
			" superseded totals reports, %" PRIu64 " allocator-internal calls, %"
			PRIu64 " unpaired returns", undecodable, rp->no_regs,
			ev->filtered, ev->superseded, ev->internal, ev->unpaired);
}

