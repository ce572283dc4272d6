/* events.c on synthetic streams: a perf pipe stream of mt's capture events
 * (docs/formats/capture-events.md) with registers and no stacks, written
 * with the codec's writer and read back with its reader, each sample given
 * to the events; the lines that come out are compared whole. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codec/perf_stream.h"
#include "symbolize/arch.h"
#include "symbolize/emit.h"
#include "symbolize/events.h"
#include "symbolize/maps.h"
#include "symbolize/module.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER)
static const int regs_used[] = {
	MT_UNWIND_PREG_AX, MT_UNWIND_PREG_CX, MT_UNWIND_PREG_DX, MT_UNWIND_PREG_SI,
	MT_UNWIND_PREG_DI, MT_UNWIND_PREG_SP, MT_UNWIND_PREG_R8, MT_UNWIND_PREG_R9,
	MT_UNWIND_PREG_R10, MT_UNWIND_PREG_R11, MT_UNWIND_PREG_R12, MT_UNWIND_PREG_R13,
	MT_UNWIND_PREG_R14, MT_UNWIND_PREG_R15,
};
#define NREGS (sizeof(regs_used) / sizeof(regs_used[0]))

/* A register value for a sample: perf index and value. */
struct reg { int idx; uint64_t v; };

struct rig {
	int in_fd, out_fd;
	struct mt_perf_writer *w;
	uint64_t mask;
	const char *const *names;
	size_t nr_names;
};

/* Events named names, whose samples have the registers of regs_used but
 * those in drop (a mask of perf indices). */
static void rig_start_without(struct rig *r, const char *const *names, size_t n, uint64_t drop)
{
	memset(r, 0, sizeof(*r));
	r->names = names;
	r->nr_names = n;
	for (size_t i = 0; i < NREGS; i++)
		r->mask |= 1ULL << regs_used[i];
	r->mask &= ~drop;
	r->in_fd = memfd_create("events-in", 0);
	r->out_fd = memfd_create("events-out", 0);
	cr_assert(r->in_fd >= 0 && r->out_fd >= 0);
	cr_assert_eq(mt_perf_writer_new(&r->w, r->in_fd, "in"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(r->w), 0);
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
					     .sample_type = ST, .sample_regs_user = r->mask,
					     .sample_period = 1, .sample_id_all = 1 };
		uint64_t id = 100 + i;
		cr_assert_eq(mt_perf_writer_attr(r->w, &a, &id, 1), 0);
		cr_assert_eq(mt_perf_writer_event_name(r->w, id, names[i]), 0);
	}
}

static void rig_start(struct rig *r, const char *const *names, size_t n)
{
	rig_start_without(r, names, n, 0);
}

/* A sample of event ev (an index into names) by pid/tid at time t. */
static void rig_sample(struct rig *r, size_t ev, uint32_t pid, uint32_t tid, uint64_t t,
		       const struct reg *regs, size_t nr)
{
	uint64_t rec[64] = { 0 };
	size_t k = 1;
	rec[k++] = 100 + ev;				/* IDENTIFIER */
	rec[k++] = (uint64_t)tid << 32 | pid;		/* TID */
	rec[k++] = t;					/* TIME */
	rec[k++] = 1;					/* PERIOD */
	rec[k++] = PERF_SAMPLE_REGS_ABI_64;		/* REGS_USER */
	for (int bit = 0; bit < 64; bit++) {
		if (!(r->mask & (1ULL << bit)))
			continue;
		uint64_t v = 0;
		for (size_t i = 0; i < nr; i++)
			if (regs[i].idx == bit)
				v = regs[i].v;
		rec[k++] = v;
	}
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE,
				       .misc = PERF_RECORD_MISC_USER,
				       .size = (uint16_t)(8 * k) };
	memcpy(rec, &h, sizeof(h));
	cr_assert_eq(mt_perf_writer_record(r->w, (const void *)rec), 0);
}

/* A COMM record, exec or not. */
static void rig_comm(struct rig *r, uint32_t pid, const char *comm, int exec, uint64_t t)
{
	uint64_t rec[16] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_COMM,
				       .misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0 };
	uint32_t ids[2] = { pid, pid };
	memcpy((char *)rec + 8, ids, 8);
	strncpy((char *)rec + 16, comm, 15);
	size_t k = 4;					/* header, pid/tid, 16 bytes of name */
	rec[k++] = (uint64_t)pid << 32 | pid;		/* sample_id: TID */
	rec[k++] = t;					/* TIME */
	rec[k++] = 100;					/* IDENTIFIER */
	h.size = (uint16_t)(8 * k);
	memcpy(rec, &h, sizeof(h));
	cr_assert_eq(mt_perf_writer_record(r->w, (const void *)rec), 0);
}

