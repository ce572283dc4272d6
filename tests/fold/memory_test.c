/* Peak, temporaries, timeline, histograms (issue 27): the estimators on
 * mt-unwind text in the contract's format (docs/formats/unwind-text.md,
 * tick lines and seq=). */
#include <criterion/criterion.h>
#include <math.h>

#include "fold/hist.h"
#include "fold/line.h"
#include "fold/memory.h"
#include "fold/memtext.h"
#include "fold/timeline.h"
#include "helpers.h"

#define ST "main;f;malloc end=complete\n"

/* A tick of pid 7 at time t: live, peak at peak_time. */
static void tick(FILE *f, unsigned pid, unsigned long long t, long long live,
		 unsigned long long peak, unsigned long long peak_time)
{
	fprintf(f, "tick\t%u/%u\t%llu\tp\tlive=%lld alloc_bytes=%llu alloc_block_bytes=%llu "
		"allocs=1 frees=0 rss=%llu peak=%llu peak_time=%llu peak_error=0 "
		"period=10000000\t end=none\n", pid, pid, t, live, t, t, 1000000 + t, peak,
		peak_time);
}

static char *text_of(void (*fill)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fputs("# mt-unwind 1\n", f);
	fill(f);
	fclose(f);
	return buf;
}

static double metric_sum(const struct mt_fold_profile *p, enum mt_fold_metric m)
{
	struct mt_fold_snapshot *s = snapshot_of(p, m, 0);
	double v = s->total.value;
	int exact = s->total.exact;
	mt_fold_snapshot_free(s);
	cr_assert(exact, "rate=1: %s exact", mt_fold_metric_name(m));
	return v;
}

/* rate=1: three allocations at times 10, 20, 30 of 100, 200, 400 bytes;
 * the 200 is freed at 25.  The ticks say the peak (700 block bytes) was
 * raised at 30: live then are the 100 and the 400. */
static void fill_peak(FILE *f)
{
	tick(f, 7, 5, 0, 0, 0);
	fprintf(f, "alloc\t7/7\t10\tp\tsize=100 ptr=0x10 points=100 rate=1 seq=1\t" ST);
	fprintf(f, "alloc\t7/7\t20\tp\tsize=200 ptr=0x20 points=200 rate=1 seq=2\t" ST);
	fprintf(f, "free\t7/7\t25\tp\tptr=0x20 rate=1 seq=2\t end=none\n");
	fprintf(f, "alloc\t7/7\t30\tp\tsize=400 ptr=0x30 points=400 rate=1 seq=3\t" ST);
	tick(f, 7, 40, 500, 700, 30);
	fprintf(f, "free\t7/7\t50\tp\tptr=0x30 rate=1 seq=3\t end=none\n");
	tick(f, 7, 60, 100, 700, 30);
}

Test(memory, peak_moment_is_the_largest_peak_at_its_time)
{
	char *t = text_of(fill_peak);
	struct mt_fold_profile *p = profile_of(t, 0);
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	cr_assert_eq(tl->nprocs, 1);
	cr_assert_eq(tl->procs[0].peak, 700);
	cr_assert_eq(tl->procs[0].peak_time, 30);
	cr_assert_eq(metric_sum(p, MT_FOLD_PEAK_BYTES), 500);	/* 100 + 400 */
	cr_assert_eq(metric_sum(p, MT_FOLD_PEAK_OBJECTS), 2);
	mt_fold_profile_free(p);
	free(t);
}

/* A tick whose live exceeds every peak= (the batched peak lagging) is the
 * peak at the tick's TIME. */
static void fill_live_above(FILE *f)
{
	tick(f, 7, 5, 0, 0, 0);
	fprintf(f, "alloc\t7/7\t10\tp\tsize=100 ptr=0x10 points=100 rate=1 seq=1\t" ST);
	tick(f, 7, 12, 300, 100, 10);
	fprintf(f, "free\t7/7\t15\tp\tptr=0x10 rate=1 seq=1\t end=none\n");
	tick(f, 7, 20, 0, 100, 10);
}

