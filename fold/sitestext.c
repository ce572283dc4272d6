/* The text report of allocation sites and call trees: see sitestext.h. */
#include "fold/sitestext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/line.h"
#include "fold/memtext.h"
#include "fold/render.h"
#include "fold/width.h"

/* How a figure of the metric is written. */
enum unit { U_BYTES, U_COUNT, U_TIME };

char *mt_fold_format_time(char *buf, double ns)
{
	static const char *const names[] = { "ns", "us", "ms", "s" };
	double x = fabs(ns);
	int u = 0;
	if (isnan(ns) || isinf(ns)) {
		snprintf(buf, 32, "%s", isnan(ns) ? "?" : ns > 0 ? "inf" : "-inf");
		return buf;
	}
	while (x >= 999.5 && u < 3) {
		x /= 1000;
		u++;
	}
	const char *sign = ns < 0 ? "-" : "";
	if (u == 0 && x == floor(x))
		snprintf(buf, 32, "%s%.0f %s", sign, x, names[u]);
	else if (x < 9.995)
		snprintf(buf, 32, "%s%.2f %s", sign, x, names[u]);
	else if (x < 99.95)
		snprintf(buf, 32, "%s%.1f %s", sign, x, names[u]);
	else
		snprintf(buf, 32, "%s%.0f %s", sign, x, names[u]);
	return buf;
}

static enum unit metric_unit(const struct mt_fold_snapshot *s)
{
	enum mt_fold_metric m = s->opt.metric;
	if (m == MT_FOLD_ALLOC_BYTES || m == MT_FOLD_INUSE_BYTES || m == MT_FOLD_PEAK_BYTES ||
	    m == MT_FOLD_TEMP_BYTES)
		return U_BYTES;
	/* the period of the clock events is nanoseconds */
	if (m == MT_FOLD_PERIOD && s->counts.event &&
	    (strcmp(s->counts.event, "cpu-clock") == 0 ||
	     strcmp(s->counts.event, "task-clock") == 0))
		return U_TIME;
	return U_COUNT;
}

static char *fmt(char *buf, double v, enum unit u)
{
	return u == U_TIME ? mt_fold_format_time(buf, v)
			   : mt_fold_format_amount(buf, v, u == U_BYTES);
}

/* What a column of the metric is headed, with its unit. */
static const char *metric_head(const struct mt_fold_snapshot *s)
{
	switch (s->opt.metric) {
	case MT_FOLD_ALLOC_BYTES: return "alloc req B";
	case MT_FOLD_ALLOC_OBJECTS: return "allocs";
	case MT_FOLD_INUSE_BYTES: return "live req B";
	case MT_FOLD_INUSE_OBJECTS: return "live objs";
	case MT_FOLD_SAMPLES: return "samples";
	case MT_FOLD_PEAK_BYTES: return "peak req B";
	case MT_FOLD_PEAK_OBJECTS: return "peak objs";
	case MT_FOLD_TEMP_BYTES: return "temp req B";
	case MT_FOLD_TEMP_OBJECTS: return "temp objs";
	default: return metric_unit(s) == U_TIME ? "time" : "events";
	}
}

static const char *metric_says(const struct mt_fold_snapshot *s)
{
	switch (s->opt.metric) {
	case MT_FOLD_ALLOC_BYTES: return "requested bytes allocated";
	case MT_FOLD_ALLOC_OBJECTS: return "allocations, a count";
	case MT_FOLD_INUSE_BYTES: return "requested bytes still allocated at exit";
	case MT_FOLD_INUSE_OBJECTS: return "allocations still live at exit, a count";
	case MT_FOLD_SAMPLES: return "events recorded, a count";
	case MT_FOLD_PEAK_BYTES: return "requested bytes live at the peak";
	case MT_FOLD_PEAK_OBJECTS: return "allocations live at the peak, a count";
	case MT_FOLD_TEMP_BYTES: return "requested bytes of temporary allocations";
	case MT_FOLD_TEMP_OBJECTS: return "temporary allocations, a count";
	default: return metric_unit(s) == U_TIME ? "time in the event's period"
					      : "events, from the samples' periods";
	}
}

