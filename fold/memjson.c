/* JSON of the timeline, peak, temporaries, histograms, reconciliation. */
#include "fold/memjson.h"

#include "fold/render.h"

#include <stdlib.h>
#include <string.h>

int mt_fold_json_has_memory(const struct mt_fold_snapshot *s)
{
	const struct mt_fold_memory *m = s->mem;
	return m && (m->has_ticks || m->has_seq || m->at >= 0 || s->opt.sizes ||
		     s->opt.lifetimes);
}

static void since(FILE *f, uint64_t t, uint64_t start)
{
	fprintf(f, "%llu", (unsigned long long)(t > start ? t - start : 0));
}

static void hist(FILE *f, const struct mt_fold_mem_hist *h)
{
	fputc('[', f);
	for (unsigned k = 0; k < h->n; k++) {
		const struct mt_fold_mem_bucket *x = &h->v[k];
		fprintf(f, "%s{\"lo\": ", k ? ", " : "");
		mt_fold_json_num(f, mt_fold_hist_lo(x->b));
		fputs(", \"hi\": ", f);
		mt_fold_json_num(f, mt_fold_hist_hi(x->b));
		fputs(", \"objects\": ", f);
		mt_fold_json_value(f, &x->objects);
		fputs(", \"bytes\": ", f);
		mt_fold_json_value(f, &x->bytes);
		fputc('}', f);
	}
	fputc(']', f);
}

/* The arrays of one series: "t", "live", "alloc_bytes", ["alloc_block_bytes"], "rss". */
static void series(FILE *f, const struct mt_fold_tick *p, size_t n, uint64_t start, int block,
		   int has_rss, const char *ind)
{
	fputs("\"t\": [", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		since(f, p[i].time, start);
	}
	fprintf(f, "],\n%s\"live\": [", ind);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)p[i].live);
	fprintf(f, "],\n%s\"alloc_bytes\": [", ind);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)p[i].alloc_bytes);
	if (block) {
		fprintf(f, "],\n%s\"alloc_block_bytes\": [", ind);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)p[i].block_bytes);
	}
	fprintf(f, "],\n%s\"rss\": [", ind);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? "," : "", f);
		if (p[i].rss == MT_FOLD_RSS_NONE || !has_rss)
			fputs("null", f);
		else
			fprintf(f, "%llu", (unsigned long long)p[i].rss);
	}
	fputc(']', f);
}

static void recon(FILE *f, const struct mt_fold_mem_recon *r)
{
	fputs("\"requested\": ", f);
	mt_fold_json_value(f, &r->requested);
	if (r->has_block)
		fprintf(f, ", \"block\": %lld", (long long)r->block);
	else
		fputs(", \"block\": null", f);
	if (r->has_rss)
		fprintf(f, ", \"rss\": %llu", (unsigned long long)r->rss);
	else
		fputs(", \"rss\": null", f);
}

void mt_fold_json_memory(FILE *f, const struct mt_fold_snapshot *s)
{
	const struct mt_fold_memory *m = s->mem;
	if (!mt_fold_json_has_memory(s))
		return;
	if (m->has_ticks) {
		fprintf(f, ",\n \"timeline\": {\"time_unit\": \"ns\", \"start\": %llu, \"processes\": [",
			(unsigned long long)m->start);
		for (size_t i = 0; i < m->nprocs; i++) {
			const struct mt_fold_mem_proc *p = &m->procs[i];
			fprintf(f, "%s\n  {\"pid\": %u, \"comm\": ", i ? "," : "", p->pid);
			mt_fold_json_string(f, p->comm);
			fprintf(f, ", \"points_read\": %zu,\n   ", p->points_read);
			series(f, p->pts, p->n, m->start, 1, p->has_rss, "   ");
			fprintf(f, ",\n   \"peak\": {\"bytes\": %llu, \"error\": %llu, \"time\": ",
				(unsigned long long)p->peak, (unsigned long long)p->peak_error);
			since(f, p->peak_time, m->start);
			fputs("}}", f);
		}
		fputs("],\n  \"total\": {", f);
		series(f, m->total, m->ntotal, m->start, 0, m->total_has_rss, "   ");
		fprintf(f, ",\n   \"peak\": {\"bytes\": %llu, \"error\": %llu, \"time\": ",
			(unsigned long long)m->total_peak, (unsigned long long)m->total_peak_error);
		since(f, m->total_peak_time, m->start);
		fputs("}}}", f);
	}
	if (m->has_ticks || m->at >= 0) {
		fputs(",\n \"peak\": {\"at\": ", f);
		if (m->at >= 0)
			fprintf(f, "%lld", (long long)m->at);
		else
			fputs("null", f);
		fputs(", \"bytes\": ", f);
		mt_fold_json_value(f, &m->peak_bytes);
		fputs(",\n  \"objects\": ", f);
		mt_fold_json_value(f, &m->peak_objects);
		fputc('}', f);
	}
	if (m->has_seq) {
		fputs(",\n \"temporary\": {\"bytes\": ", f);
		mt_fold_json_value(f, &m->temp_bytes);
		fputs(",\n  \"objects\": ", f);
		mt_fold_json_value(f, &m->temp_objects);
		fputs(", \"share\": ", f);
		mt_fold_json_num(f, m->temp_share);
		fputc('}', f);
	}
	fputs(",\n \"sizes\": ", f);
	hist(f, &m->sizes);
	fputs(",\n \"lifetimes\": {\"ns\": ", f);
	hist(f, &m->life_ns);
	fputs(",\n  \"allocations_between\": ", f);
	hist(f, &m->life_allocs);
	fputs(",\n  \"freed\": ", f);
	mt_fold_json_value(f, &m->freed);
	fputs(", \"not_freed\": ", f);
	mt_fold_json_value(f, &m->not_freed);
	fputc('}', f);
	if (m->has_ticks) {
		fputs(",\n \"reconciliation\": {\"peak\": {\"time\": ", f);
		if (m->peak_time_known)
			since(f, m->peak_moment, m->start);
		else
			fputs("null", f);
		fputs(", ", f);
		recon(f, &m->at_peak);
		fputs("},\n  \"end\": {", f);
		recon(f, &m->at_end);
		fputs("}}", f);
	}
}