Test(memory, tick_live_above_peak_moves_the_moment)
{
	char *t = text_of(fill_live_above);
	struct mt_fold_profile *p = profile_of(t, 0);
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	cr_assert_eq(tl->procs[0].peak, 300);
	cr_assert_eq(tl->procs[0].peak_time, 12);
	cr_assert_eq(metric_sum(p, MT_FOLD_PEAK_BYTES), 100);
	mt_fold_profile_free(p);
	free(t);
}

Test(memory, at_time_is_from_the_first_event)
{
	char *t = text_of(fill_peak);
	/* first event at 5: --at 20 ns is time 25, when the 200 is freed
	 * (alloc TIME <= t < free TIME: not live) and the 400 not made yet */
	for (int k = 0; k < 3; k++) {
		static const uint64_t at[] = { 20, 19, 15 };
		static const double want[] = { 100, 300, 300 };
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		FILE *f = fmemopen(t, strlen(t), "r");
		mt_fold_profile_at(p, at[k]);
		cr_assert_eq(mt_fold_profile_read(p, f, "t", NULL, NULL), 0);
		fclose(f);
		cr_assert_eq(mt_fold_profile_finish(p), 0);
		cr_assert_eq(mt_fold_profile_at_time(p), (int64_t)(5 + at[k]));
		cr_assert_eq(metric_sum(p, MT_FOLD_PEAK_BYTES), want[k], "at %llu",
			     (unsigned long long)at[k]);
		mt_fold_profile_free(p);
	}
	free(t);
}

/* temp: same pid/tid, free seq == alloc seq.  Thread 7 allocates A (seq 1)
 * and frees it at seq 1: temporary.  B (seq 2) is freed after C (seq 3):
 * not.  D (seq 1 of thread 8) is freed by thread 7, whose count is 1 too:
 * not (another thread).  E (seq 4) freed without seq=: not. */
static void fill_temp(FILE *f)
{
	fprintf(f, "alloc\t7/7\t10\tp\tsize=10 ptr=0xa points=10 rate=1 seq=1\t" ST);
	fprintf(f, "free\t7/7\t11\tp\tptr=0xa rate=1 seq=1\t end=none\n");
	fprintf(f, "alloc\t7/7\t12\tp\tsize=20 ptr=0xb points=20 rate=1 seq=2\t" ST);
	fprintf(f, "alloc\t7/7\t13\tp\tsize=40 ptr=0xc points=40 rate=1 seq=3\t" ST);
	fprintf(f, "free\t7/7\t14\tp\tptr=0xb rate=1 seq=3\t end=none\n");
	fprintf(f, "alloc\t7/8\t15\tp\tsize=80 ptr=0xd points=80 rate=1 seq=1\t" ST);
	fprintf(f, "free\t7/9\t16\tp\tptr=0xd rate=1 seq=1\t end=none\n");
	fprintf(f, "alloc\t7/7\t17\tp\tsize=160 ptr=0xe points=160 rate=1 seq=4\t" ST);
	fprintf(f, "free\t7/7\t18\tp\tptr=0xe rate=1\t end=none\n");
	fprintf(f, "alloc\t7/7\t19\tp\tsize=320 ptr=0xf points=320 rate=1 seq=5\t" ST);
	fprintf(f, "free\t7/7\t20\tp\tptr=0xf rate=1 seq=5\t end=none\n");
}

