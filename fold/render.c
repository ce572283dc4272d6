/* Text and JSON renderings of profiles and snapshots (diffs: fold/diff.c). */
#include "fold/render.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fold/gamma.h"
#include "fold/line.h"
#include "fold/memjson.h"
#include "fold/memtext.h"
#include "fold/sites.h"
#include "fold/sitestext.h"
#include "fold/table.h"
#include "fold/width.h"

static int finish_io(FILE *f)
{
	return ferror(f) ? MT_FOLD_EIO : 0;
}

/* ---- collapsed --------------------------------------------------------- */

static const struct mt_fold_profile *sort_profile;

static int key_cmp(const void *a, const void *b)
{
	const char *x = mt_fold_profile_stack(sort_profile, *(const uint32_t *)a, NULL, NULL);
	const char *y = mt_fold_profile_stack(sort_profile, *(const uint32_t *)b, NULL, NULL);
	return strcmp(x, y);
}

int mt_fold_render_collapsed(FILE *f, const struct mt_fold_profile *p,
			     enum mt_fold_metric metric)
{
	return mt_fold_render_collapsed_checked(f, p, metric, NULL, NULL);
}

int mt_fold_render_collapsed_checked(FILE *f, const struct mt_fold_profile *p,
				     enum mt_fold_metric metric, mt_fold_too_big_fn too_big,
				     void *ctx)
{
	int too_big_seen = 0;
	uint32_t n = mt_fold_profile_stack_count(p);
	uint32_t *ids = malloc((n + 1) * sizeof(*ids));
	if (!ids)
		return MT_FOLD_ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ids[i] = i;
	/* qsort has no context argument; the profile is read-only here. */
	sort_profile = p;
	qsort(ids, n, sizeof(*ids), key_cmp);
	for (uint32_t i = 0; i < n; i++) {
		const struct mt_fold_est *est;
		size_t len;
		const char *key = mt_fold_profile_stack(p, ids[i], &len, &est);
		const struct mt_fold_est *e = &est[metric];
		char num[48];
		uint64_t count;
		if (!e->sampled) {	/* an exact sum: its own digits */
			if (e->exact > MT_FOLD_COLLAPSED_MAX) {
				too_big_seen = 1;
				if (too_big)
					too_big(ctx, key, len, mt_fold_u128_str(num, e->exact));
				continue;
			}
			count = (uint64_t)e->exact;
		} else {
			/* 2^64 is the first double above UINT64_MAX */
			double v = round((double)e->exact + e->y);
			if (!(v < 18446744073709551616.0)) {
				too_big_seen = 1;
				snprintf(num, sizeof(num), "%.0f", v);
				if (too_big)
					too_big(ctx, key, len, num);
				continue;
			}
			count = v > 0 ? (uint64_t)v : 0;
		}
		if (count == 0)
			continue;
		fwrite(key, 1, len, f);
		fprintf(f, " %llu\n", (unsigned long long)count);
	}
	free(ids);
	int r = finish_io(f);
	return r ? r : too_big_seen ? MT_FOLD_ERANGE : 0;
}

/* ---- numbers ------------------------------------------------------------ */