int mt_fold_json_site_hists(FILE *f, const struct mt_fold_snapshot *s,
			    const struct mt_fold_alloc_site *site)
{
	if (!mt_fold_json_has_memory(s))
		return 0;
	struct mt_fold_mem_hist h;
	if (mt_fold_memory_cells(&h, &site->cells, MT_FOLD_CELL_SIZES, s->opt.conf, s->wfb))
		return MT_FOLD_ENOMEM;
	fputs(",\n   \"sizes\": ", f);
	hist(f, &h);
	mt_fold_memory_hist_free(&h);
	if (mt_fold_memory_cells(&h, &site->cells, MT_FOLD_CELL_LIFE_NS, s->opt.conf, s->wfb))
		return MT_FOLD_ENOMEM;
	fputs(", \"lifetimes\": ", f);
	hist(f, &h);
	mt_fold_memory_hist_free(&h);
	return 0;
}

static const struct mt_fold_snapshot *live_sort_s;

static int live_key_cmp(const void *a, const void *b)
{
	return strcmp(live_sort_s->live_keys[*(const uint32_t *)a],
		      live_sort_s->live_keys[*(const uint32_t *)b]);
}

static void live_points(FILE *f, const struct mt_fold_live_pt *v, uint32_t n)
{
	fputc('[', f);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%s[%u, ", i ? ", " : "", v[i].bucket);
		mt_fold_json_num(f, v[i].bytes);
		fputs(", ", f);
		mt_fold_json_num(f, v[i].objects);
		fprintf(f, ", %llu]", (unsigned long long)v[i].n);
	}
	fputc(']', f);
}

int mt_fold_json_live(FILE *f, const struct mt_fold_snapshot *s)
{
	const struct mt_fold_live *l = &s->live;
	if (!l->buckets)
		return 0;
	uint32_t *order = malloc(((size_t)l->nrows + 1) * sizeof(*order));
	if (!order)
		return MT_FOLD_ENOMEM;
	for (uint32_t i = 0; i < l->nrows; i++)
		order[i] = i;
	live_sort_s = s;
	if (l->nrows)
		qsort(order, l->nrows, sizeof(*order), live_key_cmp);
	fprintf(f, ",\n \"live_over_time\": {\"time_unit\": \"ns\", \"start\": %llu, "
		"\"end\": %llu, \"buckets\": %u,\n  \"allocations\": %llu, \"no_ptr_allocations\": "
		"%llu,\n  \"moments\": [", (unsigned long long)l->start,
		(unsigned long long)l->end, l->buckets, (unsigned long long)l->allocations,
		(unsigned long long)s->counts.no_ptr_allocs);
	for (unsigned b = 0; b < l->buckets; b++) {
		fputs(b ? "," : "", f);
		since(f, l->moments[b], l->start);
	}
	fputs("],\n  \"stacks\": [", f);
	for (uint32_t k = 0; k < l->nrows; k++) {
		const struct mt_fold_live_row *r = &l->rows[order[k]];
		fputs(k ? ",\n   {\"stack\": " : "\n   {\"stack\": ", f);
		mt_fold_json_string(f, s->live_keys[order[k]]);
		fputs(", \"live\": ", f);
		live_points(f, r->live, r->nlive);
		fputs(",\n    \"allocated\": ", f);
		live_points(f, r->alloc, r->nalloc);
		fputc('}', f);
	}
	fputs("]}", f);
	free(order);
	return 0;
}
