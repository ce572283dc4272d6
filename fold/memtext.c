/* Memory over time as text: summary, chart, reconciliation, histograms. */
#include "fold/memtext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/render.h"
#include "fold/sitestext.h"
#include "fold/table.h"
#include "fold/width.h"

#define CHART_ROWS 8
#define LABEL_W 10	/* "%9s " before the plot's '|' */


static double since(uint64_t t, uint64_t start)
{
	return t > start ? (double)(t - start) : 0;
}

/* "[lo, hi]" or "exact". */
static char *iv(char *buf, size_t n, const struct mt_fold_value *v, int bytes)
{
	char a[32], b[32];
	if (v->exact)
		snprintf(buf, n, "exact");
	else
		snprintf(buf, n, "[%s, %s]%s", mt_fold_format_amount(a, v->lo, bytes),
			 mt_fold_format_amount(b, v->hi, bytes), v->cut_top ? "^" : "");
	return buf;
}

void mt_fold_render_chart(FILE *f, const struct mt_fold_tick *pts, size_t n, uint64_t start,
			  uint64_t peak_time, size_t width)
{
	if (!n)
		return;
	if (width < 40)
		width = 40;
	size_t cols = width - LABEL_W - 1;
	double *live = calloc(cols, sizeof(double)), *rss = calloc(cols, sizeof(double));
	char *row = malloc(cols + 1);
	if (!live || !rss || !row)
		goto out;
	uint64_t t0 = start, t1 = pts[n - 1].time > start ? pts[n - 1].time : start;
	double span = (double)(t1 - t0) + 1;
	/* a column: the largest value of the points in it; a column without
	 * points carries the step function's value on */
	size_t j = 0;
	double cur_l = 0, cur_r = 0, ymax = 0;
	for (size_t c = 0; c < cols; c++) {
		double end = (double)(c + 1) * span / (double)cols;
		double ml = cur_l, mr = cur_r;
		while (j < n && since(pts[j].time, t0) < end) {
			cur_l = pts[j].live > 0 ? (double)pts[j].live : 0;
			cur_r = pts[j].rss != MT_FOLD_RSS_NONE ? (double)pts[j].rss : 0;
			if (cur_l > ml)
				ml = cur_l;
			if (cur_r > mr)
				mr = cur_r;
			j++;
		}
		live[c] = ml;
		rss[c] = mr;
		if (ml > ymax)
			ymax = ml;
		if (mr > ymax)
			ymax = mr;
	}
	char lab[32];
	for (int r = CHART_ROWS; r >= 1; r--) {
		for (size_t c = 0; c < cols; c++) {
			/* rows to the nearest: a level under half a row shows none */
			int ll = ymax > 0 ? (int)lround(live[c] / ymax * CHART_ROWS) : 0;
			int rl = ymax > 0 ? (int)lround(rss[c] / ymax * CHART_ROWS) : 0;
			row[c] = ll >= r ? '#' : rl >= r ? ':' : ' ';
		}
		size_t len = cols;
		while (len && row[len - 1] == ' ')
			len--;
		row[len] = 0;
		if (r == CHART_ROWS)
			mt_fold_format_amount(lab, ymax, 1);
		else if (r == CHART_ROWS / 2)
			mt_fold_format_amount(lab, ymax / 2, 1);
		else
			lab[0] = 0;
		fprintf(f, "%9s |%s\n", lab, row);
	}
	memset(row, '-', cols);
	row[cols] = 0;
	fprintf(f, "%9s +%s\n", "0", row);
	/* time labels: 0, the peak under its column, the end at the right
	 * (left out where the peak's label needs the room) */
	char line[1024], a[32], b[48];
	size_t w = LABEL_W + 1 + cols;
	if (w > sizeof(line) - 1)
		w = sizeof(line) - 1;
	memset(line, ' ', w);
	line[w] = 0;
	line[LABEL_W + 1] = '0';
	size_t pc = (size_t)(since(peak_time, t0) / span * (double)cols);
	if (pc >= cols)
		pc = cols - 1;
	size_t at = LABEL_W + 1 + pc, bl;
	snprintf(b, sizeof(b), "^ peak %s", mt_fold_format_time(lab, since(peak_time, t0)));
	bl = strlen(b);
	if (at + bl > w) {	/* no room after the mark: the label before it */
		snprintf(b, sizeof(b), "peak %s ^", lab);
		bl = strlen(b);
		at = at + 1 >= bl ? at + 1 - bl : 0;
	}
	if (at < LABEL_W + 3)
		at = LABEL_W + 3;
	if (at + bl > w)
		bl = w - at;
	memcpy(line + at, b, bl);
	mt_fold_format_time(a, since(t1, t0));
	size_t al = strlen(a);
	if (at + bl + 2 + al <= w)
		memcpy(line + w - al, a, al);
	size_t len = w;
	while (len && line[len - 1] == ' ')
		len--;
	line[len] = 0;
	fprintf(f, "%s\n", line);
out:
	free(live);
	free(rss);
	free(row);
}

