/* What was live over time, by stack (--live-buckets, fold/live.h): from
 * the same liveness pass as inuse and peak, so a bucket's figures are the
 * peak metrics of --at at its moment, and the last bucket's the inuse
 * metrics, stack by stack. */
#include <criterion/criterion.h>
#include <math.h>

#include "fold/live.h"
#include "fold/memjson.h"
#include "helpers.h"

static uint64_t rnd_state;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rnd_state >> 33) % n);
}

static const char *const stacks[] = {
	"main;churn;malloc end=complete", "main;build;grow;malloc end=complete",
	"main;keep;malloc end=complete", "main;build;node;calloc end=complete",
};

/* mt-unwind text of two processes: pid 7 byte-sampled (rate 4096), pid 9
 * traced every 3rd call, each with ticks naming its peak moment; frees out
 * of time order in the input, pointers reused without a free (implicit
 * frees), allocations with ptr=0 and frees of pointers never allocated. */
static char *gen_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	rnd_state = 12345;
	fputs("# mt-unwind 1\n", f);
	for (unsigned pid = 7; pid <= 9; pid += 2) {
		unsigned long long t = 1000000000ull + pid;
		unsigned long long peak_time = 0;
		unsigned nlive = 0;
		struct { unsigned long long ptr, t; } live[400];
		for (unsigned i = 0; i < 3000; i++) {
			t += 1000 + rnd(5000);
			unsigned size = 16 + rnd(8000);
			unsigned long long ptr = 0x1000 + 16ull * rnd(900);
			if (rnd(50) == 0)
				ptr = 0;
			int phase = i < 1000 ? 0 : i < 2000 ? 1 : 2;
			const char *st = stacks[phase == 1 ? 1 + 2 * rnd(2) : phase == 0 ? 0 : 2];
			if (pid == 7)
				fprintf(f, "alloc\t%u/%u\t%llu\tp\tsize=%u ptr=0x%llx points=%u rate=4096\t%s\n",
					pid, pid, t, size, ptr, 1 + size / 4096 + rnd(2), st);
			else
				fprintf(f, "alloc\t%u/%u\t%llu\tp\tsize=%u ptr=0x%llx every=3\t%s\n",
					pid, pid, t, size, ptr, st);
			if (ptr && nlive < 400) {
				live[nlive].ptr = ptr;
				live[nlive++].t = t;
			}
			/* churn frees at once, build frees after its phase, keep never */
			int do_free = phase == 0 ? rnd(4) != 0 : phase == 2 && rnd(3) == 0;
			if (i == 1999) {
				peak_time = t;
				do_free = 1;
			}
			if (do_free && nlive) {
				unsigned k = phase == 0 || i == 1999 ? nlive - 1 : rnd(nlive);
				unsigned long long ft = t + 1 + rnd(3);
				if (i == 1999) {	/* the build phase's blocks go */
					for (unsigned j = 0; j < nlive; j++)
						fprintf(f, "free\t%u/%u\t%llu\tp\tptr=0x%llx\t end=none\n",
							pid, pid, t + 2 + rnd(100000), live[j].ptr);
					nlive = 0;
					continue;
				}
				fprintf(f, "free\t%u/%u\t%llu\tp\tptr=0x%llx\t end=none\n", pid, pid, ft,
					live[k].ptr);
				live[k] = live[--nlive];
			}
			if (rnd(200) == 0)
				fprintf(f, "free\t%u/%u\t%llu\tp\tptr=0x99999990\t end=none\n", pid, pid, t);
			if (i % 100 == 0)
				fprintf(f, "tick\t%u/%u\t%llu\tp\tlive=1 alloc_bytes=1 alloc_block_bytes=1 "
					"allocs=1 frees=0 rss=1 peak=1 peak_time=%llu peak_error=0 "
					"period=10000000\t end=none\n", pid, pid, t, t);
		}
		fprintf(f, "tick\t%u/%u\t%llu\tp\tlive=1 alloc_bytes=1 alloc_block_bytes=1 allocs=1 "
			"frees=0 rss=1 peak=99999999 peak_time=%llu peak_error=0 period=10000000\t "
			"end=none\n", pid, pid, t + 200000, peak_time);
	}
	fclose(f);
	return buf;
}

static struct mt_fold_profile *fold_text(const char *text, unsigned buckets, int64_t at)
{
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	cr_assert(p && f);
	mt_fold_profile_live_buckets(p, buckets);
	if (at >= 0)
		mt_fold_profile_at(p, (uint64_t)at);
	cr_assert_eq(mt_fold_profile_read(p, f, "gen", NULL, NULL), 0);
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	fclose(f);
	return p;
}

static const struct mt_fold_live_row *row_of(const struct mt_fold_live *l, uint32_t stack)
{
	for (uint32_t i = 0; i < l->nrows; i++)
		if (l->rows[i].stack == stack)
			return &l->rows[i];
	return NULL;
}

static double value(const struct mt_fold_est *e)
{
	return (double)e->exact + e->y;
}

/* Every stack's live figure at bucket b against q's metrics mb, mo;
 * @return : the bytes summed. */
