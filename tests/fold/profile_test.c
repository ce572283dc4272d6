/* Folding small hand-reasoned inputs: each estimator, liveness, merging. */
#include <criterion/criterion.h>
#include <math.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fold/gamma.h"
#include "tests/fold/helpers.h"
#include "tests/fold/sim.h"

#define R "524288"

Test(profile, sample_mode_bytes_are_points_times_rate)
{
	/* Two sampled allocations at site a (1 and 3 points), one at b. */
	struct mt_fold_profile *p = profile_of(
		"# mt-unwind 1\n"
		"alloc\t1/1\t1\tt\tsize=32 ptr=0x10 points=1 rate=" R "\tmain;a end=complete\n"
		"alloc\t1/1\t2\tt\tsize=2000000 ptr=0x20 points=3 rate=" R "\tmain;a end=complete\n"
		"alloc\t1/1\t3\tt\tsize=4096 ptr=0x30 points=1 rate=" R "\tmain;b end=complete\n", 0);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	cr_assert_str_eq(out, "main;a 2097152\nmain;b 524288\n");	/* 4 and 1 x 512 KiB */
	free(out);

	/* objects: 1/(1-exp(-s/R)) each: 16384.5, 1.0225, 128.5 */
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_OBJECTS, 0);
	const struct mt_fold_site *a = site_named(s, "a");
	double want = 1 / -expm1(-32.0 / 524288) + 1 / -expm1(-2000000.0 / 524288);
	cr_assert(fabs(a->total.value - want) < 1e-6, "objects %f want %f", a->total.value, want);
	cr_assert_eq(a->total.n, 2);
	cr_assert(!a->total.exact);
	const struct mt_fold_site *mainsite = site_named(s, "main");
	cr_assert_eq(mainsite->total.n, 3);
	cr_assert_eq(mainsite->self.value, 0);	/* main never is the leaf */
	mt_fold_snapshot_free(s);

	/* bytes: site a has n = 4 points, RSE 1/2, Garwood [1.0899, 10.2416] x R */
	s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	a = site_named(s, "a");
	cr_assert_eq(a->total.n, 4);
	cr_assert(fabs(a->total.rse - 0.5) < 1e-12);
	cr_assert(fabs(a->total.lo / 524288 - 1.089865) < 1e-5, "lo %f", a->total.lo / 524288);
	cr_assert(fabs(a->total.hi / 524288 - 10.241589) < 1e-5, "hi %f", a->total.hi / 524288);
	cr_assert(a->few);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(profile, trace_mode_is_exact_to_the_byte)
{
	struct mt_fold_profile *p = profile_of(
		"alloc\t5/5\t1\tt\tsize=32 ptr=0x10 fn=malloc every=1\tmain;small end=complete\n"
		"alloc\t5/5\t2\tt\tsize=33 ptr=0x20 fn=malloc every=1\tmain;small end=complete\n"
		"alloc\t5/5\t3\tt\tsize=4096 ptr=0x30 fn=calloc every=1\tmain;big end=complete\n"
		"free\t5/5\t4\tt\tptr=0x20 every=1\t end=none\n", 0);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	cr_assert_str_eq(out, "main;big 4096\nmain;small 65\n");
	free(out);
	out = collapsed_of(p, MT_FOLD_INUSE_BYTES);
	cr_assert_str_eq(out, "main;big 4096\nmain;small 32\n");
	free(out);
	out = collapsed_of(p, MT_FOLD_ALLOC_OBJECTS);
	cr_assert_str_eq(out, "main;big 1\nmain;small 2\n");
	free(out);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert(s->total.exact);
	cr_assert_eq(s->total.value, 4161);
	cr_assert_eq(s->total.lo, 4161);
	cr_assert_str_eq(s->mode, "trace");
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(profile, trace_every_n_scales_and_has_count_error)
{
	struct mt_fold_profile *p = profile_of(
		"alloc\t5/5\t1\tt\tsize=100 ptr=0x10 every=8\tf end=complete\n"
		"alloc\t5/5\t2\tt\tsize=100 ptr=0x20 every=8\tf end=complete\n", 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	const struct mt_fold_site *f = site_named(s, "f");
	cr_assert_eq(f->total.value, 1600);
	cr_assert(!f->total.exact);
	cr_assert_eq(f->total.n, 2);
	double lo, hi;	/* equal weights 800: 800 x Garwood(2) */
	mt_fold_garwood(2, 0.95, &lo, &hi);
	cr_assert(fabs(f->total.lo - 800 * lo) < 1e-6 && fabs(f->total.hi - 800 * hi) < 1e-6);
	mt_fold_snapshot_free(s);
	s = snapshot_of(p, MT_FOLD_ALLOC_OBJECTS, 0);
	cr_assert_eq(site_named(s, "f")->total.value, 16);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(profile, event_mode_periods)
{
	struct mt_fold_profile *p = profile_of(
		"sample\t7/7\t1\tcc\tevent=cpu-clock period=1000\tmain;work end=complete\n"
		"sample\t7/7\t2\tcc\tevent=cpu-clock period=1000\tmain;work end=complete\n"
		"sample\t7/7\t3\tcc\tevent=cpu-clock period=1000\tmain end=complete\n", 0);
	cr_assert_eq(mt_fold_profile_default_metric(p), MT_FOLD_PERIOD);
	char *out = collapsed_of(p, MT_FOLD_PERIOD);
	cr_assert_str_eq(out, "main 1000\nmain;work 2000\n");
	free(out);
	out = collapsed_of(p, MT_FOLD_SAMPLES);
	cr_assert_str_eq(out, "main 1\nmain;work 2\n");
	free(out);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_PERIOD, 0);
	const struct mt_fold_site *m = site_named(s, "main");
	cr_assert_eq(m->total.n, 3);
	cr_assert_eq(m->self.n, 1);
	cr_assert(fabs(m->total.rse - 1 / sqrt(3)) < 1e-12);
	cr_assert_str_eq(s->mode, "event");
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* Samples of two events: each is counted under its name, and a profile
 * asked for one folds that one alone. */
static const char two_events[] =
	"sample\t7/7\t1\tcc\tevent=cpu-clock period=1000\tmain;work end=complete\n"
	"sample\t7/7\t2\tcc\tevent=page-faults period=1\tmain;touch end=complete\n"
	"sample\t7/7\t3\tcc\tevent=cpu-clock period=1000\tmain end=complete\n";

Test(profile, events_are_counted_by_name)
{
	struct mt_fold_profile *p = profile_of(two_events, 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->nr_event_names, 2);
	cr_assert_str_eq(c->event_names[0].name, "cpu-clock");
	cr_assert_eq(c->event_names[0].samples, 2);
	cr_assert_str_eq(c->event_names[1].name, "page-faults");
	cr_assert_eq(c->event_names[1].samples, 1);
	cr_assert_eq(c->other_event_samples, 0);
	cr_assert_null(c->event);	/* both */
	mt_fold_profile_free(p);
}

Test(profile, one_event_of_two)
{
	struct mt_fold_profile *p = profile_of_event(two_events, "page-faults");
	char *out = collapsed_of(p, MT_FOLD_PERIOD);
	cr_assert_str_eq(out, "main;touch 1\n");
	free(out);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->kind[MT_FOLD_SAMPLE], 1);
	cr_assert_eq(c->events, 1);
	cr_assert_eq(c->other_event_samples, 2);
	cr_assert_eq(c->nr_event_names, 2);
	cr_assert_str_eq(c->event, "page-faults");
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_PERIOD, 0);
	char *table = render(mt_fold_render_table, s);
	cr_assert(strstr(table, ", event page-faults (2 samples of other events left out)\n"),
		  "%s", table);
	free(table);
	char *json = render(mt_fold_render_json, s);
	cr_assert(strstr(json, "\n \"event\": \"page-faults\",\n"), "%s", json);
	cr_assert(strstr(json, "\"other_event_samples\": 2}"), "%s", json);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A sample line without event= counts under the name "" (no null name
 * handed to the string functions: UBSan in the SANITIZE=1 run). */
Test(profile, sample_without_an_event_name)
{
	struct mt_fold_profile *p = profile_of(
		"sample\t7/7\t1\tcc\tperiod=5\tmain end=complete\n", 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->nr_event_names, 1);
	cr_assert_str_eq(c->event_names[0].name, "");
	cr_assert_eq(c->kind[MT_FOLD_SAMPLE], 1);
	mt_fold_profile_free(p);
}

/* Names are kept whole: two long uprobe names that differ past their 63rd
 * byte are two events. */
Test(profile, long_event_names_stay_apart)
{
	struct mt_fold_profile *p = profile_of(
		"sample\t7/7\t1\tcc\tevent=probe_libfoo:_ZN9namespace12SomeLongClassName21someMethodNameWithTailAEv"
		" period=1\tmain end=complete\n"
		"sample\t7/7\t2\tcc\tevent=probe_libfoo:_ZN9namespace12SomeLongClassName21someMethodNameWithTailBEv"
		" period=1\tmain end=complete\n", 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->nr_event_names, 2);
	cr_assert_null(c->event);
	mt_fold_profile_free(p);
}

/* More names than the table keeps: the one asked for is still folded alone,
 * and named.  The snapshot outlives the profile (it keeps no pointer into
 * it: ASan in the SANITIZE=1 run). */
Test(profile, event_past_the_names_kept)
{
	char text[2048];
	size_t k = 0;
	for (int i = 1; i <= MT_FOLD_MAX_EVENTS + 1; i++)
		k += (size_t)snprintf(text + k, sizeof(text) - k,
				      "sample\t7/7\t%d\tcc\tevent=ev%d period=1\tmain;f%d end=complete\n",
				      i, i, i);
	char want[16];
	snprintf(want, sizeof(want), "ev%d", MT_FOLD_MAX_EVENTS + 1);
	struct mt_fold_profile *p = profile_of_event(text, want);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->kind[MT_FOLD_SAMPLE], 1);
	cr_assert_eq(c->more_events, 1);
	cr_assert_str_eq(c->event, want);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_PERIOD, 0);
	mt_fold_profile_free(p);
	char line[96], key[64];
	snprintf(line, sizeof(line), ", event %s (%d samples of other events left out)\n", want,
		 MT_FOLD_MAX_EVENTS);
	char *table = render(mt_fold_render_table, s);
	cr_assert(strstr(table, line), "%s", table);
	free(table);
	char *json = render(mt_fold_render_json, s);
	snprintf(key, sizeof(key), "\"event\": \"%s\"", want);
	cr_assert(strstr(json, key), "%s", json);
	snprintf(key, sizeof(key), "\"other_event_samples\": %d}", MT_FOLD_MAX_EVENTS);
	cr_assert(strstr(json, key), "%s", json);
	free(json);
	mt_fold_snapshot_free(s);
}

