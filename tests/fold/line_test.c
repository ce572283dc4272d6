/* Parsing mt-unwind lines: every kind, the format's edge cases, and each
 * kind of rejection. */
#include <criterion/criterion.h>
#include <string.h>

#include "fold/line.h"

static int parse(const char *s, struct mt_fold_event *ev)
{
	return mt_fold_line_parse(s, strlen(s), ev);
}

static int str_is(struct mt_fold_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.s, want, s.len) == 0;
}

Test(line, alloc_sample_mode)
{
	struct mt_fold_event ev;
	cr_assert_eq(parse("alloc\t4121/4123\t18273645123\tdemo\tsize=32 ptr=0x55d0c3a012a0 "
			   "fn=malloc points=1 rate=524288\t_start;__libc_start_main;main;"
			   "xstrdup_[i];malloc end=complete", &ev), 0);
	cr_assert_eq(ev.kind, MT_FOLD_ALLOC);
	cr_assert_eq(ev.pid, 4121);
	cr_assert_eq(ev.tid, 4123);
	cr_assert_eq(ev.time, 18273645123ull);
	cr_assert(str_is(ev.comm, "demo"));
	cr_assert_eq(ev.size, 32);
	cr_assert_eq(ev.ptr, 0x55d0c3a012a0ull);
	cr_assert_eq(ev.points, 1);
	cr_assert_eq(ev.rate, 524288);
	cr_assert(str_is(ev.fn, "malloc"));
	cr_assert(str_is(ev.frames, "_start;__libc_start_main;main;xstrdup_[i];malloc"));
	cr_assert(str_is(ev.end, "complete"));
}

Test(line, frames_with_spaces_and_srcline)
{
	struct mt_fold_event ev;
	cr_assert_eq(parse("alloc\t1/1\t0\t?\tsize=8 every=1\tmain (a.c:3);operator new(unsigned "
			   "long) (new_op.cc:50) end=depth", &ev), 0);
	cr_assert(str_is(ev.frames, "main (a.c:3);operator new(unsigned long) (new_op.cc:50)"));
	cr_assert(str_is(ev.end, "depth"));
	cr_assert_eq(ev.every, 1);
	cr_assert(ev.have & MT_FOLD_W_EVERY);
	cr_assert(!(ev.have & MT_FOLD_W_PTR));	/* ptr is optional: unknown */
}

Test(line, stackless_free_totals_sample_lost)
{
	struct mt_fold_event ev;
	cr_assert_eq(parse("free\t4121/4121\t18273649001\tdemo\tptr=0x55d0c3a012a0 rate=524288\t "
			   "end=none", &ev), 0);
	cr_assert_eq(ev.kind, MT_FOLD_FREE);
	cr_assert_eq(ev.frames.len, 0);
	cr_assert(str_is(ev.end, "none"));

	cr_assert_eq(parse("totals\t4121/4121\t18273700000\tdemo\tscope=process alloc_bytes=3221225 "
			   "allocs=100000 frees=99000 freed_bytes=3200000 peak_bytes=1048576 "
			   "peak_error=65536\t end=none", &ev), 0);
	cr_assert(ev.process_scope);
	cr_assert_eq(ev.alloc_bytes, 3221225);
	cr_assert_eq(ev.allocs, 100000);
	cr_assert_eq(ev.frees, 99000);
	cr_assert_eq(ev.freed_bytes, 3200000);
	cr_assert_eq(ev.peak_bytes, 1048576);
	cr_assert_eq(ev.peak_error, 65536);

	cr_assert_eq(parse("sample\t9/9\t5\tcc1\tevent=cpu-clock period=1001001 freq=1\tmain;f "
			   "end=complete", &ev), 0);
	cr_assert_eq(ev.period, 1001001);
	cr_assert_eq(ev.freq, 1);
	cr_assert(str_is(ev.event, "cpu-clock"));

	cr_assert_eq(parse("lost\t9/9\t5\tcc1\tcount=17 reason=ring\t end=none", &ev), 0);
	cr_assert_eq(ev.count, 17);
	cr_assert(str_is(ev.reason, "ring"));
}

Test(line, unknown_keys_are_ignored)
{
	struct mt_fold_event ev;
	cr_assert_eq(parse("alloc\t1/2\t3\tx\tsize=4 future_key=whatever points=2 rate=8 "
			   "align=16\tf end=complete", &ev), 0);
	cr_assert_eq(ev.points, 2);
}