Test(memory, temp_pairs_by_thread_and_seq)
{
	char *t = text_of(fill_temp);
	struct mt_fold_profile *p = profile_of(t, 0);
	cr_assert_eq(metric_sum(p, MT_FOLD_TEMP_BYTES), 10 + 320);
	cr_assert_eq(metric_sum(p, MT_FOLD_TEMP_OBJECTS), 2);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->seq_allocs, 6);
	cr_assert_eq(c->seq_frees, 4);
	/* allocations in between, same thread only: A 0, B 1, the last 0;
	 * D (another thread) and E (no seq) in none */
	const struct mt_fold_hists *h = mt_fold_profile_hists(p);
	cr_assert_eq((double)h->life_allocs.objects[0].exact, 2);
	cr_assert_eq((double)h->life_allocs.objects[1].exact, 1);
	double all = 0;
	for (unsigned b = 0; b < MT_FOLD_HIST_BUCKETS; b++)
		all += (double)h->life_allocs.objects[b].exact;
	cr_assert_eq(all, 3);
	cr_assert_eq((double)h->freed.exact, 5);
	cr_assert_eq((double)h->not_freed.exact, 1);	/* C */
	mt_fold_profile_free(p);
	free(t);
}

Test(memory, sampled_temp_estimate_is_alloc_estimate_of_the_pairs)
{
	/* rate 4096: the estimate of a temporary is its alloc estimate */
	const char *t = "# mt-unwind 1\n"
		"alloc\t7/7\t10\tp\tsize=64 ptr=0xa points=1 rate=4096 seq=9\t" ST
		"free\t7/7\t11\tp\tptr=0xa rate=4096 seq=9\t end=none\n"
		"alloc\t7/7\t12\tp\tsize=8192 ptr=0xb points=3 rate=4096 seq=20\t" ST
		"free\t7/7\t14\tp\tptr=0xb rate=4096 seq=21\t end=none\n";
	struct mt_fold_profile *p = profile_of(t, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_TEMP_BYTES, 0);
	cr_assert_eq(s->total.value, 4096);
	cr_assert_eq(s->total.n, 1);
	cr_assert(!s->total.exact);
	cr_assert(s->total.lo < 4096 && s->total.hi > 4096);
	mt_fold_snapshot_free(s);
	s = snapshot_of(p, MT_FOLD_TEMP_OBJECTS, 0);
	cr_assert_float_eq(s->total.value, 1 / -expm1(-64.0 / 4096), 1e-9);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(memory, hist_buckets_are_log2)
{
	cr_assert_eq(mt_fold_hist_bucket(0), 0);
	cr_assert_eq(mt_fold_hist_bucket(1), 1);
	cr_assert_eq(mt_fold_hist_bucket(2), 2);
	cr_assert_eq(mt_fold_hist_bucket(3), 2);
	cr_assert_eq(mt_fold_hist_bucket(4), 3);
	cr_assert_eq(mt_fold_hist_bucket(4095), 12);
	cr_assert_eq(mt_fold_hist_bucket(4096), 13);
	cr_assert_eq(mt_fold_hist_bucket(UINT64_MAX), 64);
	for (unsigned b = 1; b < 64; b++) {
		cr_assert_eq(mt_fold_hist_bucket((uint64_t)mt_fold_hist_lo(b)), b);
		cr_assert_eq(mt_fold_hist_bucket((uint64_t)mt_fold_hist_hi(b) - 1), b);
	}
	cr_assert_eq(mt_fold_hist_lo(0), 0);
	cr_assert_eq(mt_fold_hist_hi(0), 1);
}

Test(memory, size_and_lifetime_buckets)
{
	char *t = text_of(fill_temp);
	struct mt_fold_profile *p = profile_of(t, 0);
	const struct mt_fold_hists *h = mt_fold_profile_hists(p);
	/* sizes 10, 20, 40, 80, 160, 320: buckets 4, 5, 6, 7, 8, 9 */
	for (unsigned b = 0; b < MT_FOLD_HIST_BUCKETS; b++) {
		int want = b >= 4 && b <= 9;
		cr_assert_eq((double)h->sizes.objects[b].exact, want ? 1 : 0, "bucket %u", b);
		cr_assert_eq((double)h->sizes.bytes[b].exact, want ? 10 << (b - 4) : 0);
	}
	/* lifetimes 1 ns (A, E, last), 2 ns (B), 1 ns (D): [1,2) holds 4 */
	cr_assert_eq((double)h->life_ns.objects[1].exact, 4);
	cr_assert_eq((double)h->life_ns.objects[2].exact, 1);
	/* per stack: all six are one stack */
	const struct mt_fold_cells *c = mt_fold_profile_stack_cells(p, 0);
	struct mt_fold_hist *sh = malloc(sizeof(*sh));
	mt_fold_cells_hist(c, MT_FOLD_CELL_SIZES, sh);
	cr_assert_eq((double)sh->objects[9].exact, 1);
	mt_fold_cells_hist(c, MT_FOLD_CELL_LIFE_NS, sh);
	cr_assert_eq((double)sh->objects[1].exact, 4);
	free(sh);
	mt_fold_profile_free(p);
	free(t);
}

Test(memory, downsample_bounds_points_and_keeps_the_peak)
{
	size_t n = 100003;
	struct mt_fold_tick *in = calloc(n, sizeof(*in)), *out = calloc(n, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		in[i].time = 1000 + i * 7;
		in[i].live = (int64_t)(i % 1000);
		in[i].alloc_bytes = i * 10;
		in[i].rss = MT_FOLD_RSS_NONE;
	}
	in[77777].live = 5000000;	/* the peak */
	size_t k = mt_fold_timeline_downsample(in, n, MT_FOLD_TIMELINE_MAX, out);
	cr_assert_leq(k, MT_FOLD_TIMELINE_MAX);
	cr_assert_geq(k, MT_FOLD_TIMELINE_MAX - 1);
	int found = 0;
	for (size_t i = 0; i < k; i++) {
		found |= out[i].live == 5000000 && out[i].time == in[77777].time;
		if (i)
			cr_assert_gt(out[i].time, out[i - 1].time);
		cr_assert_geq(out[i].alloc_bytes, in[0].alloc_bytes);
	}
	cr_assert(found, "the peak point survives");
	/* the last bucket carries the last cumulative values */
	cr_assert_eq(out[k - 1].alloc_bytes, in[n - 1].alloc_bytes);
	/* few points: as they are */
	cr_assert_eq(mt_fold_timeline_downsample(in, 10, MT_FOLD_TIMELINE_MAX, out), 10);
	cr_assert_eq(memcmp(in, out, 10 * sizeof(*in)), 0);
	free(in);
	free(out);
}

/* Two processes: pid 1 from 0 to 100 at 10 live, pid 2 from 50 to 200 at
 * 20 live.  The total: 10 from 0, 30 from 50, 20 after 100, 0 after 200. */
static void fill_two(FILE *f)
{
	tick(f, 1, 0, 10, 10, 0);
	tick(f, 1, 100, 10, 10, 0);
	tick(f, 2, 50, 20, 20, 50);
	tick(f, 2, 200, 20, 20, 50);
}

Test(memory, total_sums_processes_as_steps)
{
	char *t = text_of(fill_two);
	struct mt_fold_profile *p = profile_of(t, 0);
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	struct mt_fold_tick *tot;
	uint64_t err;
	size_t n = mt_fold_timeline_total(tl, &tot, &err);
	/* the point after the last exit (nothing live) is left out */
	cr_assert_eq(n, 5);
	uint64_t tt[] = { 0, 50, 100, 101, 200 };
	int64_t lv[] = { 10, 30, 30, 20, 20 };
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tot[i].time, tt[i], "point %zu", i);
		cr_assert_eq(tot[i].live, lv[i], "point %zu", i);
	}
	free(tot);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->mem->total_peak, 30);
	cr_assert_eq(s->mem->total_peak_time, 50);
	cr_assert_eq(s->mem->nprocs, 2);
	cr_assert(!s->mem->peak_time_known);
	cr_assert_eq(s->mem->at_peak.block, 30);	/* 10 + 20, each at its peak */
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	free(t);
}