char *mt_fold_format_amount(char *buf, double v, int bytes)
{
	static const char *const bunits[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	static const char *const units[] = { "", " k", " M", " G", " T", " P", " E" };
	if (isnan(v) || isinf(v)) {
		snprintf(buf, 32, "%s", isnan(v) ? "?" : v > 0 ? "inf" : "-inf");
		return buf;
	}
	double base = bytes ? 1024 : 1000, x = fabs(v);
	int u = 0;
	while (x >= base && u < 6) {
		x /= base;
		u++;
	}
	/* Rounding may carry into the next unit: 1023.9 KiB is 1.00 MiB. */
	if (u < 6 && x >= base - 0.5 && u > 0) {
		x /= base;
		u++;
	}
	const char *unit = bytes ? bunits[u] : units[u];
	const char *sep = bytes ? " " : "";
	const char *sign = v < 0 ? "-" : "";
	if (u == 0 && x == floor(x))
		snprintf(buf, 32, "%s%.0f%s%s", sign, x, sep, unit);
	else if (x < 9.995)
		snprintf(buf, 32, "%s%.2f%s%s", sign, x, sep, unit);
	else if (x < 99.95)
		snprintf(buf, 32, "%s%.1f%s%s", sign, x, sep, unit);
	else
		snprintf(buf, 32, "%s%.0f%s%s", sign, x, sep, unit);
	return buf;
}

static int metric_is_bytes(enum mt_fold_metric m)
{
	return m == MT_FOLD_ALLOC_BYTES || m == MT_FOLD_INUSE_BYTES || m == MT_FOLD_PEAK_BYTES ||
	       m == MT_FOLD_TEMP_BYTES;
}

static char *format_rse(char *buf, const struct mt_fold_value *v)
{
	if (v->exact)
		snprintf(buf, 32, "exact");
	else if (isinf(v->rse) || isnan(v->rse))
		snprintf(buf, 32, "-");
	else
		snprintf(buf, 32, "%.1f%%", 100 * v->rse);
	return buf;
}

/* "[lo, hi]"; "[lo, hi]^" when the top was cut at the exact total. */
static char *format_interval(char *buf, const struct mt_fold_value *v, int bytes)
{
	char a[32], b[32];
	if (v->exact)
		snprintf(buf, 80, "-");
	else
		snprintf(buf, 80, "[%s, %s]%s", mt_fold_format_amount(a, v->lo, bytes),
			 mt_fold_format_amount(b, v->hi, bytes), v->cut_top ? "^" : "");
	return buf;
}

/* ---- table -------------------------------------------------------------- */

/* The rse column of a site row: an exact sum over stacks some of which were
 * cut short is not exact (their outer frames' totals leave them out). */
static char *row_rse(char *buf, const struct mt_fold_value *v, const char *misses)
{
	if (v->exact && misses) {	/* "cut", "lost", "part" */
		snprintf(buf, 32, "%s", misses[0] == 's' ? "cut" : misses[0] == 'e' ? "lost"
								      : "part");
		return buf;
	}
	return format_rse(buf, v);
}

/* A line of prose built in parts, then wrapped (mt_fold_say). */
struct line {
	char b[2048];
	size_t n;
};

static void part(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void part(struct line *l, const char *fmt, ...)
{
	va_list ap;
	if (l->n >= sizeof(l->b) - 1)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(l->b + l->n, sizeof(l->b) - l->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		l->n = l->n + (size_t)k < sizeof(l->b) ? l->n + (size_t)k : sizeof(l->b) - 1;
}

/* The input's mode and counts; l holds the report's first line so far. */
static void print_input(FILE *f, const struct mt_fold_snapshot *s, struct line *l, size_t width)
{
	const struct mt_fold_counts *c = &s->counts;
	char a[32], b[32];
	part(l, "mode %s", s->mode);
	if (c->rate_max == 1)
		part(l, ", rate 1 B (every byte: exact)");
	else if (c->rate_max > 1) {
		if (c->rate_min == c->rate_max)
			part(l, ", rate %s", mt_fold_format_amount(a, (double)c->rate_max, 1));
		else
			part(l, ", rates %s to %s", mt_fold_format_amount(a, (double)c->rate_min, 1),
			     mt_fold_format_amount(b, (double)c->rate_max, 1));
	}
	if (c->every_max) {
		if (c->every_min == c->every_max)
			part(l, ", every %llu", (unsigned long long)c->every_max);
		else
			part(l, ", every %llu to %llu", (unsigned long long)c->every_min,
			     (unsigned long long)c->every_max);
	}
	if (c->event)
		part(l, ", event %s", mt_fold_event_label(c->event));
	if (c->other_event_samples)
		part(l, " (%llu samples of other events left out)",
		     (unsigned long long)c->other_event_samples);
	mt_fold_say(f, width, "%s", l->b);
	char ticks[48] = "";
	if (c->kind[MT_FOLD_TICK])	/* older inputs have none: their line stays */
		snprintf(ticks, sizeof(ticks), ", %llu tick", (unsigned long long)c->kind[MT_FOLD_TICK]);
	mt_fold_say(f, width, "input: %llu events (%llu alloc, %llu free, %llu totals, %llu sample, "
	    "%llu lost%s), %llu bad lines",
	    (unsigned long long)c->events, (unsigned long long)c->kind[MT_FOLD_ALLOC],
	    (unsigned long long)c->kind[MT_FOLD_FREE], (unsigned long long)c->kind[MT_FOLD_TOTALS],
	    (unsigned long long)c->kind[MT_FOLD_SAMPLE], (unsigned long long)c->kind[MT_FOLD_LOST],
	    ticks, (unsigned long long)c->bad_lines);
	if (c->every_max > 1)
		mt_fold_say(f, width, "note: every=N records each Nth call, not a random 1 in N: where the "
		    "program's calls repeat in a cycle (a loop allocating A then B, every 2: "
		    "only B is seen) sites are wrong by more than their intervals show; sample "
		    "mode draws its points at random");
	char num[40];
	if (c->lost_events || c->lost_records)
		mt_fold_say(f, width, "warning: the capture lost %s events (%llu lost records): "
		    "estimates and exact totals may disagree",
		    mt_fold_u128_str(num, c->lost_events), (unsigned long long)c->lost_records);
	if (c->silent_images)
		mt_fold_say(f, width, "warning: %s process images sent no exact totals (killed by a signal, "
		    "ended by a bare exit system call, still running, or unable to reach the capture: another pid "
		    "namespace, /proc hidden): the exact totals of their processes "
		    "and of all leave them out (marked part)",
		    mt_fold_u128_str(num, c->silent_images));
	if (c->unsampled_images)
		mt_fold_say(f, width, "warning: %s process images never ran the sampler (static programs, or "
		    "LD_PRELOAD cleared): their allocations are in no estimate and no exact "
		    "total", mt_fold_u128_str(num, c->unsampled_images));
	if (c->truncated || c->no_stack)
		mt_fold_say(f, width, "stacks: %llu truncated, %llu without frames",
		    (unsigned long long)c->truncated, (unsigned long long)c->no_stack);
	if (mt_fold_dumps_too_small(c))
		mt_fold_say(f, width, "warning: %llu of %llu stacks (%.1f%%) end where their stack dump ends "
		    "(end=end-of-dump): their outer callers are missing, and outer frames' totals "
		    "leave them out; capture with a larger dump (mt-capture --stack-size 65528, "
		    "perf record --call-graph dwarf,65528)", (unsigned long long)c->end_of_dump,
		    (unsigned long long)c->stacks, 100.0 * (double)c->end_of_dump / (double)c->stacks);
	if (c->kind[MT_FOLD_FREE] || c->no_ptr_allocs)
		mt_fold_say(f, width, "frees: %llu unmatched, %llu implicit (pointer reused), "
		    "%llu allocations without a pointer left out of inuse",
		    (unsigned long long)c->unmatched_frees, (unsigned long long)c->implicit_frees,
		    (unsigned long long)c->no_ptr_allocs);
}

static const char *const check_names[MT_FOLD_NCHECKS] = {
	"alloc req B", "allocs", "live req B", "live objects",
};

/* The checks the table shows, counted as they are printed for the line
 * under it: OUT among sampled estimates is expected once in 1/(1 - conf)
 * by chance, among exact ones never. */
struct tally {
	unsigned sampled, sampled_out, exact, exact_out;
};

static void tally_check(struct tally *t, const struct mt_fold_check *ck, int partial)
{
	if (!ck->has_exact || partial)
		return;
	if (ck->est.exact) {
		t->exact++;
		t->exact_out += !ck->in_interval;
	} else {
		t->sampled++;
		t->sampled_out += !ck->in_interval;
	}
}

/* The totals table's columns: label and comm, then per check (bytes,
 * objects) its exact figure, estimate, interval and verdict, then frees
 * and the peak with its error; a group of columns each, for narrow
 * widths (fold/table.h). */
enum { TC_LABEL, TC_COMM, TC_CHECK, TC_FREES = TC_CHECK + 8, TC_PEAK, TC_PEAK_ERR, TC_COLS };

/* Check ck's cells from column col. */
static void put_check(struct mt_fold_table *t, int col, const struct mt_fold_check *ck, int bytes,
		      int partial, struct tally *ty)
{
	char a[40], iv[80];
	tally_check(ty, ck, partial);
	mt_fold_table_put(t, col, ck->has_exact ? mt_fold_i128_str(a, ck->exact) : "-");
	mt_fold_table_put(t, col + 1, mt_fold_format_amount(a, ck->est.value, bytes));
	mt_fold_table_put(t, col + 2, format_interval(iv, &ck->est, bytes));
	mt_fold_table_put(t, col + 3, !ck->has_exact ? "" : partial ? "part" : !ck->in_interval
				      ? "OUT" : ck->forked ? "fork" : "in");
}

static void put_group(struct mt_fold_table *t, const struct mt_fold_group *g, const char *label,
		      const char *comm, struct tally *ty)
{
	char a[40];
	if (mt_fold_table_row(t))
		return;
	mt_fold_table_put(t, TC_LABEL, label);
	mt_fold_table_putf(t, TC_COMM, "%.12s", comm);
	for (int i = 0; i < 2; i++)
		put_check(t, TC_CHECK + 4 * i, &g->check[i], i == MT_FOLD_CHECK_BYTES, g->partial, ty);
	mt_fold_table_put(t, TC_FREES, g->totals.lines ? mt_fold_u128_str(a, g->totals.frees) : "-");
	mt_fold_table_put(t, TC_PEAK, g->totals.lines ? mt_fold_u128_str(a, g->totals.peak_bytes)
						      : "-");
	if (g->totals.peak_error)
		mt_fold_table_putf(t, TC_PEAK_ERR, "(+-%s)", mt_fold_u128_str(a, g->totals.peak_error));
}

/* A header row of the checks from first (0: allocated, 2: live at the end). */
static void put_head(struct mt_fold_table *t, int first, const char *label, const char *comm)
{
	if (mt_fold_table_row(t))
		return;
	mt_fold_table_put(t, TC_LABEL, label);
	mt_fold_table_put(t, TC_COMM, comm);
	for (int i = 0; i < 2; i++) {
		mt_fold_table_put(t, TC_CHECK + 4 * i, check_names[first + i]);
		mt_fold_table_put(t, TC_CHECK + 4 * i + 1, "estimate");
		mt_fold_table_put(t, TC_CHECK + 4 * i + 2, "interval");
	}
}

static void print_totals(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	char label[40];
	int conf = (int)lround(100 * s->opt.conf);

	if (!s->has_totals) {
		mt_fold_say(f, width, "exact totals: none in the input (only sample-mode captures carry "
		    "the sampler's totals)");
		return;
	}
	mt_fold_say(f, width, "exact totals from the sampler beside the estimates (%d%% interval from the "
	    "samples alone; "
	    "in: the exact value lies in it; part: the exact value leaves out images "
	    "that sent none%s)", conf, s->all.totals.forked_lines ?
	    "; fork: forked processes free blocks of their parent's, which their own "
	    "live objects do not count: the exact value is only a lower bound, and "
	    "lies below the interval's top" : "");
	struct mt_fold_table t = { .cols = TC_COLS, .align = "llrrLlrrLlrrl",
				   .group = "0011112222333" };
	struct tally ty = { 0 };
	put_head(&t, 0, "pid/tid", "comm");
	mt_fold_table_put(&t, TC_FREES, "frees");
	mt_fold_table_put(&t, TC_PEAK, "peak block B");
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct mt_fold_group *g = &s->threads[i];
		if (!g->totals.lines)
			continue;
		snprintf(label, sizeof(label), "%u/%u", g->pid, g->tid);
		put_group(&t, g, label, g->comm, &ty);
	}
	for (uint32_t i = 0; i < s->nprocs; i++) {
		snprintf(label, sizeof(label), "process %u", s->procs[i].pid);
		put_group(&t, &s->procs[i], label, "", &ty);
	}
	put_group(&t, &s->all, "all", "", &ty);
	/* Live at the end: what inuse estimates.  Only the object count has an
	 * exact counterpart (allocs - frees); see snapshot.c for bytes. */
	put_head(&t, 2, "", "");
	if (!mt_fold_table_row(&t)) {
		mt_fold_table_put(&t, TC_LABEL, "all (at end)");
		for (int i = 2; i < 4; i++)
			put_check(&t, TC_CHECK + 4 * (i - 2), &s->all.check[i],
				  i == MT_FOLD_CHECK_INUSE_BYTES, s->all.partial, &ty);
	}
	mt_fold_table_print(f, &t, width);
	if (ty.sampled)
		mt_fold_say(f, width, "checks: %u of %u sampled estimates OUT; about %.1f expected by chance at "
		    "the %d%% level (rows of one process overlap; many more than that: lost "
		    "events, or a fault)", ty.sampled_out, ty.sampled,
		    ty.sampled * (1 - s->opt.conf), conf);
	if (ty.exact_out)
		mt_fold_say(f, width, "checks: %u of %u exact figures differ from the sampler's: never by "
		    "chance (lost events, allocations of a signal handler during a sampled "
		    "call: docs/capture.md, or a fault)", ty.exact_out, ty.exact);
}

/* The site table's columns: total and self, each its estimate, rse,
 * interval and n; then the site. */
enum { SC_TOTAL, SC_SELF = 4, SC_SITE = 8, SC_COLS };

/* few: 1 fewer samples than --few, 0 not, -1 not marked (self) */
static void put_site_cells(struct mt_fold_table *t, int col, const struct mt_fold_value *v,
			   int bytes, const char *cut, unsigned long long n, int few)
{
	char a[32], iv[80];
	mt_fold_table_put(t, col, mt_fold_format_amount(a, v->value, bytes));
	mt_fold_table_put(t, col + 1, row_rse(a, v, cut));
	mt_fold_table_put(t, col + 2, format_interval(iv, v, bytes));
	/* total n: '?' or a space after it, which keeps the digits in line */
	mt_fold_table_putf(t, col + 3, "%llu%s", n, few > 0 ? "?" : few ? "" : " ");
}

/* A site's name in at most room columns (0: no limit), shortened as
 * --sites shortens them only when it does not fit. */
static void put_site_name(struct mt_fold_table *t, size_t row, const char *name, size_t room)
{
	size_t len = strlen(name), nlen, llen;
	const char *loc;
	if (!room || mt_fold_text_width(name, len) <= room) {
		mt_fold_table_put_at(t, row, SC_SITE, name);
		return;
	}
	mt_fold_frame_split(name, len, &nlen, &loc, &llen);
	char *out = malloc(len + 16);
	if (!out)
		return;
	mt_fold_fit_frame(out, len + 16, name, nlen, llen ? loc : NULL, llen, room);
	mt_fold_table_put_at(t, row, SC_SITE, out);
	free(out);
}

static void print_sites(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	enum mt_fold_metric m = s->opt.metric;
	int bytes = metric_is_bytes(m);
	const char *cut = mt_fold_exact_misses(&s->counts, 1);
	struct line l = { .n = 0 };
	part(&l, "top %u of %u sites by total %s", s->nshown, s->nsites, mt_fold_metric_name(m));
	if (s->opt.min_samples)
		part(&l, " with at least %llu samples", (unsigned long long)s->opt.min_samples);
	part(&l, "; ? marks fewer than %llu samples (rough)", (unsigned long long)s->opt.few);
	int tops = 0;
	for (uint32_t r = 0; r < s->nshown; r++)
		tops |= s->sites[s->shown[r]].total.cut_top | s->sites[s->shown[r]].self.cut_top;
	if (tops)
		part(&l, "; ^: top cut at the sampler's %s, never below the estimate (JSON: "
		     "hi_samples)", mt_fold_metric_bound_name(m));
	mt_fold_say(f, width, "%s", l.b);
	if (cut && s->total.exact) {
		char num[40];
		if (cut[0] == 'e')
			mt_fold_say(f, width, "lost: an exact sum of the events captured, but the capture lost "
			    "%s events: not exact", mt_fold_u128_str(num, s->counts.lost_events));
		else if (cut[0] == 's')
			mt_fold_say(f, width, "cut: an exact sum of the events, but %llu of their stacks were "
			    "cut short and the frames they lose miss them: not exact",
			    (unsigned long long)s->counts.truncated);
		else
			mt_fold_say(f, width, "part: an exact sum of the events, but %s process images never "
			    "ran the sampler: not exact",
			    mt_fold_u128_str(num, s->counts.unsampled_images));
	}
	const char *hu = bytes ? " req B" : m == MT_FOLD_ALLOC_OBJECTS || m == MT_FOLD_INUSE_OBJECTS ||
						    m == MT_FOLD_PEAK_OBJECTS || m == MT_FOLD_TEMP_OBJECTS
						 ? " objs" : "";
	struct mt_fold_table t = { .cols = SC_COLS, .align = "rrLrrrLrl" };
	size_t *rows = malloc((s->nshown + 1) * sizeof(*rows)), want = 0;
	if (!mt_fold_table_row(&t)) {
		for (int k = 0; k < 2; k++) {
			mt_fold_table_putf(&t, 4 * k, "%s%s", k ? "self" : "total", hu);
			mt_fold_table_put(&t, 4 * k + 1, "rse");
			mt_fold_table_put(&t, 4 * k + 2, "interval");
			mt_fold_table_put(&t, 4 * k + 3, k ? "n" : "n ");
		}
		mt_fold_table_put(&t, SC_SITE, "site");
	}
	for (uint32_t r = 0; rows && r < s->nshown; r++) {
		const struct mt_fold_site *site = &s->sites[s->shown[r]];
		rows[r] = (size_t)-1;
		if (mt_fold_table_row(&t))
			continue;
		rows[r] = t.rows - 1;
		put_site_cells(&t, SC_TOTAL, &site->total, bytes, cut,
			       site->total.exact ? site->events : site->total.n, site->few);
		put_site_cells(&t, SC_SELF, &site->self, bytes, cut,
			       site->self.exact ? site->self_events : site->self.n, -1);
		size_t w = mt_fold_text_width(site->name, strlen(site->name));
		if (w > want)
			want = w;
	}
	/* a row a line while names keep 40 columns: one long name should
	 * not put every row's intervals under it */
	size_t room = mt_fold_table_room(&t, width, want < 40 ? want : 40);
	for (uint32_t r = 0; rows && r < s->nshown; r++)
		if (rows[r] != (size_t)-1)
			put_site_name(&t, rows[r], s->sites[s->shown[r]].name, room);
	mt_fold_table_print(f, &t, width);
	free(rows);
}

int mt_fold_render_table(FILE *f, const struct mt_fold_snapshot *s)
{
	enum mt_fold_metric m = s->opt.metric;
	int bytes = metric_is_bytes(m);
	size_t width = s->opt.width;
	char a[32], b[32], c[40], iv1[80];
	struct line l = { .n = 0 };

	part(&l, "mt-fold report: %s (%s), %d%% intervals, ", mt_fold_metric_name(m),
	     bytes ? "requested bytes" : mt_fold_metric_unit(m), (int)lround(100 * s->opt.conf));
	print_input(f, s, &l, width);
	l.n = 0;
	part(&l, "total %s: %s", mt_fold_metric_name(m),
	     mt_fold_format_amount(a, s->total.value, bytes));
	if (!s->total.exact)
	{
		part(&l, " %s, rse %s, n %llu", format_interval(iv1, &s->total, bytes),
		     format_rse(b, &s->total), (unsigned long long)s->total.n);
		if (s->total.cut_top)
			part(&l, " (^: top cut at the sampler's %s; the samples alone reach %s)",
			     mt_fold_metric_bound_name(m),
			     mt_fold_format_amount(c, s->total.hi_samples, bytes));
	}
	else if (s->counts.lost_events || s->counts.lost_records)
		/* Lost allocations only lower a sum; lost frees raise what is
		 * in use, so in-use figures can be off either way. */
		part(&l, " (exact over the events captured; %s events lost: %s)",
		     mt_fold_u128_str(c, s->counts.lost_events),
		     m == MT_FOLD_INUSE_BYTES || m == MT_FOLD_INUSE_OBJECTS ?
			     "off either way" : "at least this");
	else if (s->counts.unsampled_images)
		part(&l, " (exact over the images that ran the sampler; %s never did: %s)",
		     mt_fold_u128_str(c, s->counts.unsampled_images),
		     m == MT_FOLD_INUSE_BYTES || m == MT_FOLD_INUSE_OBJECTS ?
			     "off either way" : "at least this");
	else
		part(&l, " (exact)");
	mt_fold_say(f, width, "%s", l.b);
	fputc('\n', f);
	print_totals(f, s, width);
	fputc('\n', f);
	mt_fold_render_memory(f, s, width);
	mt_fold_render_hists(f, s, width);
	print_sites(f, s, width);
	return finish_io(f);
}

/* ---- JSON --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	if (!n || (n == 3 && s[0] >= 0xf0))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong 3- and 4-byte forms, surrogates, > U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

void mt_fold_json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s++);
		} else {
			int n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", f);
				s++;
			} else {
				fwrite(s, 1, (size_t)n, f);
				s += n;
			}
		}
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, "%.0f", v);
	else {
		/* The shortest form that reads back as the same double. */
		char buf[40];
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		fputs(buf, f);
	}
}