Test(line, rejections)
{
	static const struct { const char *line; int err; const char *key; } t[] = {
		{ "alloc\t1/1\t0\tx\tsize=1 every=1", MT_FOLD_EFIELDS, NULL },
		{ "bogus", MT_FOLD_EFIELDS, NULL },
		{ "", MT_FOLD_EFIELDS, NULL },
		{ "malloc\t1/1\t0\tx\tsize=1 every=1\tf end=complete", MT_FOLD_EKIND, NULL },
		{ "alloc\t1\t0\tx\tsize=1 every=1\tf end=complete", MT_FOLD_EPID, NULL },
		{ "alloc\t-1/1\t0\tx\tsize=1 every=1\tf end=complete", MT_FOLD_EPID, NULL },
		{ "alloc\t1/99999999999\t0\tx\tsize=1 every=1\tf end=complete", MT_FOLD_EPID, NULL },
		{ "alloc\t1/1\t1e9\tx\tsize=1 every=1\tf end=complete", MT_FOLD_ETIME, NULL },
		{ "alloc\t1/1\t0\tx\tsize\tf end=complete", MT_FOLD_EWEIGHT, NULL },
		{ "alloc\t1/1\t0\tx\tSize=1 every=1\tf end=complete", MT_FOLD_EWEIGHT, NULL },
		{ "alloc\t1/1\t0\tx\tsize=-1 every=1\tf end=complete", MT_FOLD_EVALUE, "size" },
		{ "alloc\t1/1\t0\tx\tsize=1 every=1 ptr=55\tf end=complete", MT_FOLD_EVALUE, "ptr" },
		{ "alloc\t1/1\t0\tx\tsize=99999999999999999999 every=1\tf end=complete",
		  MT_FOLD_EVALUE, "size" },
		{ "alloc\t1/1\t0\tx\tsize=1 points=0 rate=8\tf end=complete", MT_FOLD_EVALUE, "points" },
		{ "alloc\t1/1\t0\tx\tsize=1 points=1 rate=0\tf end=complete", MT_FOLD_EVALUE, "rate" },
		{ "alloc\t1/1\t0\tx\tsize=1 every=0\tf end=complete", MT_FOLD_EVALUE, "every" },
		{ "alloc\t1/1\t0\tx\tsize=1 points=1\tf end=complete", MT_FOLD_EMISSING, "rate" },
		{ "alloc\t1/1\t0\tx\tevery=1\tf end=complete", MT_FOLD_EMISSING, "size" },
		{ "free\t1/1\t0\tx\trate=8\t end=none", MT_FOLD_EMISSING, "ptr" },
		{ "sample\t1/1\t0\tx\tevent=cycles\tf end=complete", MT_FOLD_EMISSING, "period" },
		{ "lost\t1/1\t0\tx\treason=x\t end=none", MT_FOLD_EMISSING, "count" },
		{ "totals\t1/1\t0\tx\tscope=thread alloc_bytes=1\t end=none", MT_FOLD_EMISSING, "allocs" },
		{ "totals\t1/1\t0\tx\tscope=world alloc_bytes=1\t end=none", MT_FOLD_EVALUE, "scope" },
		{ "alloc\t1/1\t0\tx\tsize=1 every=1\tf", MT_FOLD_ESTACK, NULL },
		{ "alloc\t1/1\t0\tx\tsize=1 every=1\tf end_complete", MT_FOLD_ESTACK, NULL },
		{ "alloc\t1/1\t0\tx\tsize=1 every=1\tf end=", MT_FOLD_ESTACK, NULL },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct mt_fold_event ev;
		int err = parse(t[i].line, &ev);
		cr_assert_eq(err, t[i].err, "line %zu '%s': got %d (%s), want %d", i, t[i].line, err,
			     mt_fold_strerror(err), t[i].err);
		if (t[i].key)
			cr_assert_str_eq(ev.bad_key, t[i].key, "line %zu", i);
	}
}

/* A NUL byte anywhere in a line: refused, whatever field it is in (a name
 * copied with it would end there: the JSON name cut short). */
Test(line, nul_byte_is_rejected)
{
	static const char good[] = "alloc\t1/1\t0\tx\tsize=1 every=1\tmain;f end=complete";
	struct mt_fold_event ev;
	char line[sizeof(good)];
	cr_assert_eq(mt_fold_line_parse(good, sizeof(good) - 1, &ev), 0);
	for (size_t i = 0; i < sizeof(good) - 1; i++) {
		memcpy(line, good, sizeof(good));
		line[i] = '\0';
		int err = mt_fold_line_parse(line, sizeof(good) - 1, &ev);
		cr_assert_eq(err, MT_FOLD_ENUL, "NUL at %zu: got %d (%s)", i, err, mt_fold_strerror(err));
	}
	cr_assert_str_eq(mt_fold_strerror(MT_FOLD_ENUL), "a NUL byte in the line");
}

Test(line, header_versions)
{
	cr_assert_eq(mt_fold_line_header("# mt-unwind 1", 13), 1);
	cr_assert_eq(mt_fold_line_header("# mt-unwind 2", 13), MT_FOLD_EVERSION);
	cr_assert_eq(mt_fold_line_header("# mt-unwind options: --addrs", 28), 0);
	cr_assert_eq(mt_fold_line_header("# comment", 9), 0);
	cr_assert_str_eq(mt_fold_strerror(MT_FOLD_EFIELDS), "expected 6 TAB-separated fields");
	cr_assert_str_eq(mt_fold_strerror(-999), "unknown error");
}