static double same_as(const struct mt_fold_live *l, unsigned b, const struct mt_fold_profile *q,
		      enum mt_fold_metric mb, enum mt_fold_metric mo)
{
	double sum = 0, qsum = 0;
	cr_assert(mt_fold_profile_stack_count(q) > 0);
	for (uint32_t id = 0; id < mt_fold_profile_stack_count(q); id++) {
		const struct mt_fold_est *est;
		const char *key = mt_fold_profile_stack(q, id, NULL, &est);
		const struct mt_fold_live_row *r = row_of(l, id);
		struct mt_fold_live_pt pt = r ? mt_fold_live_at(r, b) : (struct mt_fold_live_pt){ 0 };
		cr_assert_eq(pt.bytes, value(&est[mb]), "%s at bucket %u: %.17g bytes, %s %.17g", key,
			     b, pt.bytes, mt_fold_metric_name(mb), value(&est[mb]));
		cr_assert(fabs(pt.objects - value(&est[mo])) <= 1e-9 * (1 + value(&est[mo])),
			  "%s at bucket %u: %.17g objects, %s %.17g", key, b, pt.objects,
			  mt_fold_metric_name(mo), value(&est[mo]));
		cr_assert_eq(pt.n, est[mb].n, "%s at bucket %u: n %llu, %llu", key, b,
			     (unsigned long long)pt.n, (unsigned long long)est[mb].n);
		sum += pt.bytes;
		qsum += value(&est[mb]);
	}
	cr_assert_eq(sum, qsum);
	return sum;
}

Test(live, peak_bucket_is_peak_at_its_moment)
{
	char *text = gen_text();
	struct mt_fold_profile *p = fold_text(text, 50, -1);
	const struct mt_fold_live *l = mt_fold_profile_live(p);
	cr_assert(l && l->buckets == 50);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(l->start, c->time_first);
	cr_assert_eq(l->end, c->time_last);
	cr_assert_eq(l->allocations, c->sample_allocs + c->trace_allocs - c->no_ptr_allocs);
	cr_assert(c->implicit_frees > 0 && c->unmatched_frees > 0 && c->no_ptr_allocs > 0,
		  "the input has implicit frees (%llu), unmatched frees (%llu), ptr=0 (%llu)",
		  (unsigned long long)c->implicit_frees, (unsigned long long)c->unmatched_frees,
		  (unsigned long long)c->no_ptr_allocs);
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	cr_assert_eq(tl->nprocs, 2);
	for (size_t i = 0; i < tl->nprocs; i++) {
		uint64_t tp = tl->procs[i].peak_time;
		unsigned b = mt_fold_live_bucket(l, tp);
		cr_assert(l->moments[b] >= tp && (b == 0 || l->moments[b - 1] < tp));
		struct mt_fold_profile *q = fold_text(text, 0, (int64_t)(l->moments[b] - l->start));
		double bytes = same_as(l, b, q, MT_FOLD_PEAK_BYTES, MT_FOLD_PEAK_OBJECTS);
		struct mt_fold_snapshot *s = snapshot_of(q, MT_FOLD_PEAK_BYTES, 0);
		cr_assert_eq(bytes, s->mem->peak_bytes.value, "bucket %u: %.17g, peak_bytes %.17g", b,
			     bytes, s->mem->peak_bytes.value);
		cr_assert(bytes > 1e6, "the build phase is live at pid %u's peak: %g bytes",
			  tl->procs[i].pid, bytes);
		mt_fold_snapshot_free(s);
		mt_fold_profile_free(q);
	}
	/* and every other bucket */
	for (unsigned b = 0; b < l->buckets; b++) {
		struct mt_fold_profile *q = fold_text(text, 0, (int64_t)(l->moments[b] - l->start));
		same_as(l, b, q, MT_FOLD_PEAK_BYTES, MT_FOLD_PEAK_OBJECTS);
		mt_fold_profile_free(q);
	}
	mt_fold_profile_free(p);
	free(text);
}

Test(live, last_bucket_is_inuse)
{
	char *text = gen_text();
	struct mt_fold_profile *p = fold_text(text, 37, -1);
	const struct mt_fold_live *l = mt_fold_profile_live(p);
	cr_assert(l);
	double bytes = same_as(l, l->buckets - 1, p, MT_FOLD_INUSE_BYTES, MT_FOLD_INUSE_OBJECTS);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_INUSE_BYTES, 0);
	cr_assert_eq(bytes, s->total.value, "last bucket %.17g, inuse_bytes %.17g", bytes,
		     s->total.value);
	cr_assert(bytes > 1e6);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	free(text);
}

/* rate=1 over [10, 60], 5 buckets: moments 19, 29, 39, 49, 60.  100 B at
 * 10, never freed; 200 B at 20 freed at 25 (live at no moment: allocated
 * in bucket 1); 300 B at 29 freed at 39 (live at 29: TIME <= t < free's);
 * 400 B at 30 freed at 50 (live at 39 and 49, not at 60); 8 B at 60 (live
 * at the end). */