static void no_stack(void *ctx, struct mt_unwind_out *out, const struct mt_perf_sample *smp,
		     int drop_sampler)
{
	(void)ctx;
	(void)smp;
	mt_unwind_out_str(out, drop_sampler ? "\tmarker;main end=complete\n"
					    : "\tmain end=complete\n");
}

/* Read the stream back through the events; @return : their output, and
 * *st their counts (malloc'd text). */
static char *rig_run(struct rig *r, struct mt_unwind_events_stats *st)
{
	cr_assert_eq(mt_perf_writer_free(r->w), 0);
	cr_assert_eq(lseek(r->in_fd, 0, SEEK_SET), 0);
	struct mt_perf_reader *rd;
	cr_assert_eq(mt_perf_reader_fdopen(&rd, r->in_fd, "in"), 0);
	struct mt_unwind_modules *mods;
	struct mt_unwind_maps *maps;
	cr_assert_eq(mt_unwind_modules_new(&mods, NULL), 0);
	cr_assert_eq(mt_unwind_maps_new(&maps, mods), 0);
	struct mt_unwind_symopts sym = { 0 };
	struct mt_unwind_emit e;
	mt_unwind_emit_init(&e, r->out_fd, 0, &sym, maps, mods);
	struct mt_unwind_events *ev;
	struct mt_unwind_events_opts o = { 0 };
	cr_assert_eq(mt_unwind_events_new(&ev, &o, rd, NULL, &e, maps, no_stack, NULL), 0);
	struct mt_perf_item it;
	uint64_t last = 0;
	while (mt_perf_reader_next(rd, &it) == 1) {
		if (it.kind != MT_PERF_ITEM_RECORD)
			continue;
		const struct perf_event_header *h = it.header;
		if (h->type == PERF_RECORD_SAMPLE) {
			struct mt_perf_sample smp;
			cr_assert_eq(mt_perf_sample_parse(rd, h, &smp), 0);
			mt_unwind_events_sample(ev, &smp);
			last = smp.time;
		} else if (h->type == PERF_RECORD_COMM) {
			struct mt_perf_comm c;
			cr_assert_eq(mt_perf_comm_parse(rd, h, &c), 0);
			mt_unwind_events_comm(ev, &c);
			cr_assert_eq(mt_unwind_maps_comm(maps, c.pid, c.tid, c.comm, c.exec), 0);
		}
	}
	mt_unwind_events_finish(ev, last);
	cr_assert_eq(mt_unwind_emit_finish(&e), 0);
	cr_assert(!mt_unwind_events_nomem(ev) && !e.nomem);
	*st = *mt_unwind_events_stats(ev);
	mt_unwind_events_free(ev);
	mt_unwind_emit_release(&e);
	mt_unwind_maps_free(maps);
	mt_unwind_modules_free(mods);
	mt_perf_reader_free(rd);
	off_t n = lseek(r->out_fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)n + 1);
	cr_assert(text);
	cr_assert_eq(pread(r->out_fd, text, (size_t)n, 0), n);
	close(r->in_fd);
	close(r->out_fd);
	return text;
}

static const char *const trace_names[] = {
	"probe_libc:malloc", "probe_libc:malloc__return",
	"probe_libc:calloc", "probe_libc:calloc__return",
	"probe_libc:free",
};
enum { MALLOC, MALLOC_RET, CALLOC, CALLOC_RET, FREE };

Test(events, trace_entry_and_return_make_one_line_with_the_entry_time)
{
	struct rig r;
	rig_start(&r, trace_names, 5);
	rig_sample(&r, MALLOC, 7, 8, 1000, (struct reg[]){ { MT_UNWIND_PREG_DI, 100 } }, 1);
	rig_sample(&r, MALLOC_RET, 7, 8, 1005, (struct reg[]){ { MT_UNWIND_PREG_AX, 0x1234 } }, 1);
	rig_sample(&r, FREE, 7, 8, 1010, (struct reg[]){ { MT_UNWIND_PREG_DI, 0x1234 } }, 1);
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	cr_assert_str_eq(out,
		"alloc\t7/8\t1000\t?\tsize=100 ptr=0x1234 fn=malloc every=1\tmain end=complete\n"
		"free\t7/8\t1010\t?\tptr=0x1234 every=1\t end=none\n");
	cr_assert_eq(st.unpaired, 0);
	free(out);
}