static void recon_row(struct mt_fold_table *t, const char *label,
		      const struct mt_fold_mem_recon *r)
{
	char a[32], b[80];
	if (mt_fold_table_row(t))
		return;
	mt_fold_table_put(t, 0, label);
	mt_fold_table_put(t, 1, mt_fold_format_amount(a, r->requested.value, 1));
	mt_fold_table_put(t, 2, iv(b, sizeof(b), &r->requested, 1));
	mt_fold_table_put(t, 3, r->has_block ? mt_fold_format_amount(a, (double)r->block, 1) : "-");
	mt_fold_table_put(t, 4, r->has_rss ? mt_fold_format_amount(a, (double)r->rss, 1) : "-");
}

/* "exact", or "exact, +- N" with the sampler's bound on a batched peak. */
static const char *exactness(char *b, size_t size, uint64_t error)
{
	char n[32];
	if (!error)
		return "exact";
	snprintf(b, size, "exact, +- %s", mt_fold_format_amount(n, (double)error, 1));
	return b;
}

void mt_fold_render_memory(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	const struct mt_fold_memory *m = s->mem;
	char a[32], b[32], c[32], d[80], e[80];
	if (!m || (!m->has_ticks && !m->has_seq))
		return;
	if (m->has_ticks) {
		if (m->nprocs == 1) {
			const struct mt_fold_mem_proc *p = &m->procs[0];
			mt_fold_say(f, width, "peak: %s live block bytes (%s) at %s, process %u%s%s",
			    mt_fold_format_amount(a, (double)p->peak, 1),
			    exactness(e, sizeof(e), p->peak_error),
			    mt_fold_format_time(c, since(p->peak_time, m->start)), p->pid,
			    *p->comm ? " " : "", p->comm);
		} else {
			uint64_t sum = 0, err = 0;
			for (size_t i = 0; i < m->nprocs; i++) {
				sum += m->procs[i].peak;
				err += m->procs[i].peak_error;
			}
			mt_fold_say(f, width, "peak: %zu processes, their peaks add up to %s live block "
			    "bytes (%s); together at most %s at %s", m->nprocs,
			    mt_fold_format_amount(a, (double)sum, 1),
			    exactness(e, sizeof(e), err),
			    mt_fold_format_amount(c, (double)m->total_peak, 1),
			    mt_fold_format_time(d, since(m->total_peak_time, m->start)));
		}
		mt_fold_say(f, width, "live at the %s: %s requested bytes %s, %s objects %s (peak_bytes, "
		    "peak_objects)", m->at >= 0 ? "moment --at gives" : "peak",
		    mt_fold_format_amount(a, m->peak_bytes.value, 1),
		    iv(d, sizeof(d), &m->peak_bytes, 1),
		    mt_fold_format_amount(b, m->peak_objects.value, 0),
		    iv(e, sizeof(e), &m->peak_objects, 0));
		if (m->peak_unticked && m->at < 0)
			mt_fold_say(f, width, "warning: %llu sampled allocations of processes without "
			    "tick lines are in no peak figure", (unsigned long long)m->peak_unticked);
	}
	if (m->has_seq)
		mt_fold_say(f, width, "temporary allocations (freed by their thread before its next "
		    "allocation): %s objects %s, %s requested bytes %s: %.1f%% of alloc_bytes",
		    mt_fold_format_amount(a, m->temp_objects.value, 0),
		    iv(d, sizeof(d), &m->temp_objects, 0),
		    mt_fold_format_amount(b, m->temp_bytes.value, 1),
		    iv(e, sizeof(e), &m->temp_bytes, 1), 100 * m->temp_share);
	fputc('\n', f);
	if (!m->has_ticks)
		return;
	uint64_t pt = m->nprocs == 1 ? m->procs[0].peak_time : m->total_peak_time;
	char dur[32];
	mt_fold_format_time(dur, m->ntotal ? since(m->total[m->ntotal - 1].time, m->start) : 0);
	mt_fold_say(f, width, "memory over time%s: live block bytes (#) and RSS (:), %zu points "
	    "over %s", m->nprocs == 1 ? "" : " (all processes)", m->ntotal, dur);
	mt_fold_render_chart(f, m->total, m->ntotal, m->start, pt, width ? width : 120);
	fputc('\n', f);
	char lab[64];
	if (m->peak_time_known)
		snprintf(lab, sizeof(lab), "at %s %s", m->at >= 0 ? "--at" : "peak",
			 mt_fold_format_time(c, since(m->peak_moment, m->start)));
	else
		snprintf(lab, sizeof(lab), "at peaks");
	struct mt_fold_table t = { .cols = 5, .align = "lrLrr", .indent = 2 };
	if (!mt_fold_table_row(&t)) {
		mt_fold_table_put(&t, 0, "reconciliation");
		mt_fold_table_put(&t, 1, "requested");
		mt_fold_table_put(&t, 2, "(estimate)");
		mt_fold_table_put(&t, 3, "block");
		mt_fold_table_put(&t, 4, "RSS");
	}
	recon_row(&t, lab, &m->at_peak);
	recon_row(&t, "at end", &m->at_end);
	mt_fold_table_print(f, &t, width);
	mt_fold_say(f, width, "requested: the bytes the program asked for, estimated from the sampled "
	    "allocations live then; block: the allocator's blocks (size rounded up, with "
	    "its header), exact from the sampler; RSS: resident pages of the process "
	    "(/proc statm at the tick), with code, stacks and the allocator's free memory%s%s",
	    m->peak_time_known ? "" : "; at peaks: each process at its own peak, summed",
	    m->at_peak.requested.cut_top ? "; ^: top cut at the block peak, which the requested "
	    "bytes cannot exceed" : "");
	fputc('\n', f);
}