Test(profile, liveness_rules)
{
	/* pid 1: 0xa freed; 0xb freed then reused and live; 0xc allocated twice
	 * without a free (implicit free of the first); a free of 0xd that was
	 * never allocated; pid 2 has its own 0xa, live.  Times out of order in
	 * the input: only time order counts. */
	struct mt_fold_profile *p = profile_of(
		"free\t1/1\t20\tt\tptr=0xa every=1\t end=none\n"
		"alloc\t1/1\t10\tt\tsize=1 ptr=0xa every=1\tA end=complete\n"
		"alloc\t1/1\t30\tt\tsize=2 ptr=0xb every=1\tB1 end=complete\n"
		"free\t1/1\t40\tt\tptr=0xb every=1\t end=none\n"
		"alloc\t1/1\t50\tt\tsize=4 ptr=0xb every=1\tB2 end=complete\n"
		"alloc\t1/1\t60\tt\tsize=8 ptr=0xc every=1\tC1 end=complete\n"
		"alloc\t1/1\t70\tt\tsize=16 ptr=0xc every=1\tC2 end=complete\n"
		"free\t1/1\t80\tt\tptr=0xd every=1\t end=none\n"
		"alloc\t2/2\t5\tt\tsize=32 ptr=0xa every=1\tA end=complete\n"
		"alloc\t2/2\t6\tt\tsize=64 ptr=0 every=1\tN end=complete\n", 0);
	char *out = collapsed_of(p, MT_FOLD_INUSE_BYTES);
	cr_assert_str_eq(out, "A 32\nB2 4\nC2 16\n");
	free(out);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->unmatched_frees, 1);
	cr_assert_eq(c->implicit_frees, 1);
	cr_assert_eq(c->no_ptr_allocs, 1);
	mt_fold_profile_free(p);
}