/* What the exact values about to be written miss (mt_fold_exact_misses),
 * set around the figures it concerns; NULL: nothing. */
static const char *json_misses;

static void json_value_fields(FILE *f, const struct mt_fold_value *v)
{
	fputs("\"value\": ", f);
	json_num(f, v->value);
	fprintf(f, ", \"n\": %llu, \"exact\": %s, ", (unsigned long long)v->n,
		v->exact && !json_misses ? "true" : "false");
	if (v->exact && json_misses)
		fprintf(f, "\"misses\": \"%s\", ", json_misses);
	fputs("\"rse\": ", f);
	json_num(f, v->exact ? 0 : v->rse);
	fputs(", \"lo\": ", f);
	json_num(f, v->lo);
	fputs(", \"hi\": ", f);
	json_num(f, v->hi);
	if (v->cut_top) {
		fputs(", \"hi_samples\": ", f);
		json_num(f, v->hi_samples);
	}
}

static void json_value(FILE *f, const struct mt_fold_value *v)
{
	fputc('{', f);
	json_value_fields(f, v);
	fputc('}', f);
}

static const char *const check_keys[MT_FOLD_NCHECKS] = {
	"alloc_bytes", "alloc_objects", "inuse_bytes", "inuse_objects",
};

static void json_group(FILE *f, const struct mt_fold_group *g, const char *ind)
{
	fprintf(f, "{\"pid\": %u, \"tid\": %u, \"comm\": ", g->pid, g->tid);
	if (g->comm)
		mt_fold_json_string(f, g->comm);
	else
		fputs("null", f);
	fprintf(f, ",\n%s \"exact\": ", ind);
	const struct mt_fold_totals *t = &g->totals;
	char n[6][40];
	if (t->lines)
		fprintf(f, "{\"alloc_bytes\": %s, \"allocs\": %s, \"frees\": %s, "
			"\"freed_bytes\": %s, \"peak_bytes\": %s, \"peak_error\": %s, "
			"\"lines\": %llu, \"forked_lines\": %llu}",
			mt_fold_u128_str(n[0], t->alloc_bytes), mt_fold_u128_str(n[1], t->allocs),
			mt_fold_u128_str(n[2], t->frees), mt_fold_u128_str(n[3], t->freed_bytes),
			mt_fold_u128_str(n[4], t->peak_bytes), mt_fold_u128_str(n[5], t->peak_error),
			(unsigned long long)t->lines, (unsigned long long)t->forked_lines);
	else
		fputs("null", f);
	fprintf(f, ",\n%s \"exact_partial\": %s", ind, g->partial ? "true" : "false");
	fprintf(f, ",\n%s \"estimates\": {", ind);
	for (int i = 0; i < MT_FOLD_NCHECKS; i++) {
		const struct mt_fold_check *ck = &g->check[i];
		fprintf(f, "%s\n%s  \"%s\": {", i ? "," : "", ind, check_keys[i]);
		json_value_fields(f, &ck->est);
		/* null: a partial group, or a forked one's lower bound that
		 * lies below hi (only false tells there) */
		int known = !g->partial && !(ck->forked && ck->in_interval);
		if (ck->has_exact)
			fprintf(f, ", \"exact_value\": %s, \"in_interval\": %s}",
				mt_fold_i128_str(n[0], ck->exact),
				!known ? "null" : ck->in_interval ? "true" : "false");
		else
			fputs(", \"exact_value\": null, \"in_interval\": null}", f);
	}
	fprintf(f, "},\n%s \"metric\": ", ind);
	json_value(f, &g->metric);
	fputc('}', f);
}