/* The histogram's table: the first column named first (time: lifetimes in
 * ns; allocs: counts; else sizes in bytes). */
enum hist_unit { HIST_BYTES, HIST_TIME, HIST_COUNT };

static void hist_table(FILE *f, const struct mt_fold_mem_hist *h, const char *first,
		       enum hist_unit unit, size_t width)
{
	struct mt_fold_table t = { .cols = 5, .align = "lrLrL", .indent = 2 };
	char a[32], b[80];
	if (!mt_fold_table_row(&t)) {
		mt_fold_table_put(&t, 0, first);
		mt_fold_table_put(&t, 1, "objects");
		mt_fold_table_put(&t, 2, "interval");
		mt_fold_table_put(&t, 3, "bytes");
		mt_fold_table_put(&t, 4, "interval");
	}
	for (unsigned k = 0; k < h->n; k++) {
		const struct mt_fold_mem_bucket *x = &h->v[k];
		double l = mt_fold_hist_lo(x->b), u = mt_fold_hist_hi(x->b);
		char lo[32], hi[32];
		if (mt_fold_table_row(&t))
			break;
		if (unit == HIST_TIME) {
			mt_fold_format_time(lo, l);
			mt_fold_format_time(hi, u);
		} else {
			mt_fold_format_amount(lo, l, unit == HIST_BYTES);
			mt_fold_format_amount(hi, u, unit == HIST_BYTES);
		}
		mt_fold_table_putf(&t, 0, "[%s, %s)", lo, hi);
		mt_fold_table_put(&t, 1, mt_fold_format_amount(a, x->objects.value, 0));
		mt_fold_table_put(&t, 2, iv(b, sizeof(b), &x->objects, 0));
		mt_fold_table_put(&t, 3, mt_fold_format_amount(a, x->bytes.value, 1));
		mt_fold_table_put(&t, 4, iv(b, sizeof(b), &x->bytes, 1));
	}
	mt_fold_table_print(f, &t, width);
}