Test(profile, equal_times_keep_input_order)
{
	/* free and reuse in the same nanosecond: input order decides. */
	struct mt_fold_profile *p = profile_of(
		"alloc\t1/1\t10\tt\tsize=1 ptr=0xa every=1\tA end=complete\n"
		"free\t1/1\t10\tt\tptr=0xa every=1\t end=none\n"
		"alloc\t1/1\t10\tt\tsize=2 ptr=0xa every=1\tB end=complete\n", 0);
	char *out = collapsed_of(p, MT_FOLD_INUSE_BYTES);
	cr_assert_str_eq(out, "B 2\n");
	free(out);
	mt_fold_profile_free(p);
}

Test(profile, prefixes_and_escaping)
{
	struct mt_fold_profile *p = profile_of(
		"alloc\t3/4\t1\ta;b c\tsize=5 every=1\tmain;f end=complete\n"
		"alloc\t3/4\t2\ta;b c\tsize=5 every=1\t end=none\n", MT_FOLD_PREFIX_COMM |
		MT_FOLD_PREFIX_PID | MT_FOLD_PREFIX_TID);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	/* ';' in a name becomes ':' as FlameGraph's collapse scripts do. */
	cr_assert_str_eq(out, "a:b c;pid 3;tid 4;[no stack] 5\na:b c;pid 3;tid 4;main;f 5\n");
	free(out);
	/* Prefix frames are not sites. */
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_null(site_named(s, "pid 3"));
	cr_assert_not_null(site_named(s, "main"));
	cr_assert_not_null(site_named(s, MT_FOLD_NO_STACK));
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(profile, recursion_counts_once_in_total)
{
	struct mt_fold_profile *p = profile_of(
		"alloc\t1/1\t1\tt\tsize=10 every=1\tmain;r;r;r end=complete\n", 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(site_named(s, "r")->total.value, 10);
	cr_assert_eq(site_named(s, "r")->self.value, 10);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* count allocations with weights (e.g. "size=64 points=1 rate=R") by thread
 * tid ("pid/tid") named comm at frame, pointers from ptr0.
 * @return : the bytes written to text. */
static size_t alloc_lines(char *text, const char *tid, const char *comm, const char *frame,
			  int count, unsigned ptr0, const char *weights)
{
	size_t n = 0;
	for (int i = 0; i < count; i++)
		n += (size_t)sprintf(text + n, "alloc\t%s\t%d\t%s\t%s ptr=0x%x\t%s end=complete\n",
				     tid, i, comm, weights, ptr0 + i, frame);
	return n;
}

/* count sampled 64-byte allocations, one point each at the default rate. */
static size_t sampled_allocs(char *text, const char *tid, const char *comm, const char *frame,
			     int count, unsigned ptr0)
{
	return alloc_lines(text, tid, comm, frame, count, ptr0, "size=64 points=1 rate=" R);
}

Test(profile, totals_checked_against_estimates)
{
	/* A thread whose exact 40 MiB lies in the interval of 80 points x 512 KiB
	 * (Garwood(80) = [63.4, 99.6]) and one whose 1 MiB does not (50 points). */
	char text[65536];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 80, 0x1000);
	n += sampled_allocs(text + n, "1/2", "u", "g", 50, 0x9000);
	sprintf(text + n, "totals\t1/1\t99\tt\tscope=thread alloc_bytes=41943040 allocs=655360 "
		"frees=0 freed_bytes=0 peak_bytes=41943040\t end=none\n"
		"totals\t1/2\t99\tu\tscope=thread alloc_bytes=1048576 allocs=16384 frees=0 "
		"freed_bytes=0 peak_bytes=1048576\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->nthreads, 2);
	cr_assert(s->has_totals);
	cr_assert(s->threads[0].check[MT_FOLD_CHECK_BYTES].in_interval);
	cr_assert(!s->threads[1].check[MT_FOLD_CHECK_BYTES].in_interval);
	cr_assert_eq(s->all.totals.alloc_bytes, 41943040 + 1048576);
	cr_assert_eq(s->all.check[MT_FOLD_CHECK_BYTES].est.value, 130.0 * 524288);
	cr_assert_str_eq(s->threads[1].comm, "u");
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A thread that ran under the sampler but drew no sample point (a short
 * child process) is estimated at 0 with an interval, [0, Garwood(0) upper
 * = 3.69 points], which holds its exact 6 KiB: not an exact 0 marked OUT. */
/* g's exact totals lie in the interval of zero points at rate: an estimate
 * of 0 in [0, 3.69 x rate], not an exact 0. */
static void assert_zero_points(const struct mt_fold_group *g, double rate)
{
	const struct mt_fold_check *ck = &g->check[MT_FOLD_CHECK_BYTES];
	cr_assert_eq(ck->est.value, 0);
	cr_assert(!ck->est.exact, "an estimate from the sampler, not an exact 0");
	cr_assert_eq(ck->est.lo, 0);
	cr_assert_float_eq(ck->est.hi, 3.6889 * rate, 0.001 * rate, "hi %g", ck->est.hi);
	cr_assert(ck->in_interval);
	cr_assert(g->check[MT_FOLD_CHECK_OBJECTS].in_interval);
}

Test(profile, thread_without_samples_has_an_interval)
{
	char text[4096];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 20, 0x1000);
	sprintf(text + n, "totals\t1/1\t99\tt\tscope=thread alloc_bytes=10485760 allocs=163840 "
		"frees=0 freed_bytes=0 peak_bytes=10485760\t end=none\n"
		"totals\t2/2\t99\tsh\tscope=thread alloc_bytes=6071 allocs=80 frees=70 "
		"freed_bytes=5000 peak_bytes=1952\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->nthreads, 2);
	cr_assert_str_eq(s->threads[1].comm, "sh");
	assert_zero_points(&s->threads[1], 524288);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* No sample point in the whole input: the totals' rate= gives the weight a
 * point would have had, so the thread is in [0, 3.69 x rate] and the total
 * an estimate of 0, not an exact 0 that its exact totals would be OUT of. */
Test(profile, input_without_sample_points_takes_the_rate_from_totals)
{
	struct mt_fold_profile *p = profile_of(
		"totals\t2/2\t99\tsh\tscope=thread alloc_bytes=6071 allocs=80 frees=70 "
		"freed_bytes=5000 peak_bytes=1952 rate=524288\t end=none\n", 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_str_eq(s->mode, "sample");
	cr_assert(!s->total.exact);
	assert_zero_points(&s->threads[0], 524288);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* Merged with a capture at a smaller rate that has points: the thread
 * without any still weighs a point at the largest rate (1 GiB), not at the
 * 512 KiB the other capture's points weigh. */
Test(profile, thread_without_points_in_a_merge_takes_the_largest_rate)
{
	char text[4096];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 1, 0x1000);
	sprintf(text + n, "totals\t2/2\t99\tbig\tscope=thread alloc_bytes=5000000 allocs=10 "
		"frees=0 freed_bytes=0 peak_bytes=5000000 rate=1073741824\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	const struct mt_fold_group *g = &s->threads[1];
	cr_assert_str_eq(g->comm, "big");
	cr_assert(g->check[MT_FOLD_CHECK_BYTES].in_interval, "hi %g",
		  g->check[MT_FOLD_CHECK_BYTES].est.hi);
	cr_assert(g->check[MT_FOLD_CHECK_OBJECTS].in_interval);
	cr_assert_str_eq(s->mode, "sample");
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* --rate 1 records every byte: the estimates are exact and must equal the
 * sampler's totals.  A thread missing events (lost on the way) is OUT, not
 * "in" an interval stretching to infinity. */
Test(profile, rate_1_totals_are_checked_exactly)
{
	char text[8192];
	const char *every_byte = "size=100 points=100 rate=1";
	size_t n = alloc_lines(text, "1/1", "t", "f", 10, 0x1000, every_byte);
	n += alloc_lines(text + n, "1/2", "u", "g", 8, 0x9000, every_byte);
	sprintf(text + n, "totals\t1/1\t99\tt\tscope=thread alloc_bytes=1000 allocs=10 frees=0 "
		"freed_bytes=0 peak_bytes=1000\t end=none\n"
		"totals\t1/2\t99\tu\tscope=thread alloc_bytes=1000 allocs=10 frees=0 "
		"freed_bytes=0 peak_bytes=1000\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->nthreads, 2);
	const struct mt_fold_check *whole = &s->threads[0].check[MT_FOLD_CHECK_BYTES];
	const struct mt_fold_check *short_ = &s->threads[1].check[MT_FOLD_CHECK_BYTES];
	cr_assert(whole->est.exact);
	cr_assert_eq(whole->est.hi, 1000);
	cr_assert(whole->in_interval);
	cr_assert(short_->est.exact);
	cr_assert_eq(short_->est.value, 800);
	cr_assert(!short_->in_interval, "800 of 1000 bytes seen is not in");
	cr_assert(!s->threads[1].check[MT_FOLD_CHECK_OBJECTS].in_interval);
	cr_assert(!s->all.check[MT_FOLD_CHECK_BYTES].in_interval);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* With the sampler's totals for every event, no site's interval goes above
 * what the program made in all (object intervals reach ~3.7 x rate
 * otherwise); not below a site's own estimate; and not at all when some
 * events have no totals behind them. */
Test(profile, site_intervals_stop_at_the_exact_total)
{
	char text[65536];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 30, 0x1000);
	const char *totals = "totals\t1/1\t99\tt\tscope=process alloc_bytes=16777216 allocs=1000 "
			     "frees=0 freed_bytes=0 peak_bytes=0 peak_error=0\t end=none\n";
	sprintf(text + n, "%s", totals);
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_OBJECTS, 0);
	const struct mt_fold_site *f = site_named(s, "f");
	cr_assert(f);
	/* 30 sampled 64-byte objects: 30 x 8192.5 = 245775 objects, above the 1000 made */
	cr_assert_gt(f->total.value, 1000);
	cr_assert_eq(f->total.hi, f->total.value, "hi %g", f->total.hi);
	cr_assert_eq(s->total.hi, s->total.value);
	mt_fold_snapshot_free(s);
	s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	f = site_named(s, "f");
	cr_assert_float_eq(f->total.value, 30.0 * 524288, 1);	/* 15 MiB */
	cr_assert_eq(f->total.hi, 16777216, "cut at the 16 MiB made: %g", f->total.hi);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);

	/* a thread with events and no totals behind it: no cut */
	n = sampled_allocs(text, "1/1", "t", "f", 30, 0x1000);
	n += sampled_allocs(text + n, "2/2", "u", "g", 5, 0x9000);
	sprintf(text + n, "%s", totals);
	p = profile_of(text, 0);
	s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	f = site_named(s, "f");
	cr_assert_gt(f->total.hi, 16777216);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A thread that goes on after an exec reports once per image: its counts
 * add up, its peak is the larger one (the new image starts from zero);
 * all sums the processes' peaks. */
Test(profile, totals_across_images)
{
	const char *text =
		"totals\t1/1\t10\tsh\tscope=thread alloc_bytes=1000 allocs=10 frees=5 "
		"freed_bytes=500 peak_bytes=700\t end=none\n"
		"totals\t1/1\t10\tsh\tscope=process alloc_bytes=1000 allocs=10 frees=5 "
		"freed_bytes=500 peak_bytes=700 peak_error=64\t end=none\n"
		"totals\t1/1\t20\tpy\tscope=thread alloc_bytes=3000 allocs=30 frees=30 "
		"freed_bytes=3000 peak_bytes=400\t end=none\n"
		"totals\t1/1\t20\tpy\tscope=process alloc_bytes=3000 allocs=30 frees=30 "
		"freed_bytes=3000 peak_bytes=400 peak_error=128\t end=none\n"
		"totals\t2/2\t30\tcc\tscope=process alloc_bytes=50 allocs=1 frees=1 "
		"freed_bytes=50 peak_bytes=50 peak_error=0\t end=none\n";
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->nthreads, 1);
	cr_assert_eq(s->threads[0].totals.alloc_bytes, 4000);
	cr_assert_eq(s->threads[0].totals.allocs, 40);
	cr_assert_eq(s->threads[0].totals.peak_bytes, 700);
	cr_assert_eq(s->nprocs, 2);
	const struct mt_fold_group *one = s->procs[0].pid == 1 ? &s->procs[0] : &s->procs[1];
	cr_assert_eq(one->totals.alloc_bytes, 4000);
	cr_assert_eq(one->totals.peak_bytes, 700);
	cr_assert_eq(one->totals.peak_error, 128);
	cr_assert_eq(s->all.totals.alloc_bytes, 4050);
	cr_assert_eq(s->all.totals.peak_bytes, 750);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A process image that never sent its totals (a `lost` line
 * reason=no-totals from mt-unwind) is not lost events: its process row has
 * no exact figure, the all row's exact figure leaves it out and is marked
 * partial instead of checked, and the threads' own totals still count. */
Test(profile, image_without_totals_makes_the_exact_totals_partial)
{
	char text[65536];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 80, 0x1000);
	n += sampled_allocs(text + n, "2/2", "k", "g", 50, 0x9000);
	n += sampled_allocs(text + n, "2/3", "k", "g", 10, 0xa000);
	sprintf(text + n, "totals\t1/1\t99\tt\tscope=process alloc_bytes=41943040 allocs=655360 "
		"frees=0 freed_bytes=0 peak_bytes=41943040 peak_error=0\t end=none\n"
		"totals\t2/3\t99\tk\tscope=thread alloc_bytes=5242880 allocs=100 frees=0 "
		"freed_bytes=0 peak_bytes=5242880\t end=none\n"
		"lost\t2/2\t100\tk\tcount=1 reason=no-totals\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->silent_images, 1);
	cr_assert_eq(c->lost_events, 0, "no events were lost");
	cr_assert_eq(c->lost_records, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert_eq(s->nprocs, 2);
	const struct mt_fold_group *silent = s->procs[0].pid == 2 ? &s->procs[0] : &s->procs[1];
	const struct mt_fold_group *whole = s->procs[0].pid == 2 ? &s->procs[1] : &s->procs[0];
	cr_assert(silent->partial);
	cr_assert(!silent->check[MT_FOLD_CHECK_BYTES].has_exact);
	cr_assert_eq(silent->check[MT_FOLD_CHECK_BYTES].est.value, 60.0 * 524288);
	cr_assert(!whole->partial);
	cr_assert(whole->check[MT_FOLD_CHECK_BYTES].in_interval);
	cr_assert(s->all.partial);
	/* Process 1's totals and thread 2/3's own (its process sent none). */
	cr_assert_eq(s->all.totals.alloc_bytes, 41943040 + 5242880);
	cr_assert_eq(s->all.check[MT_FOLD_CHECK_BYTES].est.value, 140.0 * 524288);

	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	cr_assert(strstr(table, "warning: 1 process images sent no exact totals"), "%s", table);
	cr_assert(!strstr(table, "the capture lost"), "%s", table);
	cr_assert(strstr(table, " part "), "%s", table);
	cr_assert(strstr(json, "\"images_without_totals\": 1"), "%s", json);
	cr_assert(strstr(json, "\"exact_partial\": true"), "%s", json);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A process image that never ran the sampler (a `lost` line
 * reason=no-sampler from mt-unwind: a static program, LD_PRELOAD cleared)
 * is not lost events either, and changes no figure: the exact totals are
 * still checked (its allocations are in neither side), and the report and
 * the JSON say that such images are in no figure. */
Test(profile, image_without_the_sampler_is_reported_not_lost)
{
	char text[65536];
	size_t n = sampled_allocs(text, "1/1", "t", "f", 80, 0x1000);
	sprintf(text + n, "totals\t1/1\t99\tt\tscope=process alloc_bytes=41943040 allocs=655360 "
		"frees=0 freed_bytes=0 peak_bytes=41943040 peak_error=0\t end=none\n"
		"lost\t7/7\t100\tstatic\tcount=1 reason=no-sampler\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->unsampled_images, 1);
	cr_assert_eq(c->lost_events, 0, "no events were lost");
	cr_assert_eq(c->lost_records, 0);
	cr_assert_eq(c->silent_images, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert(!s->all.partial);
	cr_assert(s->all.check[MT_FOLD_CHECK_BYTES].in_interval);
	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	cr_assert(strstr(table, "warning: 1 process images never ran the sampler"), "%s", table);
	cr_assert(!strstr(table, "the capture lost"), "%s", table);
	cr_assert(strstr(json, "\"images_without_sampler\": 1"), "%s", json);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* Stacks cut by a small stack dump: the report says so, and what to do,
 * from 5% of the stacks walked on, and 3 stacks at least (3 in 60 here;
 * 3 in 61, and 2 in 20, stay quiet). */
static void dump_ends(unsigned cut, unsigned all, int warned)
{
	char text[65536];
	size_t n = 0;
	for (unsigned i = 0; i < all; i++)
		n += (size_t)sprintf(text + n, "alloc\t1/1\t%u\tt\tsize=32 ptr=0x%x points=1 rate=" R
				     "\tmain;a end=%s\n", i + 1, 16 * (i + 1),
				     i < cut ? "end-of-dump" : "complete");
	sprintf(text + n, "free\t1/1\t999\tt\tptr=0x10\t end=none\n");
	struct mt_fold_profile *p = profile_of(text, 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->end_of_dump, cut);
	cr_assert_eq(c->stacks, all, "the free has no stack walked");
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	char want[128];
	snprintf(want, sizeof(want), "warning: %u of %u stacks (%.1f%%) end where their stack dump "
		 "ends", cut, all, 100.0 * cut / all);
	cr_assert_eq(strstr(table, want) != NULL, warned, "%s", table);
	cr_assert_eq(strstr(table, "--stack-size 65528") != NULL, warned, "%s", table);
	snprintf(want, sizeof(want), "\"end_of_dump_stacks\": %u", cut);
	cr_assert(strstr(json, want), "%s", json);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(profile, small_stack_dumps_are_reported) { dump_ends(3, 60, 1); }
/* More than 1% (as mt-unwind says), 3 at least. */
Test(profile, just_over_one_percent_cut_is_reported) { dump_ends(3, 299, 1); }
Test(profile, one_percent_cut_stays_quiet) { dump_ends(3, 300, 0); }
Test(profile, one_or_two_cut_stacks_stay_quiet) { dump_ends(2, 20, 0); }
Test(profile, no_cut_stack_no_warning) { dump_ends(0, 5, 0); }

/* Merging: folding files one after another equals folding their
 * concatenation, for any split of a seeded random event stream. */
Test(profile, merge_equals_concatenation)
{
	struct sim_rng rng;
	sim_seed(&rng, 42);
	char *parts[3];
	size_t lens[3];
	char *all = NULL;
	size_t alllen = 0;
	FILE *af = open_memstream(&all, &alllen);
	static const char *const frames[] = { "main;a", "main;b;c", "main;b", "x;y;z" };
	for (int part = 0; part < 3; part++) {
		FILE *f = open_memstream(&parts[part], &lens[part]);
		fprintf(f, "# mt-unwind 1\n");
		fprintf(af, "# mt-unwind 1\n");
		for (int i = 0; i < 2000; i++) {
			char line[256];
			uint64_t r = sim_next(&rng);
			unsigned ptr = 0x100 + (unsigned)(r % 300);
			if (r % 5 == 0)
				snprintf(line, sizeof(line), "free\t%u/%u\t%llu\tt\tptr=0x%x rate=4096\t end=none\n",
					 1 + (unsigned)(r >> 40) % 2, 7, (unsigned long long)(r >> 20) % 100000, ptr);
			else
				snprintf(line, sizeof(line), "alloc\t%u/%u\t%llu\tt\tsize=%u ptr=0x%x points=%u "
					 "rate=4096\t%s end=complete\n", 1 + (unsigned)(r >> 40) % 2, 7,
					 (unsigned long long)(r >> 20) % 100000, (unsigned)(r >> 8) % 10000,
					 ptr, 1 + (unsigned)(r >> 50) % 3, frames[(r >> 60) % 4]);
			fputs(line, f);
			fputs(line, af);
		}
		fclose(f);
	}
	fclose(af);
	struct mt_fold_profile *merged = mt_fold_profile_new(0);
	for (int part = 0; part < 3; part++) {
		FILE *f = fmemopen(parts[part], lens[part], "r");
		cr_assert_eq(mt_fold_profile_read(merged, f, "part", NULL, NULL), 0);
		fclose(f);
	}
	mt_fold_profile_finish(merged);
	struct mt_fold_profile *cat = profile_of(all, 0);
	for (int m = 0; m < MT_FOLD_NMETRICS; m++) {
		char *a = collapsed_of(merged, (enum mt_fold_metric)m);
		char *b = collapsed_of(cat, (enum mt_fold_metric)m);
		cr_assert_str_eq(a, b, "metric %s", mt_fold_metric_name((enum mt_fold_metric)m));
		/* no sample lines: no period; no ticks, no seq=: no peak, temp */
		int none = m == MT_FOLD_PERIOD || mt_fold_metric_is_peak((enum mt_fold_metric)m) ||
			   mt_fold_metric_is_temp((enum mt_fold_metric)m);
		cr_assert(none ? strlen(a) == 0 : strlen(a) > 0, "metric %s",
			  mt_fold_metric_name((enum mt_fold_metric)m));
		free(a);
		free(b);
	}
	mt_fold_profile_free(merged);
	mt_fold_profile_free(cat);
	for (int part = 0; part < 3; part++)
		free(parts[part]);
	free(all);
}

struct got {
	uint64_t lines[8];
	int errs[8];
	int n;
};

static void cb(void *ctx, const char *file, uint64_t lineno, int err, const char *key)
{
	struct got *g = ctx;
	(void)file;
	(void)key;
	if (g->n < 8) {
		g->lines[g->n] = lineno;
		g->errs[g->n] = err;
	}
	g->n++;
}

Test(profile, bad_lines_are_counted_with_line_numbers)
{
	static const char text[] =
		"# mt-unwind 1\n"
		"alloc\t1/1\t1\tt\tsize=1 every=1\tf end=complete\n"
		"garbage\n"
		"alloc\t1/1\t1\tt\tsize=x every=1\tf end=complete\n"
		"\n"
		"alloc\t1/1\t1\tt\tsize=2 every=1\tf end=complete\n";
	struct got got = { 0 };
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	cr_assert_eq(mt_fold_profile_read(p, f, "t", cb, &got), 0);
	fclose(f);
	cr_assert_eq(got.n, 3);
	cr_assert_eq(got.lines[0], 3);
	cr_assert_eq(got.errs[0], MT_FOLD_EFIELDS);
	cr_assert_eq(got.lines[1], 4);
	cr_assert_eq(got.errs[1], MT_FOLD_EVALUE);
	cr_assert_eq(got.lines[2], 5);
	cr_assert_eq(mt_fold_profile_counts(p)->bad_lines, 3);
	mt_fold_profile_finish(p);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	cr_assert_str_eq(out, "f 3\n");	/* the good lines only */
	free(out);
	mt_fold_profile_free(p);
}

Test(profile, newer_version_stops_folding)
{
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	static const char text[] = "# mt-unwind 2\nalloc\t1/1\t1\tt\tsize=1 every=1\tf end=complete\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	cr_assert_eq(mt_fold_profile_read(p, f, "t", NULL, NULL), 0);
	fclose(f);
	cr_assert_eq(mt_fold_profile_counts(p)->bad_lines, 2);
	cr_assert_eq(mt_fold_profile_counts(p)->events, 0);
	mt_fold_profile_free(p);
}

/* A line with a NUL byte read from a stream: a bad line, counted and
 * passed on with its number; the lines around it are folded. */
static void count_bad(void *ctx, const char *file, uint64_t lineno, int err, const char *key)
{
	(void)file;
	(void)key;
	uint64_t *got = ctx;
	got[0]++;
	got[1] = lineno;
	got[2] = (uint64_t)-err;
}

Test(profile, nul_byte_line_is_bad_not_folded)
{
	static const char text[] = "# mt-unwind 1\n"
		"alloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\n"
		"alloc\t1/1\t2\tp\tsize=7 every=1\tmain;g\0h end=complete\n"
		"alloc\t1/1\t3\tp\tsize=5 every=1\tmain;f end=complete\n";
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	uint64_t got[3] = { 0 };
	cr_assert_eq(mt_fold_profile_read(p, f, "t", count_bad, got), 0);
	fclose(f);
	cr_assert_eq(got[0], 1);
	cr_assert_eq(got[1], 3);
	cr_assert_eq(got[2], (uint64_t)-MT_FOLD_ENUL);
	cr_assert_eq(mt_fold_profile_counts(p)->bad_lines, 1);
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	cr_assert_str_eq(out, "main;f 15\n");
	free(out);
	mt_fold_profile_free(p);
}

/* A --no-wait capture whose ring overflowed: mt-unwind writes the LOST
 * records (reason=kernel, no thread) and, per thread, the marker calls the
 * stream lacks (reason=unseen), the same events seen from the sampler's
 * end.  Each is counted once: a stream's loss is the larger of the two
 * (the figures of a real capture: 58116 LOST, 58107 unseen). */
Test(profile, unseen_marker_calls_are_not_counted_twice)
{
	struct mt_fold_profile *p = profile_of("# mt-unwind 1\n"
		"lost\t0/0\t5\t\tcount=18933 reason=kernel\t end=none\n"
		"lost\t0/0\t6\t\tcount=39174 reason=kernel\t end=none\n"
		"lost\t9/10\t7\tw\tcount=9 reason=kernel\t end=none\n"
		"lost\t9/10\t8\tw\tcount=14527 reason=unseen marker=alloc\t end=none\n"
		"lost\t9/10\t8\tw\tcount=14517 reason=unseen marker=free\t end=none\n"
		"lost\t9/11\t9\tw\tcount=14543 reason=unseen marker=alloc\t end=none\n"
		"lost\t9/11\t9\tw\tcount=14520 reason=unseen marker=free\t end=none\n", 0);
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	cr_assert_eq(c->lost_events, 58116, "the LOST records' count, not the sum of both");
	cr_assert_eq(c->lost_records, 3);
	cr_assert_eq(c->unseen_events, 58107);
	cr_assert_eq(c->kind[MT_FOLD_LOST], 7);
	mt_fold_profile_free(p);

	/* Unseen calls beyond the LOST records' count were lost too (silently,
	 * after them): the stream lost at least that many.  dropped and
	 * undecodable add up as before. */
	p = profile_of("# mt-unwind 1\n"
		"lost\t0/0\t5\t\tcount=100 reason=kernel\t end=none\n"
		"lost\t1/1\t6\tw\tcount=7 reason=dropped marker=free\t end=none\n"
		"lost\t1/1\t8\tw\tcount=90 reason=unseen marker=alloc\t end=none\n"
		"lost\t1/2\t8\tw\tcount=30 reason=unseen marker=alloc\t end=none\n"
		"lost\t0/0\t9\t\tcount=2 reason=undecodable\t end=none\n", 0);
	c = mt_fold_profile_counts(p);
	cr_assert_eq(c->lost_events, 7 + 120 + 2);
	cr_assert_eq(c->lost_records, 3);
	mt_fold_profile_free(p);
}

/* Inputs are separate streams: one's unseen calls do not cover another's
 * LOST records. */
Test(profile, unseen_calls_are_matched_within_their_own_input)
{
	static const char a[] = "# mt-unwind 1\nlost\t0/0\t5\t\tcount=100 reason=kernel\t end=none\n"
				"lost\t1/1\t6\tw\tcount=100 reason=unseen marker=alloc\t end=none\n";
	static const char b[] = "# mt-unwind 1\nlost\t0/0\t5\t\tcount=50 reason=kernel\t end=none\n"
				"lost\t2/2\t6\tw\tcount=40 reason=unseen marker=alloc\t end=none\n";
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	FILE *f = fmemopen((void *)a, sizeof(a) - 1, "r");
	cr_assert_eq(mt_fold_profile_read(p, f, "a", NULL, NULL), 0);
	fclose(f);
	f = fmemopen((void *)b, sizeof(b) - 1, "r");
	cr_assert_eq(mt_fold_profile_read(p, f, "b", NULL, NULL), 0);
	fclose(f);
	cr_assert_eq(mt_fold_profile_counts(p)->lost_events, 150);
	mt_fold_profile_free(p);
}

/* Sums past 2^64 are carried in 128 bits: three allocations of 2^63 - 1
 * bytes make 3 (2^63 - 1), exact, in the stack, the site, the total and
 * the sampler's totals; never the sum modulo 2^64. */
Test(profile, exact_sums_do_not_wrap_at_2_64)
{
	static const char text[] = "# mt-unwind 1\n"
		"alloc\t1/1\t1\tp\tsize=9223372036854775807 ptr=0x10 every=1\tmain;f;malloc end=complete\n"
		"alloc\t1/1\t2\tp\tsize=9223372036854775807 ptr=0x20 every=1\tmain;f;malloc end=complete\n"
		"alloc\t1/1\t3\tp\tsize=9223372036854775807 ptr=0x30 every=1\tmain;f;malloc end=complete\n"
		"totals\t1/1\t9\tp\tscope=thread alloc_bytes=18446744073709551615 allocs=3 frees=0 "
		"freed_bytes=0 peak_bytes=18446744073709551615\t end=none\n"
		"totals\t1/1\t9\tp\tscope=thread alloc_bytes=18446744073709551615 allocs=3 frees=0 "
		"freed_bytes=0 peak_bytes=18446744073709551615\t end=none\n";
	const mt_fold_u128 want = (mt_fold_u128)3 * 9223372036854775807u;
	char num[40];
	struct mt_fold_profile *p = profile_of(text, 0);
	const struct mt_fold_est *est;
	mt_fold_profile_stack(p, 0, NULL, &est);
	cr_assert(est[MT_FOLD_ALLOC_BYTES].exact == want);
	cr_assert_str_eq(mt_fold_u128_str(num, est[MT_FOLD_ALLOC_BYTES].exact),
			 "27670116110564327421");
	cr_assert(est[MT_FOLD_INUSE_BYTES].exact == want);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	cr_assert(s->total.exact);
	cr_assert_eq(s->total.value, 27670116110564327421.0);
	cr_assert_eq(site_named(s, "malloc")->total.value, 27670116110564327421.0);
	cr_assert(s->all.totals.alloc_bytes == (mt_fold_u128)2 * UINT64_MAX);
	cr_assert_str_eq(mt_fold_i128_str(num, s->all.check[MT_FOLD_CHECK_BYTES].exact),
			 "36893488147419103230");
	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	cr_assert(strstr(table, "\ntotal alloc_bytes: 24.0 EiB (exact)\n"), "%s", table);
	cr_assert(strstr(json, "\"exact\": {\"alloc_bytes\": 36893488147419103230, \"allocs\": 6, "
			 "\"frees\": 0, \"freed_bytes\": 0, \"peak_bytes\": 18446744073709551615,"), "%s",
		  json);
	cr_assert(strstr(json, "\"exact_value\": 36893488147419103230,"), "%s", json);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	cr_assert_str_eq(mt_fold_i128_str(num, -(mt_fold_i128)UINT64_MAX * 4), "-73786976294838206460");
	cr_assert_str_eq(mt_fold_u128_str(num, ~(mt_fold_u128)0),
			 "340282366920938463463374607431768211455");
}

/* getline failing for want of memory (a line larger than memory allows) is
 * not the end of the input: MT_FOLD_ENOMEM, and the line it reached. */
Test(profile, a_line_too_long_for_memory_is_enomem_not_eof)
{
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("RLIMIT_AS: AddressSanitizer reserves terabytes of shadow");
#else
	FILE *statm = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	cr_assert(statm && fscanf(statm, "%lu", &pages) == 1);
	fclose(statm);
	/* what the test runs in now and 64 MiB more: /dev/zero is one line */
	struct rlimit lim = { .rlim_cur = pages * (unsigned long)sysconf(_SC_PAGESIZE) + (64 << 20) };
	lim.rlim_max = lim.rlim_cur;
	FILE *f = fopen("/dev/zero", "r");
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	cr_assert(f && p);
	cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
	cr_assert_eq(mt_fold_profile_read(p, f, "zero", NULL, NULL), MT_FOLD_ENOMEM);
	cr_assert_eq(mt_fold_profile_read_line(p), 1);
	cr_assert_eq(mt_fold_profile_counts(p)->lines, 0);
	fclose(f);
	mt_fold_profile_free(p);
#endif
}