static void json_sites(FILE *f, const struct mt_fold_snapshot *s, const struct mt_fold_sites *t,
		       uint32_t top, uint32_t paths)
{
	int cut = mt_fold_stacks_cut(&s->counts);
	uint32_t shown = top && t->nsites > top ? top : t->nsites;
	fprintf(f, ",\n \"allocation_sites_count\": %u,\n \"allocation_sites\": [", t->nsites);
	for (uint32_t i = 0; i < shown; i++) {
		const struct mt_fold_alloc_site *site = &t->sites[i];
		fputs(i ? ",\n  {\"site\": " : "\n  {\"site\": ", f);
		mt_fold_json_string(f, site->name);
		const char *colon = strrchr(site->loc, ':');
		if (*site->loc && colon) {
			char *file = strndup(site->loc, (size_t)(colon - site->loc));
			fputs(", \"file\": ", f);
			mt_fold_json_string(f, file ? file : "");
			free(file);
			fprintf(f, ", \"line\": %llu", strtoull(colon + 1, NULL, 10));
		} else {
			fputs(", \"file\": null, \"line\": null", f);
		}
		fputs(",\n   \"estimate\": ", f);
		json_num(f, site->value.value);
		fputs(", \"interval\": [", f);
		json_num(f, site->value.lo);
		fputs(", ", f);
		json_num(f, site->value.hi);
		fprintf(f, "], \"exact\": %s, \"samples\": %llu,\n   \"allocations\": ",
			site->value.exact && !cut ? "true" : "false",
			(unsigned long long)(site->value.exact ? site->events : site->value.n));
		fputs("{\"estimate\": ", f);
		json_num(f, site->allocs.value);
		fputs(", \"interval\": [", f);
		json_num(f, site->allocs.lo);
		fputs(", ", f);
		json_num(f, site->allocs.hi);
		fprintf(f, "], \"exact\": %s},\n   \"paths\": [",
			site->allocs.exact && !cut ? "true" : "false");
		uint32_t np = paths && site->npaths > paths ? paths : site->npaths;
		for (uint32_t j = 0; j < np; j++) {
			const struct mt_fold_path *ph = &site->paths[j];
			fputs(j ? ",\n    {\"callers\": [" : "\n    {\"callers\": [", f);
			const char *p = ph->frames;
			for (int first = 1; *p; first = 0) {
				const char *semi = strchr(p, ';');
				size_t len = semi ? (size_t)(semi - p) : strlen(p);
				char *fr = strndup(p, len);
				if (!first)
					fputs(", ", f);
				mt_fold_json_string(f, fr ? fr : "");
				free(fr);
				p += len + (semi != NULL);
			}
			fputs("], \"estimate\": ", f);
			json_num(f, ph->value.value);
			fputs(", \"share\": ", f);
			json_num(f, site->value.value > 0 ? ph->value.value / site->value.value : 0);
			fputc('}', f);
		}
		fprintf(f, "], \"more_paths\": %u", site->npaths - np);
		mt_fold_json_site_hists(f, s, site);
		fputc('}', f);
	}
	fputc(']', f);
}

