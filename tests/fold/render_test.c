/* Renderings: the table and the JSON of one snapshot agree (both parsed
 * back), JSON escaping, collapsed format, number formatting (diffs:
 * diff_test.c). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>

#include "tests/fold/helpers.h"
#include "tests/fold/json_min.h"
#include "tests/fold/sim.h"

/* A seeded sample-mode capture: 40 sites of very different sizes on two
 * threads, with the sampler's totals. */
static char *synthetic_capture(uint64_t seed)
{
	struct sim_rng rng;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint64_t bytes[2] = { 0 }, allocs[2] = { 0 };
	sim_seed(&rng, seed);
	fprintf(f, "# mt-unwind 1\n");
	for (int site = 0; site < 40; site++) {
		double mu = pow(10, 4.0 * site / 39);	/* 1 to 10000 points */
		unsigned tid = 100 + (unsigned)(site % 2);
		uint64_t size = 16u << (site % 9);
		uint64_t k = sim_poisson(&rng, mu), t = 0;
		bytes[site % 2] += (uint64_t)(mu * 524288);
		allocs[site % 2] += (uint64_t)(mu * 524288) / size;
		while (k) {	/* one to three points per sampled allocation */
			uint64_t pts = k < 3 ? k : 1 + sim_next(&rng) % 3;
			fprintf(f, "alloc\t100/%u\t%llu\tw\"\\x\tsize=%llu ptr=0x%llx points=%llu "
				"rate=524288\tmain;layer_%d;leaf_%d end=complete\n", tid,
				(unsigned long long)t, (unsigned long long)size,
				(unsigned long long)(0x1000 + site * 100000 + t),
				(unsigned long long)pts, site % 5, site);
			k -= pts;
			t++;
		}
	}
	for (int i = 0; i < 2; i++)
		fprintf(f, "totals\t100/%d\t999\tw\tscope=thread alloc_bytes=%llu allocs=%llu frees=0 "
			"freed_bytes=0 peak_bytes=%llu\t end=none\n", 100 + i,
			(unsigned long long)bytes[i], (unsigned long long)allocs[i],
			(unsigned long long)bytes[i]);
	fprintf(f, "totals\t100/100\t999\tw\tscope=process alloc_bytes=%llu allocs=%llu frees=0 "
		"freed_bytes=0 peak_bytes=%llu peak_error=4096\t end=none\n",
		(unsigned long long)(bytes[0] + bytes[1]), (unsigned long long)(allocs[0] + allocs[1]),
		(unsigned long long)(bytes[0] + bytes[1]));
	fclose(f);
	return buf;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* "32.0 MiB", "512 B", "16.5 k", "129": the number in base units. */
static double parse_amount(const char **pp)
{
	static const struct { const char *u; double f; } units[] = {
		{ "B", 1 }, { "KiB", 1024 }, { "MiB", 1048576 }, { "GiB", 1073741824.0 },
		{ "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
	};
	char *end;
	const char *p = skip_ws(*pp);
	double v = strtod(p, &end);
	cr_assert(end != p, "no number at '%.20s'", p);
	p = end;
	const char *q = skip_ws(p);
	size_t n = 0;
	while (isalpha((unsigned char)q[n]))
		n++;
	for (size_t i = 0; n && i < sizeof(units) / sizeof(*units); i++)
		if (strlen(units[i].u) == n && !strncmp(q, units[i].u, n)) {
			v *= units[i].f;
			p = q + n;
		}
	*pp = p;
	return v;
}

/* Three significant digits: within half a unit of the last digit. */
static void agrees(double table, double json, const char *what, const char *site)
{
	cr_assert(fabs(table - json) <= 0.005 * fabs(json) + 0.5, "%s of %s: table %.6g, json %.6g",
		  what, site, table, json);
}

static const struct jm *num(const struct jm *o, const char *key)
{
	const struct jm *v = jm_get(o, key);
	cr_assert_not_null(v, "no %s", key);
	return v;
}

/* One "value rse interval n" group of a table row against a JSON value. */
static void check_cells(const char **pp, const struct jm *jv, const char *site, double events)
{
	const char *p = *pp;
	agrees(parse_amount(&p), num(jv, "value")->num, "value", site);
	p = skip_ws(p);
	if (!strncmp(p, "exact", 5)) {
		cr_assert(num(jv, "exact")->num == 1);
		p = skip_ws(p + 5);
		cr_assert_eq(*p, '-');
		p++;
	} else {
		cr_assert(num(jv, "exact")->num == 0);
		if (*p == '-') {
			p++;
		} else {
			char *end;
			double rse = strtod(p, &end);
			cr_assert_eq(*end, '%');
			cr_assert(fabs(rse - 100 * num(jv, "rse")->num) <= 0.05 + 1e-9, "rse of %s", site);
			p = end + 1;
		}
		p = skip_ws(p);
		cr_assert_eq(*p, '[', "interval of %s at '%.20s'", site, p);
		p++;
		agrees(parse_amount(&p), num(jv, "lo")->num, "lo", site);
		cr_assert_eq(*p, ',');
		p++;
		agrees(parse_amount(&p), num(jv, "hi")->num, "hi", site);
		cr_assert_eq(*p, ']');
		p++;
		/* a top cut at the exact total: '^' in the table, the samples'
		 * own top beside it in JSON, never below it */
		const struct jm *hs = jm_get(jv, "hi_samples");
		cr_assert_eq(*p == '^', hs != NULL, "cut mark of %s", site);
		if (*p == '^') {
			cr_assert(hs->num >= num(jv, "hi")->num);
			p++;
		}
	}
	char *end;
	unsigned long long n = strtoull(skip_ws(p), &end, 10);
	/* n: samples behind a sampled figure, events behind an exact one */
	cr_assert_eq((double)n, num(jv, "exact")->num == 1 ? events : num(jv, "n")->num,
		     "n of %s", site);
	p = end;
	if (*p == '?')
		p++;
	*pp = p;
}

Test(render, table_and_json_agree)
{
	char *text = synthetic_capture(2026);
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 25);
	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	char err[256];
	struct jm *j = jm_parse(json, err);
	cr_assert_not_null(j, "JSON does not parse: %s", err);

	const struct jm *rows = jm_get(jm_get(j, "sites"), "rows");
	cr_assert_not_null(rows);
	cr_assert_eq(rows->nkids, 25);
	const char *line = strstr(table, "\ntotal req B ");
	cr_assert_not_null(line, "no table header in:\n%s", table);
	line = strchr(line + 1, '\n') + 1;
	for (size_t r = 0; r < rows->nkids; r++) {
		const struct jm *row = &rows->kids[r];
		const char *name = num(row, "name")->str, *p = line;
		check_cells(&p, num(row, "total"), name, num(row, "events")->num);
		check_cells(&p, num(row, "self"), name, num(row, "self_events")->num);
		p = skip_ws(p);
		const char *nl = strchr(p, '\n');
		cr_assert(nl && (size_t)(nl - p) == strlen(name) && !strncmp(p, name, strlen(name)),
			  "row %zu: table site '%.*s', json '%s'", r, (int)(nl - p), p, name);
		line = nl + 1;
	}
	cr_assert(*line == 0, "table has more rows: '%s'", line);

	/* Header: the "all" row's exact bytes, estimate, interval and verdict. */
	const struct jm *all = jm_get(jm_get(jm_get(j, "all"), "estimates"), "alloc_bytes");
	const char *a = strstr(table, "\nall ");
	cr_assert_not_null(a);
	a += 5;
	char *end;
	double exact = strtod(a, &end);
	cr_assert_eq(exact, num(all, "exact_value")->num);
	a = end;
	agrees(parse_amount(&a), num(all, "value")->num, "all value", "all");
	a = skip_ws(a);
	cr_assert_eq(*a++, '[');
	agrees(parse_amount(&a), num(all, "lo")->num, "all lo", "all");
	cr_assert_eq(*a++, ',');
	agrees(parse_amount(&a), num(all, "hi")->num, "all hi", "all");
	cr_assert_eq(*a++, ']');
	a = skip_ws(a);
	cr_assert_eq(!strncmp(a, "in ", 3), num(all, "in_interval")->num == 1);
	/* The truth was built into the capture: it should be covered. */
	cr_assert(num(all, "in_interval")->num == 1);
	cr_assert_eq(jm_get(j, "threads")->nkids, 2);
	cr_assert_str_eq(jm_get(&jm_get(j, "threads")->kids[0], "comm")->str, "w\"\\x");

	jm_free(j);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	free(text);
}

Test(render, table_and_json_agree_in_trace_mode)
{
	/* Exact rows: "exact", no interval, n = events; JSON must say the same. */
	struct mt_fold_profile *p = profile_of(
		"alloc\t5/5\t1\tt\tsize=1000 ptr=0x10 every=1\tmain;a end=complete\n"
		"alloc\t5/5\t2\tt\tsize=3000 ptr=0x20 every=1\tmain;a end=complete\n"
		"alloc\t5/5\t3\tt\tsize=500 ptr=0x30 every=1\tmain;b;a end=complete\n", 0);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	char *table = render(mt_fold_render_table, s), *json = render(mt_fold_render_json, s);
	char err[256];
	struct jm *j = jm_parse(json, err);
	cr_assert_not_null(j, "%s", err);
	const struct jm *rows = jm_get(jm_get(j, "sites"), "rows");
	const char *line = strchr(strstr(table, "\ntotal req B ") + 1, '\n') + 1;
	for (size_t r = 0; r < rows->nkids; r++) {
		const struct jm *row = &rows->kids[r];
		const char *p2 = line;
		check_cells(&p2, num(row, "total"), num(row, "name")->str, num(row, "events")->num);
		check_cells(&p2, num(row, "self"), num(row, "name")->str, num(row, "self_events")->num);
		line = strchr(line, '\n') + 1;
	}
	cr_assert(*line == 0);
	/* a is the leaf of all three: 4500 bytes self and total, 3 events;
	 * it sorts before main (same total, more self). */
	cr_assert_eq(rows->nkids, 3);
	cr_assert_str_eq(num(&rows->kids[0], "name")->str, "a");
	cr_assert_eq(num(num(&rows->kids[0], "total"), "value")->num, 4500);
	cr_assert_eq(num(num(&rows->kids[0], "self"), "value")->num, 4500);
	cr_assert_eq(num(&rows->kids[0], "self_events")->num, 3);
	cr_assert_str_eq(num(&rows->kids[2], "name")->str, "b");
	cr_assert_eq(num(num(&rows->kids[2], "total"), "value")->num, 500);
	cr_assert_eq(num(&rows->kids[2], "self_events")->num, 0);
	jm_free(j);
	free(table);
	free(json);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* Trace mode every=1 is exact over what was captured; with events lost on
 * the way the total says so: a lower bound for what was allocated, off
 * either way for what is in use (lost frees raise it). */
Test(render, exact_total_with_lost_events_says_so)
{
	const char *events =
		"alloc\t5/5\t1\tt\tsize=1000 ptr=0x10 every=1\tmain;a end=complete\n"
		"alloc\t5/5\t2\tt\tsize=3000 ptr=0x20 every=1\tmain;a end=complete\n";
	struct mt_fold_profile *whole = profile_of(events, 0);
	struct mt_fold_snapshot *s = snapshot_of(whole, MT_FOLD_ALLOC_BYTES, 0);
	char *table = render(mt_fold_render_table, s);
	cr_assert(strstr(table, "total alloc_bytes: 3.91 KiB (exact)\n"), "%s", table);
	free(table);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(whole);

	char text[512];
	snprintf(text, sizeof(text), "%slost\t5/5\t3\tt\tcount=7 reason=kernel\t end=none\n", events);
	struct mt_fold_profile *p = profile_of(text, 0);
	s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
	table = render(mt_fold_render_table, s);
	cr_assert(strstr(table, "(exact over the events captured; 7 events lost: at least this)"),
		  "%s", table);
	free(table);
	mt_fold_snapshot_free(s);
	s = snapshot_of(p, MT_FOLD_INUSE_BYTES, 0);
	table = render(mt_fold_render_table, s);
	cr_assert(strstr(table, "7 events lost: off either way)"), "%s", table);
	free(table);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* every=N > 1 is systematic: the table says its intervals may not hold. */
Test(render, every_n_notes_systematic_sampling)
{
	for (int every = 1; every <= 2; every++) {
		char text[256];
		snprintf(text, sizeof(text),
			 "alloc\t5/5\t1\tt\tsize=1000 ptr=0x10 every=%d\tmain;a end=complete\n", every);
		char *table = table_of(text, MT_FOLD_ALLOC_BYTES);
		int noted = strstr(table, "not a random 1 in N") != NULL;
		cr_assert_eq(noted, every > 1, "every=%d:\n%s", every, table);
		free(table);
	}
}

/* A forked image's allocs - frees counts frees of its parent's blocks: a
 * lower bound of its own live objects.  The check says fork (JSON null)
 * while that bound is under the interval's top, OUT above it. */
Test(render, forked_images_check_live_objects_one_sided)
{
	static const char *const cases[][2] = {
		/* 2 own blocks live; its 2 frees were of inherited blocks */
		{ "allocs=2 frees=2", "fork" },
		/* more live objects than its own 2 could leave: OUT */
		{ "allocs=5 frees=0", "OUT" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "alloc\t7/7\t1\tc\tsize=100 ptr=0x10 points=100 rate=1\tmain;a end=complete\n"
			 "alloc\t7/7\t2\tc\tsize=100 ptr=0x20 points=100 rate=1\tmain;a end=complete\n"
			 "totals\t7/7\t3\tc\tscope=process alloc_bytes=200 %s freed_bytes=0 "
			 "peak_bytes=0 peak_error=0 forked=1 rate=1\t end=none\n",
			 cases[i][0]);
		struct mt_fold_profile *p = profile_of(text, 0);
		struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_INUSE_OBJECTS, 0);
		char *table = render(mt_fold_render_table, s);
		char want[64];
		snprintf(want, sizeof(want), " %s\n", cases[i][1]);
		const char *at_end = strstr(table, "all (at end)");
		cr_assert(at_end && strstr(at_end, want), "%s: want '%s' in\n%s", cases[i][0],
			  cases[i][1], table);
		char *json = render(mt_fold_render_json, s);
		cr_assert(strstr(json, "\"forked_lines\": 1"), "%s", json);
		cr_assert(strstr(json, i == 0 ? "\"exact_value\": 0, \"in_interval\": null}"
					      : "\"exact_value\": 5, \"in_interval\": false}"),
			  "%s", json);
		/* No bound from allocs - frees on the total. */
		cr_assert_eq(s->total.hi, 2, "total interval top %g", s->total.hi);
		free(json);
		free(table);
		mt_fold_snapshot_free(s);
		mt_fold_profile_free(p);
	}
}

/* Under the exact totals, a line counts the OUT checks: among sampled
 * estimates, with what chance alone gives; among exact figures, apart. */
Test(render, the_table_counts_out_checks_against_chance)
{
	/* 2 points at 512 KiB (1 MiB estimated) where 10 MiB were allocated:
	 * the bytes check is OUT; the object count (2 allocations, 2 seen)
	 * is in. */
	const char *sampled =
		"alloc\t7/7\t1\tc\tsize=600000 ptr=0x10 points=1 rate=524288\tmain;a end=complete\n"
		"alloc\t7/7\t2\tc\tsize=600000 ptr=0x20 points=1 rate=524288\tmain;a end=complete\n"
		"totals\t7/7\t3\tc\tscope=process alloc_bytes=10485760 allocs=2 frees=0 "
		"freed_bytes=0 peak_bytes=0 peak_error=0 rate=524288\t end=none\n";
	char *table = table_of(sampled, MT_FOLD_ALLOC_BYTES);
	cr_assert(strstr(table, "checks: 2 of 5 sampled estimates OUT; about 0.3 expected by chance "
				"at the 95% level"), "%s", table);
	cr_assert(!strstr(table, "exact figures differ"), "%s", table);
	free(table);

	/* --rate 1: nothing sampled; one allocation the sampler counted
	 * and the input lacks. */
	const char *exact =
		"alloc\t7/7\t1\tc\tsize=100 ptr=0x10 points=100 rate=1\tmain;a end=complete\n"
		"totals\t7/7\t3\tc\tscope=process alloc_bytes=200 allocs=2 frees=0 "
		"freed_bytes=0 peak_bytes=0 peak_error=0 rate=1\t end=none\n";
	table = table_of(exact, MT_FOLD_ALLOC_BYTES);
	cr_assert(strstr(table, "checks: 5 of 5 exact figures differ from the sampler's: never by "
				"chance"), "%s", table);
	cr_assert(!strstr(table, "sampled estimates OUT"), "%s", table);
	free(table);
}

Test(render, json_string_escaping)
{
	static const char nasty[] = "q\"b\\s\x01\ttab\x7f caf\xc3\xa9 bad\xff\xc3 end";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	mt_fold_json_string(f, nasty);
	fclose(f);
	char err[256];
	struct jm *j = jm_parse(buf, err);
	cr_assert_not_null(j, "%s: %s", buf, err);
	/* Everything survives except invalid UTF-8, which becomes U+FFFD. */
	cr_assert_str_eq(j->str, "q\"b\\s\x01\ttab\x7f caf\xc3\xa9 bad\xef\xbf\xbd\xef\xbf\xbd end");
	jm_free(j);
	free(buf);
}

Test(render, collapsed_follows_flamegraph_conventions)
{
	char *text = synthetic_capture(7);
	struct mt_fold_profile *p = profile_of(text, MT_FOLD_PREFIX_COMM);
	char *out = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	/* "root;...;leaf N": one space before a positive integer, root first
	 * (the comm prefix), sorted, no empty frames. */
	int lines = 0;
	const char *prev = NULL;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"), lines++) {
		char *sp = strrchr(l, ' ');
		cr_assert_not_null(sp);
		for (char *d = sp + 1; *d; d++)
			cr_assert(isdigit((unsigned char)*d), "count '%s'", sp + 1);
		cr_assert(sp[1] != '0');
		cr_assert(!strncmp(l, "w\"\\x;main;layer_", 16), "'%s'", l);
		cr_assert_null(strstr(l, ";;"));
		if (prev)
			cr_assert(strcmp(prev, l) < 0);
		prev = l;
	}
	cr_assert_geq(lines, 35);
	free(out);
	mt_fold_profile_free(p);
	free(text);
}

struct too_big_seen {
	int calls;
	char stack[64], count[48];
};

static void note_too_big(void *ctx, const char *stack, size_t len, const char *count)
{
	struct too_big_seen *t = ctx;
	t->calls++;
	snprintf(t->stack, sizeof(t->stack), "%.*s", (int)len, stack);
	snprintf(t->count, sizeof(t->count), "%s", count);
}

/* Collapsed counts are 64-bit: from 2^63 up they are written digit for
 * digit (not llround's 9223372036854775808), UINT64_MAX still fits, and a
 * stack past it, exact or estimated, is left out and named, never wrapped. */
Test(render, collapsed_counts_at_the_64_bit_edge)
{
	struct mt_fold_profile *p = profile_of("# mt-unwind 1\n"
		"alloc\t1/1\t1\tp\tsize=9223372036854775809 every=1\ta end=complete\n"
		"alloc\t1/1\t2\tp\tsize=18446744073709551615 every=1\tb end=complete\n"
		"alloc\t1/1\t3\tp\tsize=18446744073709551615 every=1\tc end=complete\n"
		"alloc\t1/1\t4\tp\tsize=1 every=1\tc end=complete\n", 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct too_big_seen t = { 0 };
	cr_assert_eq(mt_fold_render_collapsed_checked(f, p, MT_FOLD_ALLOC_BYTES, note_too_big, &t),
		     MT_FOLD_ERANGE);
	fclose(f);
	cr_assert_str_eq(buf, "a 9223372036854775809\nb 18446744073709551615\n");
	cr_assert_eq(t.calls, 1);
	cr_assert_str_eq(t.stack, "c");
	cr_assert_str_eq(t.count, "18446744073709551616");
	free(buf);
	mt_fold_profile_free(p);

	/* Estimated: every=4 of 2^62 + 2^62 bytes is 2^65. */
	p = profile_of("# mt-unwind 1\n"
		"alloc\t1/1\t1\tp\tsize=4611686018427387904 every=4\td end=complete\n"
		"alloc\t1/1\t2\tp\tsize=4611686018427387904 every=4\td end=complete\n"
		"alloc\t1/1\t3\tp\tsize=1 every=4\te end=complete\n", 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	memset(&t, 0, sizeof(t));
	cr_assert_eq(mt_fold_render_collapsed_checked(f, p, MT_FOLD_ALLOC_BYTES, note_too_big, &t),
		     MT_FOLD_ERANGE);
	fclose(f);
	cr_assert_str_eq(buf, "e 4\n");
	cr_assert_eq(t.calls, 1);
	cr_assert_str_eq(t.stack, "d");
	cr_assert_str_eq(t.count, "36893488147419103232");
	free(buf);
	mt_fold_profile_free(p);
}

Test(render, amounts)
{
	char b[32];
	cr_assert_str_eq(mt_fold_format_amount(b, 0, 1), "0 B");
	cr_assert_str_eq(mt_fold_format_amount(b, 512, 1), "512 B");
	cr_assert_str_eq(mt_fold_format_amount(b, 33554432, 1), "32.0 MiB");
	cr_assert_str_eq(mt_fold_format_amount(b, 4194304, 1), "4.00 MiB");
	cr_assert_str_eq(mt_fold_format_amount(b, 1048575, 1), "1.00 MiB");
	cr_assert_str_eq(mt_fold_format_amount(b, 1536, 1), "1.50 KiB");
	cr_assert_str_eq(mt_fold_format_amount(b, 16500, 0), "16.5 k");
	cr_assert_str_eq(mt_fold_format_amount(b, 129, 0), "129");
	cr_assert_str_eq(mt_fold_format_amount(b, 3.25, 0), "3.25");
	cr_assert_str_eq(mt_fold_format_amount(b, -2048, 1), "-2.00 KiB");
}


Test(render, json_stacks_are_the_collapsed_output)
{
	char *text = synthetic_capture(99);
	struct mt_fold_profile *p = profile_of(text, MT_FOLD_PREFIX_TID);
	struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 5);
	char *json = render(mt_fold_render_json, s), *folded = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	char err[256];
	struct jm *j = jm_parse(json, err);
	cr_assert_not_null(j, "%s", err);
	const struct jm *stacks = jm_get(j, "stacks");
	cr_assert_not_null(stacks);
	/* Rebuild the collapsed text from the JSON: it must be identical. */
	char *re = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&re, &len);
	for (size_t i = 0; i < stacks->nkids; i++) {
		const struct jm *st = &stacks->kids[i];
		fprintf(f, "%s %.0f\n", num(st, "stack")->str, num(st, "value")->num);
		cr_assert(num(st, "n")->num >= 1);
	}
	fclose(f);
	cr_assert_gt(stacks->nkids, 30);
	cr_assert_str_eq(re, folded);
	free(re);
	free(folded);
	free(json);
	jm_free(j);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	free(text);
}
