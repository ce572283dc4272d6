/* mt-unwind -j's pool (symbolize/jobs.h): walks made on its threads, with
 * their per-thread memos in front of the shared module caches, give the
 * frames, ends and step counts of mt_unwind_walk on one thread, over
 * thousands of walks in real ELF files (libc, a fixture) from seeded
 * random dumps; and a change of a space's mappings between two drains is
 * seen (the memo is keyed by the space's generation). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/jobs.h"
#include "symbolize/maps.h"
#include "symbolize/unwind.h"
#include "tests/symbolize/unwind_util.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define NCASES 3000
#define DUMP_WORDS 96
#define DEPTH 64

struct world {
	struct mt_unwind_modules *ms;
	struct mt_unwind_maps *mp;
};

struct exec_seg {
	uint64_t vaddr, len, off;
};

static struct exec_seg exec_segment(const char *path)
{
	struct exec_seg s = { 0 };
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s", path);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	cr_assert(e && elf_getphdrnum(e, &n) == 0);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			s = (struct exec_seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
	}
	elf_end(e);
	close(fd);
	cr_assert_neq(s.len, 0, "%s: no executable segment", path);
	return s;
}

static const uint64_t base[2] = { 0x7f1000000000, 0x7f2000000000 };

/* path's executable segment mapped at base + at in both spaces. */
static void world_new(struct world *w, const char *path, uint64_t at)
{
	cr_assert_eq(mt_unwind_modules_new(&w->ms, NULL), 0);
	cr_assert_eq(mt_unwind_maps_new(&w->mp, w->ms), 0);
	struct exec_seg s = exec_segment(path);
	for (int p = 0; p < 2; p++)
		cr_assert_eq(mt_unwind_maps_mmap(w->mp, 100 + p, base[p] + at, s.len, s.off,
						 path, NULL, 0, 1), 0);
}

static void world_free(struct world *w)
{
	mt_unwind_maps_free(w->mp);
	mt_unwind_modules_free(w->ms);
}