/* "[lo, hi]", or what stands for it when the figure is exact. */
static char *interval(char *buf, size_t n, const struct mt_fold_value *v, enum unit u,
		      const char *misses)
{
	char a[32], b[32];
	if (v->exact && misses)
		snprintf(buf, n, "- (%s)", misses);
	else if (v->exact)
		snprintf(buf, n, "exact");
	else
		snprintf(buf, n, "[%s, %s]%s", fmt(a, v->lo, u), fmt(b, v->hi, u),
			 v->cut_top ? "^" : "");
	return buf;
}


/* ---- summary ------------------------------------------------------------ */

static void print_program(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	const struct mt_fold_counts *c = &s->counts;
	char names[256] = "", dur[32], a[32], b[32];
	size_t k = 0;
	unsigned ncomm = 0, more = 0, npid = 0;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		const struct mt_fold_group *g = &s->threads[i];
		npid += i == 0 || s->threads[i - 1].pid != g->pid;
		int seen = 0;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = strcmp(s->threads[j].comm, g->comm) == 0;
		if (seen)
			continue;
		if (ncomm < 3 && k + strlen(g->comm) + 3 < sizeof(names)) {
			k += (size_t)snprintf(names + k, sizeof(names) - k, "%s%s", ncomm ? ", " : "",
					      g->comm);
			ncomm++;
		} else {
			more++;
		}
	}
	if (more)
		snprintf(names + k, sizeof(names) - k, " and %u more", more);
	if (c->time_last > c->time_first)
		mt_fold_format_time(dur, (double)(c->time_last - c->time_first));
	else
		snprintf(dur, sizeof(dur), "%s", c->time_first ? "0 s" : "unknown");
	char mode[96];
	if (c->rate_max == 1)
		snprintf(mode, sizeof(mode), "%s mode, rate 1 B (every byte)", s->mode);
	else if (c->rate_max > 1 && c->rate_min != c->rate_max)
		snprintf(mode, sizeof(mode), "%s mode, rates %s to %s", s->mode,
			 mt_fold_format_amount(a, (double)c->rate_min, 1),
			 mt_fold_format_amount(b, (double)c->rate_max, 1));
	else if (c->rate_max > 1)
		snprintf(mode, sizeof(mode), "%s mode, rate %s", s->mode,
			 mt_fold_format_amount(a, (double)c->rate_max, 1));
	else if (c->every_max == 1)
		snprintf(mode, sizeof(mode), "%s mode, every call recorded", s->mode);
	else if (c->every_max)
		snprintf(mode, sizeof(mode), "%s mode, one call in %llu%s recorded", s->mode,
			 (unsigned long long)c->every_max, c->every_min != c->every_max ? " or fewer" : "");
	else if (c->event)
		snprintf(mode, sizeof(mode), "%s mode, event %s", s->mode,
			 mt_fold_event_label(c->event));
	else
		snprintf(mode, sizeof(mode), "%s mode", s->mode);
	mt_fold_say(f, width, "program: %s (%u process%s, %u thread%s); duration %s; %s",
	    ncomm ? names : "none", npid, npid == 1 ? "" : "es", s->nthreads,
	    s->nthreads == 1 ? "" : "s", dur, mode);
}

static const char *mark(const struct mt_fold_check *ck, int partial)
{
	return !ck->has_exact ? "" : partial ? "part" : !ck->in_interval ? "OUT"
	       : ck->forked ? "fork" : "in";
}

/* One row of the totals: label, the exact figure, the estimate. */
static void total_row(FILE *f, const char *label, const char *exact,
		      const struct mt_fold_check *ck, enum unit u, int partial)
{
	char e[32], iv[80];
	if (!ck) {
		fprintf(f, "%-13s %15s\n", label, exact);
		return;
	}
	const char *mk = mark(ck, partial);
	fprintf(f, "%-13s %15s  %9s  ", label, exact, fmt(e, ck->est.value, u));
	interval(iv, sizeof(iv), &ck->est, u, NULL);
	if (*mk)
		fprintf(f, "%-22s %s\n", iv, mk);
	else
		fprintf(f, "%s\n", iv);
}