Test(events, a_lost_return_still_writes_the_call_with_no_pointer)
{
	struct rig r;
	rig_start(&r, trace_names, 5);
	rig_sample(&r, MALLOC, 7, 8, 1000, (struct reg[]){ { MT_UNWIND_PREG_DI, 64 } }, 1);
	rig_sample(&r, MALLOC_RET, 7, 9, 1002, (struct reg[]){ { MT_UNWIND_PREG_AX, 0x99 } }, 1);
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	/* The return came on another thread: it pairs with nothing, and the
	 * entry is written at the end with ptr=0x0. */
	cr_assert_str_eq(out,
		"alloc\t7/8\t1000\t?\tsize=64 ptr=0x0 fn=malloc every=1\tmain end=complete\n");
	cr_assert_eq(st.unpaired, 2, "one return without entry, one entry without return");
	free(out);
}

Test(events, a_calloc_whose_size_overflows_and_fails_is_no_allocation)
{
	struct rig r;
	rig_start(&r, trace_names, 5);
	uint64_t big = 1ULL << 33;
	rig_sample(&r, CALLOC, 7, 7, 1000,
		   (struct reg[]){ { MT_UNWIND_PREG_DI, big }, { MT_UNWIND_PREG_SI, big } }, 2);
	rig_sample(&r, CALLOC_RET, 7, 7, 1001, (struct reg[]){ { MT_UNWIND_PREG_AX, 0 } }, 1);
	rig_sample(&r, CALLOC, 7, 7, 1002,
		   (struct reg[]){ { MT_UNWIND_PREG_DI, 3 }, { MT_UNWIND_PREG_SI, 5 } }, 2);
	rig_sample(&r, CALLOC_RET, 7, 7, 1003, (struct reg[]){ { MT_UNWIND_PREG_AX, 0x40 } }, 1);
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	cr_assert_str_eq(out,
		"alloc\t7/7\t1002\t?\tsize=15 ptr=0x40 fn=calloc every=1\tmain end=complete\n");
	free(out);
}

static const char *const sample_names[] = { "mt:alloc", "mt:free", "mt:totals", "mt:tick" };
enum { ALLOC, FREE_MARK, TOTALS, TICK };

/* A totals report: scope 1 thread, 2 process, 3 thread at an exec. */
static void totals(struct rig *r, uint32_t pid, uint32_t tid, uint64_t t, uint64_t scope,
		   uint64_t bytes, uint64_t allocs)
{
	struct reg regs[] = {
		{ MT_UNWIND_PREG_DI, scope }, { MT_UNWIND_PREG_SI, bytes },
		{ MT_UNWIND_PREG_DX, allocs }, { MT_UNWIND_PREG_R10, scope == 2 ? pid : tid },
		{ MT_UNWIND_PREG_R15, 0x6d74ULL << 48 | 4096 },
	};
	rig_sample(r, TOTALS, pid, tid, t, regs, sizeof(regs) / sizeof(regs[0]));
}

Test(events, a_thread_report_at_a_failed_exec_is_superseded_by_the_next)
{
	struct rig r;
	rig_start(&r, sample_names, 3);
	totals(&r, 5, 6, 100, 3, 1000, 10);	/* at an exec that then failed */
	totals(&r, 5, 6, 200, 1, 1500, 15);	/* the thread's exit */
	totals(&r, 5, 5, 300, 2, 1500, 15);	/* the process's */
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	cr_assert_str_eq(out,
		"totals\t5/6\t200\t?\tscope=thread alloc_bytes=1500 allocs=15 frees=0 freed_bytes=0"
		" peak_bytes=0 alloc_marks=0 free_marks=0 rate=4096\t end=none\n"
		"totals\t5/5\t300\t?\tscope=process alloc_bytes=1500 allocs=15 frees=0"
		" freed_bytes=0 peak_bytes=0 peak_error=0 alloc_marks=0 free_marks=0"
		" rate=4096\t end=none\n");
	cr_assert_eq(st.superseded, 1);
	free(out);
}

Test(events, an_exec_ends_the_image_and_releases_its_held_totals)
{
	struct rig r;
	rig_start(&r, sample_names, 3);
	rig_comm(&r, 5, "before", 0, 10);
	totals(&r, 5, 5, 100, 2, 64, 1);	/* held until the exec */
	rig_comm(&r, 5, "after", 1, 150);
	rig_sample(&r, ALLOC, 5, 5, 200,
		   (struct reg[]){ { MT_UNWIND_PREG_DI, 32 }, { MT_UNWIND_PREG_SI, 0x10 },
				   { MT_UNWIND_PREG_DX, 1 }, { MT_UNWIND_PREG_CX, 4096 } }, 4);
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	/* The new image made a marker call and sent no totals before the end:
	 * a `lost` line says its allocations are in no totals. */
	cr_assert_str_eq(out,
		"totals\t5/5\t100\tbefore\tscope=process alloc_bytes=64 allocs=1 frees=0"
		" freed_bytes=0 peak_bytes=0 peak_error=0 alloc_marks=0 free_marks=0"
		" rate=4096\t end=none\n"
		"alloc\t5/5\t200\tafter\tsize=32 ptr=0x10 fn=malloc points=1 rate=4096 seq=0"
		"\tmarker;main end=complete\n"
		"lost\t5/5\t200\tafter\tcount=1 reason=no-totals\t end=none\n");
	cr_assert_eq(st.silent_images, 1);
	free(out);
}