Test(memory, tick_line_parses_signed_live_and_optional_rss)
{
	struct mt_fold_event ev;
	const char *l = "tick\t3/3\t99\tp\tlive=-16 alloc_bytes=5 alloc_block_bytes=6 allocs=1 "
			"frees=2 peak=7 peak_time=8 peak_error=9 period=10\t end=none";
	cr_assert_eq(mt_fold_line_parse(l, strlen(l), &ev), 0);
	cr_assert_eq(ev.kind, MT_FOLD_TICK);
	cr_assert_eq(ev.live, -16);
	cr_assert_eq(ev.alloc_block_bytes, 6);
	cr_assert_eq(ev.peak, 7);
	cr_assert_eq(ev.peak_time, 8);
	cr_assert(!(ev.have & MT_FOLD_W_RSS));
	const char *bad = "tick\t3/3\t99\tp\tlive=x alloc_bytes=5 alloc_block_bytes=6 peak=7 "
			  "peak_time=8\t end=none";
	cr_assert_eq(mt_fold_line_parse(bad, strlen(bad), &ev), MT_FOLD_EVALUE);
	cr_assert_str_eq(ev.bad_key, "live");
	const char *miss = "tick\t3/3\t99\tp\tlive=1 alloc_bytes=5 alloc_block_bytes=6 peak=7\t"
			   " end=none";
	cr_assert_eq(mt_fold_line_parse(miss, strlen(miss), &ev), MT_FOLD_EMISSING);
	cr_assert_str_eq(ev.bad_key, "peak_time");
	const char *a = "alloc\t3/4\t99\tp\tsize=1 ptr=0x1 points=1 rate=1 seq=12\t end=none";
	cr_assert_eq(mt_fold_line_parse(a, strlen(a), &ev), 0);
	cr_assert_eq(ev.seq, 12);
	cr_assert(ev.have & MT_FOLD_W_SEQ);
}