static int json_report(FILE *f, const struct mt_fold_snapshot *s, const struct mt_fold_sites *t,
		       uint32_t top, uint32_t paths);

int mt_fold_render_json(FILE *f, const struct mt_fold_snapshot *s)
{
	return json_report(f, s, NULL, 0, 0);
}

int mt_fold_render_json_sites(FILE *f, const struct mt_fold_snapshot *s,
			      const struct mt_fold_sites *t, uint32_t paths)
{
	return json_report(f, s, t, s->opt.top, paths);
}

static int json_report(FILE *f, const struct mt_fold_snapshot *s, const struct mt_fold_sites *t,
		       uint32_t top, uint32_t paths)
{
	const struct mt_fold_counts *c = &s->counts;
	char n[3][40];
	fprintf(f, "{\n \"format\": \"mt-fold-report\",\n \"version\": 1,\n");
	fprintf(f, " \"metric\": \"%s\",\n \"unit\": \"%s\",\n \"confidence\": ",
		mt_fold_metric_name(s->opt.metric), mt_fold_metric_unit(s->opt.metric));
	json_num(f, s->opt.conf);
	fprintf(f, ",\n \"mode\": \"%s\",\n", s->mode);
	if (c->rate_max)
		fprintf(f, " \"rate\": {\"min\": %llu, \"max\": %llu},\n",
			(unsigned long long)c->rate_min, (unsigned long long)c->rate_max);
	else
		fputs(" \"rate\": null,\n", f);
	if (c->every_max)
		fprintf(f, " \"every\": {\"min\": %llu, \"max\": %llu},\n",
			(unsigned long long)c->every_min, (unsigned long long)c->every_max);
	else
		fputs(" \"every\": null,\n", f);
	fputs(" \"event\": ", f);
	if (c->event)
		mt_fold_json_string(f, c->event);
	else
		fputs("null", f);
	fprintf(f, ",\n \"input\": {\"lines\": %llu, \"events\": %llu, \"alloc\": %llu, "
		"\"free\": %llu, \"totals\": %llu, \"sample\": %llu, \"lost\": %llu,\n"
		"  \"lost_events\": %s, \"bad_lines\": %llu, \"truncated_stacks\": %llu, "
		"\"end_of_dump_stacks\": %llu, \"no_stack\": %llu,\n"
		"  \"unmatched_frees\": %llu, \"implicit_frees\": %llu, "
		"\"allocs_without_ptr\": %llu, \"images_without_totals\": %s,\n"
		"  \"images_without_sampler\": %s, \"filtered_out\": %llu, "
		"\"other_event_samples\": %llu},\n",
		(unsigned long long)c->lines, (unsigned long long)c->events,
		(unsigned long long)c->kind[MT_FOLD_ALLOC], (unsigned long long)c->kind[MT_FOLD_FREE],
		(unsigned long long)c->kind[MT_FOLD_TOTALS], (unsigned long long)c->kind[MT_FOLD_SAMPLE],
		(unsigned long long)c->kind[MT_FOLD_LOST], mt_fold_u128_str(n[0], c->lost_events),
		(unsigned long long)c->bad_lines, (unsigned long long)c->truncated,
		(unsigned long long)c->end_of_dump, (unsigned long long)c->no_stack, (unsigned long long)c->unmatched_frees,
		(unsigned long long)c->implicit_frees, (unsigned long long)c->no_ptr_allocs,
		mt_fold_u128_str(n[1], c->silent_images), mt_fold_u128_str(n[2], c->unsampled_images),
		(unsigned long long)c->filtered_out, (unsigned long long)c->other_event_samples);
	fputs(" \"total\": ", f);
	json_misses = mt_fold_exact_misses(c, 0);
	json_value(f, &s->total);
	fputs(",\n \"threads\": [", f);
	for (uint32_t i = 0; i < s->nthreads; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_group(f, &s->threads[i], "  ");
	}
	fputs("],\n \"processes\": [", f);
	for (uint32_t i = 0; i < s->nprocs; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_group(f, &s->procs[i], "  ");
	}
	fputs("],\n \"all\": ", f);
	json_group(f, &s->all, "");
	json_misses = mt_fold_exact_misses(c, 1);
	fprintf(f, ",\n \"sites\": {\"count\": %u, \"top\": %u, \"min_samples\": %llu, "
		"\"few\": %llu, \"rows\": [", s->nsites, s->opt.top,
		(unsigned long long)s->opt.min_samples, (unsigned long long)s->opt.few);
	for (uint32_t r = 0; r < s->nshown; r++) {
		const struct mt_fold_site *site = &s->sites[s->shown[r]];
		fputs(r ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		mt_fold_json_string(f, site->name);
		fputs(", \"total\": ", f);
		json_value(f, &site->total);
		fputs(",\n   \"self\": ", f);
		json_value(f, &site->self);
		fprintf(f, ", \"events\": %llu, \"self_events\": %llu, \"few\": %s}",
			(unsigned long long)site->events, (unsigned long long)site->self_events,
			site->few ? "true" : "false");
	}
	fputs("]},\n \"stacks\": [", f);
	json_misses = mt_fold_exact_misses(c, 0);
	for (uint32_t i = 0; i < s->nstacks; i++) {
		const struct mt_fold_stack_row *r = &s->stacks[i];
		fputs(i ? ",\n  {\"stack\": " : "\n  {\"stack\": ", f);
		mt_fold_json_string(f, r->stack);
		fputs(", \"value\": ", f);
		json_num(f, r->value);
		fprintf(f, ", \"n\": %llu, \"exact\": %s", (unsigned long long)r->n,
			r->exact && !json_misses ? "true" : "false");
		if (r->exact && json_misses)
			fprintf(f, ", \"misses\": \"%s\"", json_misses);
		fputc('}', f);
	}
	fputc(']', f);
	json_misses = NULL;
	if (t)
		json_sites(f, s, t, top, paths);
	mt_fold_json_memory(f, s);
	if (mt_fold_json_live(f, s))
		return MT_FOLD_ENOMEM;
	fputs("\n}\n", f);
	return finish_io(f);
}

void mt_fold_json_num(FILE *f, double v)
{
	json_num(f, v);
}

void mt_fold_json_value(FILE *f, const struct mt_fold_value *v)
{
	json_value(f, v);
}