static void print_totals(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	const struct mt_fold_group *g = &s->all;
	const struct mt_fold_totals *t = &g->totals;
	char x[64], n[40], m[40];
	int conf = (int)lround(100 * s->opt.conf);
	if (!s->has_totals) {
		mt_fold_say(f, width, "exact totals: none in the input (only sample-mode captures carry "
		    "the sampler's totals)");
		return;
	}
	mt_fold_say(f, width, "exact totals from the sampler beside the estimates (%d%% interval from "
	    "the samples alone; "
	    "in: the exact figure lies in it; live: still allocated at exit)%s", conf,
	    g->partial ? "; part: the exact figures leave out images that sent none" : "");
	fprintf(f, "%-13s %15s  %9s  %s\n", "", "exact", "estimate",
		conf == 95 ? "95% interval" : "interval");
	int p = g->partial;
	/* The sampler counts allocations as requested, frees, live and peak
	 * bytes as glibc's blocks (usable size + 8): each figure says which. */
	snprintf(x, sizeof(x), "%s req B", mt_fold_u128_str(n, t->alloc_bytes));
	total_row(f, "allocated", x, &g->check[MT_FOLD_CHECK_BYTES], U_BYTES, p);
	total_row(f, "allocations", mt_fold_u128_str(n, t->allocs),
		  &g->check[MT_FOLD_CHECK_OBJECTS], U_COUNT, p);
	total_row(f, "frees", mt_fold_u128_str(n, t->frees), NULL, U_COUNT, p);
	snprintf(x, sizeof(x), "%s block B", mt_fold_u128_str(n, t->peak_bytes));
	if (t->peak_error) {
		fprintf(f, "%-13s %15s  (+- %s block B)\n", "peak", x,
			mt_fold_u128_str(m, t->peak_error));
	} else {
		total_row(f, "peak", x, NULL, U_BYTES, p);
	}
	total_row(f, "live objects", mt_fold_i128_str(n, g->check[MT_FOLD_CHECK_INUSE_OBJECTS].exact),
		  &g->check[MT_FOLD_CHECK_INUSE_OBJECTS], U_COUNT, p);
	total_row(f, "live req B", "-", &g->check[MT_FOLD_CHECK_INUSE_BYTES], U_BYTES, p);
	int out = 0;
	for (int i = 0; i < MT_FOLD_NCHECKS; i++)
		out += g->check[i].has_exact && !p && !g->check[i].in_interval &&
		       !g->check[i].forked;
	if (out)
		mt_fold_say(f, width, "OUT: the exact figure lies outside the interval: by chance "
		    "about 1 in %.0f, else lost events or a fault", 1 / (1 - s->opt.conf));
}

static void print_input(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	const struct mt_fold_counts *c = &s->counts;
	char n[40];
	if (c->lost_events || c->lost_records)
		mt_fold_say(f, width, "lost events: %s (%llu lost records): the figures may be low, "
		    "and live ones off either way", mt_fold_u128_str(n, c->lost_events),
		    (unsigned long long)c->lost_records);
	else
		mt_fold_say(f, width, "lost events: none");
	double pct = c->stacks ? 100.0 * (double)c->truncated / (double)c->stacks : 0;
	mt_fold_say(f, width, "truncated stacks: %llu of %llu (%.1f%%)%s", (unsigned long long)c->truncated,
	    (unsigned long long)c->stacks, pct,
	    c->truncated && s->total.exact ? "; no site figure is exact" : "");
	if (c->truncated * 100 > c->stacks)
		mt_fold_say(f, width, "warning: %.1f%% of the stacks were cut short (end= other than "
		    "complete; %llu at the end of their dump): their outer callers are missing, "
		    "and a stack cut inside the allocator has an allocator frame for its site; "
		    "capture with a larger --stack-size (mt-capture --stack-size 65528)", pct,
		    (unsigned long long)c->end_of_dump);
	if (c->filtered_out)
		mt_fold_say(f, width, "left out by --only-pid, --only-tid, --only-comm: %llu events",
		    (unsigned long long)c->filtered_out);
	if (c->silent_images)
		mt_fold_say(f, width, "warning: %s process images sent no exact totals (killed, or "
		    "still running): the exact totals leave them out", mt_fold_u128_str(n, c->silent_images));
	if (c->unsampled_images)
		mt_fold_say(f, width, "warning: %s process images never ran the sampler (static "
		    "programs, or LD_PRELOAD cleared): their allocations are in no figure",
		    mt_fold_u128_str(n, c->unsampled_images));
	if (c->other_event_samples)
		mt_fold_say(f, width, "left out: %llu samples of other events",
		    (unsigned long long)c->other_event_samples);
	if (c->bad_lines)
		mt_fold_say(f, width, "bad lines skipped: %llu", (unsigned long long)c->bad_lines);
}