Test(memory, chart_marks_the_peak_and_fits)
{
	struct mt_fold_tick pts[3] = {
		{ .time = 1000, .live = 0, .rss = 100 },
		{ .time = 1500, .live = 800, .rss = 1000 },
		{ .time = 2000, .live = 100, .rss = 1000 },
	};
	for (size_t w = 40; w <= 160; w += 40) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		mt_fold_render_chart(f, pts, 3, 1000, 1500, w);
		fclose(f);
		unsigned lines = 0;
		for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
			cr_assert_leq((size_t)(nl - l), w, "width %zu: '%.*s'", w, (int)(nl - l), l);
			lines++;
		}
		cr_assert_eq(lines, 10, "8 rows, the axis, the labels");
		cr_assert(strstr(buf, "^ peak 500 ns") || strstr(buf, "peak 500 ns ^"), "%s", buf);
		cr_assert(strchr(buf, '#') && strchr(buf, ':'));
		free(buf);
	}
}

Test(memory, ticks_survive_only_tid_and_only_comm)
{
	char *t = text_of(fill_peak);
	uint32_t tids[] = { 7 }, pids[] = { 8 };
	const char *comms[] = { "q" };
	struct mt_fold_filter fl[3] = {
		{ .tids = tids, .ntids = 1 }, { .comms = comms, .ncomms = 1 },
		{ .pids = pids, .npids = 1 },
	};
	for (int k = 0; k < 3; k++) {
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		mt_fold_profile_filter(p, &fl[k]);
		FILE *f = fmemopen(t, strlen(t), "r");
		cr_assert_eq(mt_fold_profile_read(p, f, "t", NULL, NULL), 0);
		fclose(f);
		cr_assert_eq(mt_fold_profile_finish(p), 0);
		/* tid 7 and comm q: the ticks are pid 7's, kept; pid 8: none */
		cr_assert_eq(mt_fold_profile_counts(p)->kind[MT_FOLD_TICK], k < 2 ? 3 : 0, "filter %d", k);
		mt_fold_profile_free(p);
	}
	free(t);
}