void mt_fold_render_hists(FILE *f, const struct mt_fold_snapshot *s, size_t width)
{
	const struct mt_fold_memory *m = s->mem;
	int conf = (int)lround(100 * s->opt.conf);
	if (!m)
		return;
	if (s->opt.sizes) {
		mt_fold_say(f, width, "sizes: sampled allocations by requested size, objects and "
		    "requested bytes with %d%% intervals", conf);
		hist_table(f, &m->sizes, "size", HIST_BYTES, width);
		if (!m->sizes.n)
			mt_fold_say(f, width, "  (no allocation)");
		fputc('\n', f);
	}
	if (s->opt.lifetimes) {
		char a[32], b[32], i1[80], i2[80];
		mt_fold_say(f, width, "lifetimes: sampled allocations freed, from allocation to free; "
		    "%s freed %s, %s not freed %s (live at the end, or freed unseen)",
		    mt_fold_format_amount(a, m->freed.value, 0), iv(i1, sizeof(i1), &m->freed, 0),
		    mt_fold_format_amount(b, m->not_freed.value, 0),
		    iv(i2, sizeof(i2), &m->not_freed, 0));
		hist_table(f, &m->life_ns, "time", HIST_TIME, width);
		fputc('\n', f);
		if (m->has_seq) {
			mt_fold_say(f, width, "allocations by the same thread between allocation and free "
			    "(0: a temporary)");
			hist_table(f, &m->life_allocs, "allocations", HIST_COUNT, width);
		} else {
			mt_fold_say(f, width, "allocations in between: the input has no seq= weights");
		}
		fputc('\n', f);
	}
}

void mt_fold_render_site_hists(FILE *f, const struct mt_fold_snapshot *s,
			       const struct mt_fold_sites *t, uint32_t top, size_t width)
{
	if (!s->opt.sizes && !s->opt.lifetimes)
		return;
	uint32_t n = top && t->nsites > top ? top : t->nsites;
	if (n > 5)
		n = 5;
	for (uint32_t i = 0; i < n; i++) {
		const struct mt_fold_alloc_site *site = &t->sites[i];
		for (int k = 0; k < 2; k++) {
			if (!(k ? s->opt.lifetimes : s->opt.sizes))
				continue;
			struct mt_fold_mem_hist h;
			if (mt_fold_memory_cells(&h, &site->cells,
						 k ? MT_FOLD_CELL_LIFE_NS : MT_FOLD_CELL_SIZES,
						 s->opt.conf, s->wfb))
				return;
			mt_fold_say(f, width, "%s of %s%s%s%s:", k ? "lifetimes" : "sizes", site->name,
			    *site->loc ? " (" : "", site->loc, *site->loc ? ")" : "");
			hist_table(f, &h, k ? "time" : "size", k ? HIST_TIME : HIST_BYTES, width);
			if (!h.n)
				mt_fold_say(f, width, k ? "(none freed)" : "(none)");
			mt_fold_memory_hist_free(&h);
		}
	}
	if (n)
		fputc('\n', f);
}