/* mt:alloc and mt:free carry seq in R9: the alloc line and its free's
 * say it; a capture whose masks lack R9 (an older mt-capture) says none. */
Test(events, alloc_and_free_lines_carry_seq_when_the_capture_has_r9)
{
	for (int with = 1; with >= 0; with--) {
		struct rig r;
		rig_start_without(&r, sample_names, 4, with ? 0 : 1ULL << MT_UNWIND_PREG_R9);
		rig_sample(&r, ALLOC, 5, 6, 200,
			   (struct reg[]){ { MT_UNWIND_PREG_DI, 32 }, { MT_UNWIND_PREG_SI, 0x10 },
					   { MT_UNWIND_PREG_DX, 1 }, { MT_UNWIND_PREG_CX, 4096 },
					   { MT_UNWIND_PREG_R9, 17 } }, 5);
		rig_sample(&r, FREE_MARK, 5, 6, 210,
			   (struct reg[]){ { MT_UNWIND_PREG_DI, 0x10 }, { MT_UNWIND_PREG_SI, 32 },
					   { MT_UNWIND_PREG_CX, 4096 }, { MT_UNWIND_PREG_R9, 17 } }, 4);
		struct mt_unwind_events_stats st;
		char *out = rig_run(&r, &st);
		cr_assert_str_eq(out, with ?
			"alloc\t5/6\t200\t?\tsize=32 ptr=0x10 fn=malloc points=1 rate=4096 seq=17"
			"\tmarker;main end=complete\n"
			"free\t5/6\t210\t?\tptr=0x10 rate=4096 seq=17\t end=none\n"
			"lost\t5/5\t210\t?\tcount=1 reason=no-totals\t end=none\n" :
			"alloc\t5/6\t200\t?\tsize=32 ptr=0x10 fn=malloc points=1 rate=4096"
			"\tmarker;main end=complete\n"
			"free\t5/6\t210\t?\tptr=0x10 rate=4096\t end=none\n"
			"lost\t5/5\t210\t?\tcount=1 reason=no-totals\t end=none\n");
		free(out);
	}
}

/* mt:tick: a line of the process (PID/PID from R10, whatever thread sent
 * it), its comm, live signed (two's complement in DI), rss left out when
 * the sampler could not read it (UINT64_MAX). */
Test(events, a_tick_is_a_process_line_with_signed_live_and_optional_rss)
{
	struct rig r;
	rig_start(&r, sample_names, 4);
	rig_comm(&r, 5, "prog", 1, 10);
	struct reg tick[] = {
		{ MT_UNWIND_PREG_DI, (uint64_t)-4096 }, { MT_UNWIND_PREG_SI, 1000 },
		{ MT_UNWIND_PREG_DX, 3 }, { MT_UNWIND_PREG_CX, 2 }, { MT_UNWIND_PREG_R8, 1100 },
		{ MT_UNWIND_PREG_R9, 65536 }, { MT_UNWIND_PREG_AX, 800 },
		{ MT_UNWIND_PREG_R10, 5 }, { MT_UNWIND_PREG_R11, 150 },
		{ MT_UNWIND_PREG_R12, 262144 }, { MT_UNWIND_PREG_R13, 1 },
		{ MT_UNWIND_PREG_R14, 10000000 }, { MT_UNWIND_PREG_R15, 0x6d74ULL << 48 | 4096 },
	};
	rig_sample(&r, TICK, 5, 9, 200, tick, 13);	/* sent by the ticker, tid 9 */
	tick[0].v = 100;
	tick[5].v = UINT64_MAX;
	rig_sample(&r, TICK, 5, 9, 300, tick, 13);
	struct mt_unwind_events_stats st;
	char *out = rig_run(&r, &st);
	cr_assert_str_eq(out,
		"tick\t5/5\t200\tprog\tlive=-4096 alloc_bytes=1000 alloc_block_bytes=1100 allocs=3"
		" frees=2 rss=65536 peak=800 peak_time=150 peak_error=262144 period=10000000"
		"\t end=none\n"
		"tick\t5/5\t300\tprog\tlive=100 alloc_bytes=1000 alloc_block_bytes=1100 allocs=3"
		" frees=2 peak=800 peak_time=150 peak_error=262144 period=10000000\t end=none\n"
		/* a tick is a marker call: its image ran the sampler, and sent
		 * no totals */
		"lost\t5/5\t300\tprog\tcount=1 reason=no-totals\t end=none\n");
	free(out);
}