static const char exact_text[] =
	"# mt-unwind 1\n"
	"alloc\t7/7\t10\tp\tsize=100 ptr=0x10 points=100 rate=1\tmain;f;malloc end=complete\n"
	"alloc\t7/7\t20\tp\tsize=200 ptr=0x20 points=200 rate=1\tmain;f;malloc end=complete\n"
	"free\t7/7\t25\tp\tptr=0x20 rate=1\t end=none\n"
	"alloc\t7/7\t29\tp\tsize=300 ptr=0x50 points=300 rate=1\tmain;f;malloc end=complete\n"
	"free\t7/7\t39\tp\tptr=0x50 rate=1\t end=none\n"
	"alloc\t7/7\t30\tp\tsize=400 ptr=0x30 points=400 rate=1\tmain;f;malloc end=complete\n"
	"free\t7/7\t50\tp\tptr=0x30 rate=1\t end=none\n"
	"alloc\t7/7\t60\tp\tsize=8 ptr=0x40 points=8 rate=1\tmain;g;malloc end=complete\n";

Test(live, exact_moments_and_json)
{
	struct mt_fold_profile *p = fold_text(exact_text, 5, -1);
	const struct mt_fold_live *l = mt_fold_profile_live(p);
	const uint64_t moments[5] = { 19, 29, 39, 49, 60 };
	cr_assert(l && l->buckets == 5 && l->nrows == 2);
	for (unsigned b = 0; b < 5; b++)
		cr_assert_eq(l->moments[b], moments[b], "moment %u: %llu", b,
			     (unsigned long long)l->moments[b]);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	char *json = render(mt_fold_render_json, s);
	const char *want =
		",\n \"live_over_time\": {\"time_unit\": \"ns\", \"start\": 10, \"end\": 60, "
		"\"buckets\": 5,\n  \"allocations\": 5, \"no_ptr_allocations\": 0,\n"
		"  \"moments\": [9,19,29,39,50],\n  \"stacks\": [\n"
		"   {\"stack\": \"main;f;malloc\", \"live\": [[0, 100, 1, 0], [1, 400, 2, 0], "
		"[2, 500, 2, 0], [4, 100, 1, 0]],\n    \"allocated\": [[0, 100, 1, 0], [1, 500, 2, 0], "
		"[2, 400, 1, 0]]},\n"
		"   {\"stack\": \"main;g;malloc\", \"live\": [[4, 8, 1, 0]],\n"
		"    \"allocated\": [[4, 8, 1, 0]]}]}\n}\n";
	const char *at = strstr(json, ",\n \"live_over_time\"");
	cr_assert(at, "%s", json);
	cr_assert_str_eq(at, want);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	/* not asked for: no section, the JSON as before */
	p = fold_text(exact_text, 0, -1);
	cr_assert_null(mt_fold_profile_live(p));
	s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	json = render(mt_fold_render_json, s);
	cr_assert_null(strstr(json, "live_over_time"));
	/* each bucket: the peak metrics of --at at its moment */
	struct mt_fold_profile *lp = fold_text(exact_text, 5, -1);
	for (unsigned b = 0; b < 5; b++) {
		struct mt_fold_profile *q = fold_text(exact_text, 0, (int64_t)(moments[b] - 10));
		const double want_bytes[5] = { 100, 400, 500, 500, 108 };
		cr_assert_eq(same_as(mt_fold_profile_live(lp), b, q, MT_FOLD_PEAK_BYTES,
				     MT_FOLD_PEAK_OBJECTS), want_bytes[b], "bucket %u", b);
		mt_fold_profile_free(q);
	}
	mt_fold_profile_free(lp);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A stack live at no moment (freed within its bucket): no live points, its
 * allocation in "allocated"; the snapshot's copy keeps both. */
Test(live, stack_live_at_no_moment)
{
	static const char text[] =
		"# mt-unwind 1\n"
		"alloc\t7/7\t10\tp\tsize=64 ptr=0x10 points=64 rate=1\tmain;keep;malloc end=complete\n"
		"alloc\t7/7\t12\tp\tsize=32 ptr=0x20 points=32 rate=1\tmain;tmp;malloc end=complete\n"
		"free\t7/7\t13\tp\tptr=0x20 rate=1\t end=none\n"
		"alloc\t7/7\t100\tp\tsize=16 ptr=0x30 points=16 rate=1\tmain;keep;malloc end=complete\n";
	struct mt_fold_profile *p = fold_text(text, 2, -1);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->live.nrows, 2);
	char *json = render(mt_fold_render_json, s);
	cr_assert(strstr(json, "{\"stack\": \"main;tmp;malloc\", \"live\": [],\n"
			       "    \"allocated\": [[0, 32, 1, 0]]}"), "%s", json);
	cr_assert(strstr(json, "{\"stack\": \"main;keep;malloc\", \"live\": [[0, 64, 1, 0], "
			       "[1, 80, 2, 0]],\n    \"allocated\": [[0, 64, 1, 0], [1, 16, 1, 0]]}"),
		  "%s", json);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}