struct walkcase {
	int pid;
	struct mt_unwind_regs regs;
	uint64_t dump[DUMP_WORDS];
	struct mt_unwind_memory mem;
	/* the pool's */
	struct mt_unwind_frame fr[DEPTH];
	unsigned n;
	int end, other;
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Leaf pcs all over [base + at, + len), dumps with return addresses into
 * it among random words: walks of every length and end. */
static void make_cases(struct walkcase *c, uint64_t at, uint64_t len, uint64_t seed)
{
	struct exec_seg s = { .vaddr = at, .len = len };
	uint64_t x = seed;
	for (int i = 0; i < NCASES; i++) {
		c[i].pid = 100 + (int)(rnd(&x) & 1);
		uint64_t b = base[c[i].pid - 100];
		for (int k = 0; k < DUMP_WORDS; k++) {
			uint64_t r = rnd(&x);
			c[i].dump[k] = (r & 3) ? b + s.vaddr + (rnd(&x) % s.len) : r >> (r & 63);
		}
		c[i].mem = (struct mt_unwind_memory){ .base = 0x7ffd00000000 + 64 * (uint64_t)i,
						      .data = (void *)c[i].dump,
						      .size = sizeof(c[i].dump) };
		memset(&c[i].regs, 0, sizeof(c[i].regs));
		c[i].regs.valid = 0x1ffff;
		for (int r = 0; r < MT_UNWIND_NREGS; r++)
			c[i].regs.r[r] = c[i].mem.base + 8 * (rnd(&x) % DUMP_WORDS);
		c[i].regs.r[MT_UNWIND_REG_SP] = c[i].mem.base;
		c[i].regs.r[MT_UNWIND_REG_RA] = b + s.vaddr + rnd(&x) % s.len;
	}
}

/* The pool's walks of c against one thread's in a world of its own. */
static void check(struct walkcase *c, struct world *pool_world, struct world *ref,
		  const struct mt_unwind_stats *pool_st)
{
	struct mt_unwind_stats st = { 0 };
	uint64_t frames = 0, long_walks = 0;
	for (int i = 0; i < NCASES; i++) {
		struct mt_unwind_frame fr[DEPTH];
		unsigned n = 0;
		int end = mt_unwind_walk(ref->mp, mt_unwind_maps_space(ref->mp, (uint32_t)c[i].pid),
					 &c[i].regs, &c[i].mem, fr, DEPTH, &n, &st);
		cr_assert_eq(c[i].end, end, "case %d: end %d, one thread's %d", i, c[i].end, end);
		cr_assert_eq(c[i].n, n, "case %d: %u frames, one thread's %u", i, c[i].n, n);
		cr_assert_eq(c[i].other, st.last_other_stack, "case %d", i);
		for (unsigned k = 0; k < n; k++) {
			cr_assert_eq(c[i].fr[k].pc, fr[k].pc, "case %d frame %u", i, k);
			cr_assert_eq(c[i].fr[k].lookup, fr[k].lookup, "case %d frame %u", i, k);
			cr_assert_eq(!c[i].fr[k].map, !fr[k].map, "case %d frame %u", i, k);
			if (fr[k].map) {
				cr_assert_eq(c[i].fr[k].map->start, fr[k].map->start);
				cr_assert_str_eq(c[i].fr[k].map->path, fr[k].map->path);
				cr_assert_eq(c[i].fr[k].map->delta, fr[k].map->delta);
			}
		}
		frames += n;
		long_walks += n > 3;
	}
	(void)pool_world;
	cr_assert_eq(pool_st->steps_cfi, st.steps_cfi);
	cr_assert_eq(pool_st->steps_fp, st.steps_fp);
	cr_assert_eq(pool_st->rules_failed, st.rules_failed);
	cr_assert_eq(pool_st->memo_hits + pool_st->memo_misses, frames,
		     "one memo probe per frame");
	cr_assert_gt(long_walks, NCASES / 50, "the cases walk: %" PRIu64 " of %d longer than 3",
		     long_walks, NCASES);
}

static uint64_t run_pool(struct mt_unwind_jobs *j, struct world *w, struct walkcase *c,
			 struct mt_unwind_stats *st)
{
	for (int i = 0; i < NCASES; i++) {
		struct mt_unwind_job_out out = { .frames = c[i].fr, .nframes = &c[i].n,
						 .end = &c[i].end, .other_stack = &c[i].other };
		cr_assert_eq(mt_unwind_jobs_add(j, mt_unwind_maps_space(w->mp, (uint32_t)c[i].pid),
						&c[i].regs, &c[i].mem, &out), 0);
	}
	cr_assert_eq(mt_unwind_jobs_pending(j), NCASES);
	uint64_t frames = mt_unwind_jobs_drain(j, st);
	cr_assert_eq(mt_unwind_jobs_pending(j), 0);
	return frames;
}

Test(jobs, pool_walks_equal_one_threads)
{
	static struct walkcase c[NCASES];
	struct world pw, ref;
	struct exec_seg ls = exec_segment(LIBC);
	world_new(&pw, LIBC, ls.vaddr);
	world_new(&ref, LIBC, ls.vaddr);
	struct mt_unwind_jobs *j;
	cr_assert_eq(mt_unwind_jobs_new(&j, 3, pw.mp, DEPTH), 0);
	make_cases(c, ls.vaddr, ls.len, 0x9e3779b97f4a7c15ULL);
	struct mt_unwind_stats st = { 0 };
	uint64_t frames = run_pool(j, &pw, c, &st);
	check(c, &pw, &ref, &st);
	uint64_t sum = 0;
	for (int i = 0; i < NCASES; i++)
		sum += c[i].n;
	cr_assert_eq(frames, sum);
	/* Again, the memos warm: the same walks. */
	memset(&st, 0, sizeof(st));
	for (int i = 0; i < NCASES; i++)
		c[i].n = 0, c[i].end = -1;
	run_pool(j, &pw, c, &st);
	check(c, &pw, &ref, &st);
	cr_assert_gt(st.memo_hits, 0);
	mt_unwind_jobs_free(j);
	world_free(&pw);
	world_free(&ref);
}

/* Between two drains, the file mapped at libc's place in both spaces
 * changes (the fixture's code replaces libc's first pages): the second
 * round's walks, the first round's again, are in the new file, as a walk
 * on one thread sees it, not what the memos held. */
Test(jobs, a_change_of_mappings_between_drains_is_seen)
{
	static struct walkcase c[NCASES];
	const char *fix = ut_fixture("unwind_recursion");
	struct exec_seg ls = exec_segment(LIBC), fs = exec_segment(fix);
	struct world pw, ref;
	world_new(&pw, LIBC, ls.vaddr);
	world_new(&ref, fix, ls.vaddr);
	struct mt_unwind_jobs *j;
	cr_assert_eq(mt_unwind_jobs_new(&j, 2, pw.mp, DEPTH), 0);
	make_cases(c, ls.vaddr, fs.len, 12345);
	struct mt_unwind_stats st = { 0 };
	run_pool(j, &pw, c, &st);
	for (int p = 0; p < 2; p++)
		cr_assert_eq(mt_unwind_maps_mmap(pw.mp, 100 + p, base[p] + ls.vaddr, fs.len, fs.off,
						 fix, NULL, 0, 1), 0);
	memset(&st, 0, sizeof(st));
	run_pool(j, &pw, c, &st);
	check(c, &pw, &ref, &st);
	mt_unwind_jobs_free(j);
	world_free(&pw);
	world_free(&ref);
}

Test(jobs, cpus)
{
	cpu_set_t set;
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	cr_assert_eq(mt_unwind_jobs_cpus(), (unsigned)CPU_COUNT(&set));
}