/* ---- threads and processes ---------------------------------------------- */

static const struct mt_fold_group *const *sort_groups;

static int group_cmp(const void *a, const void *b)
{
	const struct mt_fold_group *x = *(const struct mt_fold_group *const *)a;
	const struct mt_fold_group *y = *(const struct mt_fold_group *const *)b;
	if (x->metric.value != y->metric.value)
		return x->metric.value > y->metric.value ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The sampler's exact count of the metric for a group, or NULL. */
static const struct mt_fold_check *metric_check(const struct mt_fold_snapshot *s,
						const struct mt_fold_group *g)
{
	switch (s->opt.metric) {
	case MT_FOLD_ALLOC_BYTES: return &g->check[MT_FOLD_CHECK_BYTES];
	case MT_FOLD_ALLOC_OBJECTS: return &g->check[MT_FOLD_CHECK_OBJECTS];
	case MT_FOLD_INUSE_OBJECTS: return &g->check[MT_FOLD_CHECK_INUSE_OBJECTS];
	default: return NULL;
	}
}

static int print_groups(FILE *f, const struct mt_fold_snapshot *s,
			const struct mt_fold_sites_options *o)
{
	uint32_t n = 0, total = s->nthreads + s->nprocs;
	const struct mt_fold_group **gs = malloc((total + 1) * sizeof(*gs));
	if (!gs)
		return MT_FOLD_ENOMEM;
	for (uint32_t i = 0; i < s->nthreads; i++)
		gs[n++] = &s->threads[i];
	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].totals.lines)
			gs[n++] = &s->procs[i];
	sort_groups = gs;
	qsort(gs, n, sizeof(*gs), group_cmp);
	uint32_t shown = o->groups && n > o->groups ? o->groups : n;
	enum unit u = metric_unit(s);
	int with_exact = (!o->width || o->width >= 77) && s->has_totals &&
			 metric_check(s, &s->all) != NULL;
	const char *cut = mt_fold_exact_misses(&s->counts, 0);
	fprintf(f, "threads and processes by %s: %s%u of %u\n", mt_fold_metric_name(s->opt.metric),
		shown < n ? "top " : "", shown, n);
	const char *ivh = s->opt.conf == 0.95 ? "95% interval" : "interval";
	fprintf(f, "%-15s %-10s %11s  ", "pid/tid", "comm", metric_head(s));
	if (with_exact)
		fprintf(f, "%-22s%15s\n", ivh, "exact");
	else
		fprintf(f, "%s\n", ivh);
	for (uint32_t i = 0; i < shown; i++) {
		const struct mt_fold_group *g = gs[i];
		char label[40], v[32], iv[80], x[64], num[40];
		if (g->tid)
			snprintf(label, sizeof(label), "%u/%u", g->pid, g->tid);
		else
			snprintf(label, sizeof(label), "process %u", g->pid);
		fprintf(f, "%-15s %-10.10s %11s  ", label, g->comm ? g->comm : "",
			fmt(v, g->metric.value, u));
		interval(iv, sizeof(iv), &g->metric, u, cut);
		const struct mt_fold_check *ck = metric_check(s, g);
		if (with_exact && ck && ck->has_exact) {
			snprintf(x, sizeof(x), "%s%s", mt_fold_i128_str(num, ck->exact),
				 u == U_BYTES ? " req B" : "");
			fprintf(f, "%-22s%15s\n", iv, x);
		} else {
			fprintf(f, "%s\n", iv);
		}
	}
	if (shown < n)
		fprintf(f, "%u more threads and processes (--wide or --top 0 shows all)\n",
			n - shown);
	free(gs);
	return 0;
}

/* ---- sites -------------------------------------------------------------- */

/* A frame's shortest useful form: its bare name with templates and
 * parameters shortened, and its place when with_loc. */
static size_t short_frame(char *out, size_t cap, const char *f, size_t len, int with_loc,
			  size_t width)
{
	size_t nlen, llen;
	const char *loc;
	mt_fold_frame_split(f, len, &nlen, &loc, &llen);
	return mt_fold_fit_frame(out, cap, f, nlen, with_loc ? loc : NULL, with_loc ? llen : 0,
				 width);
}

/* The callers of a path, nearest first, " < " between, cut to room:
 * a new string (NULL when out of memory). */
static char *render_path(const char *frames, size_t room)
{
	/* Each ';' becomes " < ": up to 3 bytes a frame more than the input. */
	size_t used = 0, len = strlen(frames), o = 0, cap = 3 * len + 64;
	char *buf = malloc(len + 64), *out = malloc(cap);
	const char *p = frames, *end = frames + len;
	int first = 1;
	if (!buf || !out) {
		free(buf);
		free(out);
		return NULL;
	}
	if (!*frames)
		o = (size_t)snprintf(out, cap, "(no caller: the stack starts at the site)");
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;
		/* what is left must fit, or " < ..." after it */
		size_t sep = first ? 0 : 3, tail = semi ? 6 : 0;
		size_t avail = room > used + sep + tail ? room - used - sep - tail : 0;
		size_t n = short_frame(buf, len + 64, p, (size_t)(stop - p), first, 0);
		size_t w = mt_fold_text_width(buf, n);
		if (w > avail && first) {	/* the nearest caller, shortened */
			n = short_frame(buf, len + 64, p, (size_t)(stop - p), 1,
					room > tail ? room - tail : 1);
			w = mt_fold_text_width(buf, n);
		} else if (w > avail || o + 3 + n + 7 > cap) {
			memcpy(out + o, " < ...", 6);
			o += 6;
			break;
		}
		if (!first) {
			memcpy(out + o, " < ", 3);
			o += 3;
		}
		memcpy(out + o, buf, n);
		o += n;
		used += sep + w;
		first = 0;
		p = stop + 1;
	}
	out[o] = 0;
	free(buf);
	return out;
}

/* A path as shown: paths that read the same once cut are one line. */
struct shown_path {
	char *text;
	double value;
};

static int shown_text_cmp(const void *a, const void *b)
{
	return strcmp(((const struct shown_path *)a)->text, ((const struct shown_path *)b)->text);
}

static int shown_value_cmp(const void *a, const void *b)
{
	const struct shown_path *x = a, *y = b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void print_paths(FILE *f, const struct mt_fold_alloc_site *site, size_t width,
			uint32_t max)
{
	struct shown_path *sp = calloc((size_t)site->npaths + 1, sizeof(*sp));
	uint32_t n = 0;
	if (!sp)
		return;
	for (uint32_t j = 0; j < site->npaths; j++) {
		sp[n].text = render_path(site->paths[j].frames, width ? width - 15 : (size_t)-1 / 2);
		sp[n].value = site->paths[j].value.value;
		n += sp[n].text != NULL;
	}
	qsort(sp, n, sizeof(*sp), shown_text_cmp);
	uint32_t m = 0;
	for (uint32_t j = 0; j < n; j++) {
		if (m && strcmp(sp[m - 1].text, sp[j].text) == 0) {
			sp[m - 1].value += sp[j].value;
			free(sp[j].text);
		} else {
			sp[m++] = sp[j];
		}
	}
	qsort(sp, m, sizeof(*sp), shown_value_cmp);
	uint32_t np = max && m > max ? max : m;
	for (uint32_t j = 0; j < np; j++) {
		double share = site->value.value > 0 ? 100 * sp[j].value / site->value.value : 0;
		fprintf(f, "       %5.1f%%  %s\n", share, sp[j].text);
	}
	if (np < m)
		fprintf(f, "       (%u more path%s)\n", m - np, m - np == 1 ? "" : "s");
	for (uint32_t j = 0; j < m; j++)
		free(sp[j].text);
	free(sp);
}

static void print_sites(FILE *f, const struct mt_fold_snapshot *s, const struct mt_fold_sites *t,
			const struct mt_fold_sites_options *o)
{
	enum unit u = metric_unit(s);
	const char *cut = mt_fold_exact_misses(&s->counts, 1);
	int allocs = s->counts.kind[MT_FOLD_ALLOC] > 0;
	int allocs_iv = allocs && (!o->width || o->width >= 79);
	uint32_t shown = o->top && t->nsites > o->top ? o->top : t->nsites;
	const char *ivh = s->opt.conf == 0.95 ? "95% interval" : "interval";
	size_t w = o->width;
	int value_tops = 0, allocs_tops = 0;
	for (uint32_t i = 0; i < shown; i++) {
		value_tops |= t->sites[i].value.cut_top;
		allocs_tops |= allocs_iv && t->sites[i].allocs.cut_top;
	}
	/* allocs are cut at the exact allocation count, a total */
	const char *basis = value_tops ? mt_fold_metric_bound_name(s->opt.metric) : "exact total";
	char tops[160] = "";
	if (value_tops || allocs_tops)
		snprintf(tops, sizeof(tops), "; ^: top cut at the sampler's %s%s, never below the "
			 "estimate", basis, value_tops && allocs_tops && strcmp(basis, "exact total")
			 ? " (allocs: exact total)" : "");
	mt_fold_say(f, w, "%s by %s (%s): %s%u of %u; a site is the first frame, from the leaf, "
	    "outside the allocator%s", allocs ? "allocation sites" : "sites",
	    mt_fold_metric_name(s->opt.metric), metric_says(s), shown < t->nsites ? "top " : "",
	    shown, t->nsites, tops);
	fprintf(f, "%3s  %11s  %-22s", "#", metric_head(s), ivh);
	if (allocs)
		fprintf(f, "%11s  ", "allocs");
	if (allocs_iv)
		fprintf(f, "%-18s", ivh);
	fprintf(f, "%8s\n", "samples");
	for (uint32_t i = 0; i < shown; i++) {
		const struct mt_fold_alloc_site *site = &t->sites[i];
		char v[32], iv[80], a[32], aiv[80];
		fprintf(f, "%3u  %11s  %-22s", i + 1, fmt(v, site->value.value, u),
			interval(iv, sizeof(iv), &site->value, u, cut));
		if (allocs)
			fprintf(f, "%11s  ", fmt(a, site->allocs.value, U_COUNT));
		if (allocs_iv)
			fprintf(f, "%-18s", interval(aiv, sizeof(aiv), &site->allocs, U_COUNT, cut));
		fprintf(f, "%8llu\n", (unsigned long long)(site->value.exact ? site->events
									       : site->value.n));
		size_t nl = strlen(site->name), ll = strlen(site->loc);
		char *name = malloc(nl + ll + 16);
		if (name) {
			mt_fold_fit_frame(name, nl + ll + 16, site->name, nl, site->loc, ll,
					  w ? w - 5 : 0);
			fprintf(f, "     %s\n", name);
			free(name);
		}
		print_paths(f, site, w, o->paths);
	}
	if (t->allocator_only)
		mt_fold_say(f, w, "%llu stacks are the allocator's alone: their site is their outermost "
		    "frame", (unsigned long long)t->allocator_only);
}

/* ---- trees -------------------------------------------------------------- */

struct tree_ctx {
	FILE *f;
	const struct mt_fold_snapshot *s;
	const struct mt_fold_sites *t;
	size_t width;
	double min_share, total;
	enum unit u;
	uint64_t pruned, cut_deep;
	char *buf;
	size_t cap;
};

static void print_node(struct tree_ctx *c, uint32_t id, unsigned depth)
{
	const struct mt_fold_tree_node *nd = &c->t->nodes[id];
	char v[32];
	double share = c->total > 0 ? 100 * nd->value.value / c->total : 0;
	size_t ind = 2 * depth, room = c->width ? c->width - 21 : 0;
	size_t len = strlen(nd->frame);
	if (len + 64 > c->cap) {
		free(c->buf);
		c->cap = len + 64;
		if (!(c->buf = malloc(c->cap))) {
			c->cap = 0;
			return;
		}
	}
	short_frame(c->buf, c->cap, nd->frame, len, 1, c->width ? room - ind : 0);
	fprintf(c->f, "%11s  %5.1f%%  %*s%s\n", fmt(v, nd->value.value, c->u), share, (int)ind, "",
		c->buf);
	/* children need room for 16 columns of name at their indentation */
	int deep = c->width && room < ind + 2 + 16;
	for (uint32_t ch = nd->child; ch != UINT32_MAX; ch = c->t->nodes[ch].next) {
		double cs = c->total > 0 ? 100 * c->t->nodes[ch].value.value / c->total : 0;
		if (cs < c->min_share) {
			c->pruned++;
			continue;
		}
		if (deep) {
			fprintf(c->f, "%11s  %6s  %*s...\n", "", "", (int)ind + 2, "");
			c->cut_deep++;
			break;
		}
		print_node(c, ch, depth + 1);
	}
}

static void print_tree(FILE *f, const struct mt_fold_snapshot *s, const struct mt_fold_sites *t,
		       const struct mt_fold_sites_options *o)
{
	struct tree_ctx c = { .f = f, .s = s, .t = t, .width = o->width,
			      .min_share = o->min_share, .total = s->total.value,
			      .u = metric_unit(s) };
	mt_fold_say(f, o->width, "%s by %s (%s); nodes below %.1f%% of the total left out",
	    o->tree == MT_FOLD_TREE_DOWN ? "call tree, top-down from the roots to the allocation "
					  "sites" : "callers of the allocation sites, bottom-up",
	    mt_fold_metric_name(s->opt.metric), metric_says(s), o->min_share);
	fprintf(f, "%11s  %6s  %s\n", metric_head(s), "share", "function");
	for (uint32_t id = t->root; id != UINT32_MAX; id = t->nodes[id].next) {
		double share = c.total > 0 ? 100 * t->nodes[id].value.value / c.total : 0;
		if (share < o->min_share) {
			c.pruned++;
			continue;
		}
		print_node(&c, id, 0);
	}
	free(c.buf);
	if (c.pruned)
		mt_fold_say(f, o->width, "%llu nodes below %.1f%% left out (--min-share 0 shows them)",
		    (unsigned long long)c.pruned, o->min_share);
	if (c.cut_deep)
		mt_fold_say(f, o->width, "... : deeper frames cut to fit the width (--wide shows them)");
}

int mt_fold_render_sites(FILE *f, const struct mt_fold_snapshot *s,
			 const struct mt_fold_sites *t, const struct mt_fold_sites_options *o)
{
	enum unit u = metric_unit(s);
	char a[32], iv[80];
	mt_fold_say(f, o->width, "mt-fold sites: %s (%s), %d%% intervals", mt_fold_metric_name(s->opt.metric),
	    metric_says(s), (int)lround(100 * s->opt.conf));
	print_program(f, s, o->width);
	const char *misses = mt_fold_exact_misses(&s->counts, 0);
	if (s->total.exact)
		mt_fold_say(f, o->width, "total %s: %s (%s%s)", mt_fold_metric_name(s->opt.metric),
		    fmt(a, s->total.value, u), misses ? "not exact: " : "exact",
		    misses ? misses : "");
	else {
		char hs[32], cut_note[128] = "";
		if (s->total.cut_top)
			snprintf(cut_note, sizeof(cut_note), " (^: top cut at the sampler's %s; the "
				 "samples alone reach %s)", mt_fold_metric_bound_name(s->opt.metric),
				 fmt(hs, s->total.hi_samples, u));
		mt_fold_say(f, o->width, "total %s: %s %s, n %llu%s", mt_fold_metric_name(s->opt.metric),
		    fmt(a, s->total.value, u), interval(iv, sizeof(iv), &s->total, u, NULL),
		    (unsigned long long)s->total.n, cut_note);
	}
	print_input(f, s, o->width);
	fputc('\n', f);
	print_totals(f, s, o->width);
	fputc('\n', f);
	mt_fold_render_memory(f, s, o->width);
	mt_fold_render_hists(f, s, o->width);
	if (print_groups(f, s, o))
		return MT_FOLD_ENOMEM;
	fputc('\n', f);
	if (o->tree == MT_FOLD_TREE_NONE)
		print_sites(f, s, t, o);
	else
		print_tree(f, s, t, o);
	if (s->opt.sizes || s->opt.lifetimes) {
		fputc('\n', f);
		mt_fold_render_site_hists(f, s, t, o->top, o->width);
	}
	return ferror(f) ? MT_FOLD_EIO : 0;
}
