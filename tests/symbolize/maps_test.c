/* Address spaces: mmap replacing what it overlaps, fork, exec, lookups;
 * and the small containers (hash map, time ordering). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/hashmap.h"
#include "symbolize/maps.h"
#include "symbolize/order.h"
#include "symbolize/unwind.h"
#include "tests/symbolize/unwind_util.h"

static struct mt_unwind_modules *ms;
static struct mt_unwind_maps *mp;

static void setup(void)
{
	cr_assert_eq(mt_unwind_modules_new(&ms, NULL), 0);
	cr_assert_eq(mt_unwind_maps_new(&mp, ms), 0);
}

static void teardown(void)
{
	mt_unwind_maps_free(mp);
	mt_unwind_modules_free(ms);
}

TestSuite(maps, .init = setup, .fini = teardown);

static const char *path_at(uint32_t pid, uint64_t addr)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, pid);
	if (!sp)
		return NULL;
	struct mt_unwind_map *m = mt_unwind_maps_find(mp, sp, addr);
	return m ? m->path : NULL;
}

Test(maps, mmap_overlap_splits)
{
	cr_assert_eq(mt_unwind_maps_mmap(mp, 10, 0x1000, 0x5000, 0, "/a", NULL, 0, 1), 0);
	/* A new mapping in the middle replaces that part only. */
	cr_assert_eq(mt_unwind_maps_mmap(mp, 10, 0x2000, 0x1000, 0, "/b", NULL, 0, 1), 0);
	cr_assert_str_eq(path_at(10, 0x1fff), "/a");
	cr_assert_str_eq(path_at(10, 0x2000), "/b");
	cr_assert_str_eq(path_at(10, 0x3000), "/a");
	cr_assert_null(path_at(10, 0x6000));
	cr_assert_null(path_at(10, 0xfff));
	/* The tail keeps its file offset right. */
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, 10);
	cr_assert_eq(mt_unwind_maps_find(mp, sp, 0x3000)->pgoff, 0x2000);
	/* A data mapping over part of it removes the code there. */
	cr_assert_eq(mt_unwind_maps_mmap(mp, 10, 0x4000, 0x1000, 0, "/c", NULL, 0, 0), 0);
	cr_assert_null(path_at(10, 0x4800));
	cr_assert_str_eq(path_at(10, 0x5800), "/a");
	cr_assert_null(path_at(11, 0x2000), "other processes see nothing");
}

/* The executable PT_LOAD of the ELF file path: *vaddr, *len, *off. */
static void exec_segment(const char *path, uint64_t *vaddr, uint64_t *len, uint64_t *off)
{
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s", path);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	cr_assert(e && elf_getphdrnum(e, &n) == 0);
	*len = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*vaddr = ph.p_vaddr;
			*len = ph.p_memsz;
			*off = ph.p_offset;
		}
	}
	elf_end(e);
	close(fd);
	cr_assert_neq(*len, 0, "%s: no executable segment", path);
}

/* glibc's vfork pops its return address into rdi before the system call
 * (CFA = rsp, return address in rdi), and every child that vfork starts
 * (posix_spawn: make, shells, python's subprocess) runs on from there.
 * A sample in that window must go on to the caller: its sp is the same as
 * vfork's, which is otherwise a bad frame. */
Test(maps, walk_through_a_popped_return_address)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	const uint64_t base = 0x7f0000000000;
	uint64_t vaddr, len, off;
	exec_segment(libc, &vaddr, &len, &off);
	cr_assert_eq(mt_unwind_maps_mmap(mp, 30, base + vaddr, len, off, libc, NULL, 0, 1), 0);
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, 30);
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, libc, NULL, 0);
	uint64_t vfork = ut_symbol(m, "vfork"), caller = ut_symbol(m, "malloc");
	cr_assert(vfork && caller);
	uint64_t pc = 0;
	for (uint64_t a = vfork; a < vfork + 16 && !pc; a++) {
		const struct mt_unwind_rule *r = mt_unwind_rule_get(m, a);
		if (r->status == MT_UNWIND_RULE_OK && !r->cfa_is_expr &&
		    r->cfa_reg == MT_UNWIND_REG_SP && r->cfa_off == 0)
			pc = a;
	}
	if (!pc)
		cr_skip_test("this libc's vfork does not pop its return address");
	const struct mt_unwind_rule *r = mt_unwind_rule_get(m, pc);
	cr_assert_eq(r->kind[MT_UNWIND_REG_RA], MT_UNWIND_REG, "return address: rule kind %d",
		     r->kind[MT_UNWIND_REG_RA]);
	cr_assert_eq(r->off[MT_UNWIND_REG_RA], 5, "return address in rdi (DWARF register 5)");
	uint64_t stack[64] = { 0 };	/* the caller's caller: 0, the end */
	struct mt_unwind_memory mem = { .base = 0x7ffd0000, .data = (void *)stack,
					.size = sizeof(stack) };
	struct mt_unwind_regs regs = { .valid = 0x1ffff };
	regs.r[MT_UNWIND_REG_RA] = base + pc;
	regs.r[MT_UNWIND_REG_SP] = mem.base;
	regs.r[5] = base + caller + 16;	/* rdi (DWARF register 5): into malloc */
	struct mt_unwind_frame fr[8];
	struct mt_unwind_stats st = { 0 };
	unsigned n = 0;
	int end = mt_unwind_walk(mp, sp, &regs, &mem, fr, 8, &n, &st);
	cr_assert_neq(end, MT_UNWIND_END_BAD_FRAME);
	cr_assert_geq(n, 2, "%u frames, end %s", n, mt_unwind_end_str(end));
	cr_assert_eq(fr[1].pc, base + caller + 16);
}

Test(maps, fork_copies_exec_clears)
{
	cr_assert_eq(mt_unwind_maps_comm(mp, 20, 20, "parent", 0), 0);
	cr_assert_eq(mt_unwind_maps_mmap(mp, 20, 0x1000, 0x1000, 0, "/p", NULL, 0, 1), 0);
	cr_assert_eq(mt_unwind_maps_fork(mp, 21, 20, 21, 20), 0);
	cr_assert_str_eq(path_at(21, 0x1000), "/p");
	cr_assert_str_eq(mt_unwind_maps_thread(mp, 21)->comm, "parent");
	/* The child's changes stay its own. */
	cr_assert_eq(mt_unwind_maps_mmap(mp, 21, 0x1000, 0x1000, 0, "/q", NULL, 0, 1), 0);
	cr_assert_str_eq(path_at(20, 0x1000), "/p");
	/* A thread shares the space. */
	cr_assert_eq(mt_unwind_maps_fork(mp, 20, 20, 22, 20), 0);
	cr_assert_eq(mt_unwind_maps_thread(mp, 22)->pid, 20);
	/* exec drops the old image. */
	cr_assert_eq(mt_unwind_maps_comm(mp, 21, 21, "child", 1), 0);
	cr_assert_null(path_at(21, 0x1000));
	cr_assert_str_eq(mt_unwind_maps_thread(mp, 21)->comm, "child");
}

/* Map m's PT_LOAD segments for pid at base, page by page as the loader
 * does; each as executable, or (as_loaded) only the executable ones as
 * such (maps.c keeps those alone). */
static void map_segments(struct mt_unwind_module *m, const char *path, uint32_t pid,
			 uint64_t base, int as_loaded)
{
	for (size_t i = 0; i < m->nr_loads; i++) {
		const struct mt_unwind_load *l = &m->loads[i];
		cr_assert_eq(mt_unwind_maps_mmap(mp, pid, base + (l->vaddr & ~0xfffull),
						 l->filesz + (l->offset & 0xfff), l->offset & ~0xfffull,
						 path, m->file_id, m->file_id_len,
						 as_loaded ? l->exec : 1), 0);
	}
}

Test(maps, module_vaddr_and_build_id)
{
	/* Map the fixture's code the way the loader does and check that a pc
	 * translates to its ELF address: PT_LOAD offset -> vaddr. */
	const char *path = ut_fixture("unwind_recursion");
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, path, NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	cr_assert_gt(m->file_id_len, 0, "fixtures carry a build-id");
	uint64_t f = ut_symbol(m, "recurse");
	uint64_t base = 0x555555554000;
	map_segments(m, path, 30, base, 0);
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, 30);
	struct mt_unwind_map *map = mt_unwind_maps_find(mp, sp, base + f);
	cr_assert_not_null(map);
	cr_assert(map->delta_ok);
	cr_assert_eq(base + f + (uint64_t)map->delta, f);
	cr_assert_eq(map->mod->state, MT_UNWIND_MOD_OK, "the recorded build-id matches");
	cr_assert_eq(mt_unwind_maps_find(mp, sp, base + f + 1)->mod, map->mod, "one module per file");

	/* A recorded build-id that is not the file's: reported, not used. */
	uint8_t wrong[20];
	memset(wrong, 0xab, sizeof(wrong));
	struct mt_unwind_module *w = mt_unwind_modules_get(ms, path, wrong, 20);
	cr_assert_eq(w->state, MT_UNWIND_MOD_MISMATCH);
	cr_assert_neq(w, m);
}

Test(maps, lld_code_sharing_a_page_with_read_only_data)
{
	/* lld starts the executable segment in the file page where the
	 * read-only one ends, its vaddr a page further on: the code's mapping
	 * starts at a file offset both segments cover.  Map the segments as
	 * the loader does (only the executable one is kept) and check that a
	 * pc translates through the executable segment. */
	const char *path = ut_fixture("unwind_recursion-lld");
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, path, NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t f = ut_symbol(m, "recurse");
	uint64_t base = 0x555555554000;
	int shared = 0;
	for (size_t i = 0; i < m->nr_loads; i++) {
		uint64_t off = m->loads[i].offset & ~0xfffull;
		for (size_t j = 0; j < m->nr_loads; j++)
			shared |= m->loads[i].exec && j != i && m->loads[j].offset <= off &&
				  off < m->loads[j].offset + m->loads[j].filesz;
	}
	cr_assert(shared, "the fixture has lld's layout (code in the read-only data's last page)");
	map_segments(m, path, 31, base, 1);
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, 31);
	struct mt_unwind_map *map = mt_unwind_maps_find(mp, sp, base + f);
	cr_assert_not_null(map);
	cr_assert(map->delta_ok);
	cr_assert_eq(base + f + (uint64_t)map->delta, f, "pc %#" PRIx64 " -> %#" PRIx64 ", want %#" PRIx64,
		     base + f, base + f + (uint64_t)map->delta, f);
}

/* m's state and its reason for a warning ("" when it gives none). */
static void assert_unusable(const char *path, enum mt_unwind_module_state state, const char *why)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, path, NULL, 0);
	cr_assert_not_null(m);
	cr_assert_eq(mt_unwind_module_state(m), state, "%s: state %d, want %d", path,
		     mt_unwind_module_state(m), state);
	cr_assert_not(mt_unwind_module_usable(m));
	char got[160] = "";
	int r = mt_unwind_module_unusable_reason(m, got, sizeof(got));
	cr_assert_eq(r, why[0] != 0, "%s: reason given %d (%s)", path, r, got);
	cr_assert_str_eq(got, why, "%s", path);
}

/* Only regular files are opened: a fifo's writer blocked in open() stays
 * blocked (opening the fifo's read end would release it), and /proc's
 * "regular" files are refused too. */
Test(maps, never_opens_special_files)
{
	char dir[] = "/tmp/mt-maps-XXXXXX", fifo[64], link[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(symlink("fifo", link), 0);
	pid_t w = fork();
	cr_assert_geq(w, 0);
	if (w == 0) {		/* the writer: blocks until a reader opens */
		int fd = open(fifo, O_WRONLY);
		_exit(fd < 0 ? 2 : 0);
	}
	/* The writer is in open() once its wait channel says so (or give it
	 * half a second). */
	for (int i = 0; i < 50; i++) {
		char p[64], wchan[64] = "";
		snprintf(p, sizeof(p), "/proc/%d/wchan", (int)w);
		FILE *f = fopen(p, "r");
		if (f) {
			if (!fgets(wchan, sizeof(wchan), f))
				wchan[0] = 0;
			fclose(f);
		}
		if (strstr(wchan, "fifo") || strstr(wchan, "pipe") || strstr(wchan, "partner"))
			break;
		usleep(10000);
	}
	assert_unusable(fifo, MT_UNWIND_MOD_NOT_REGULAR, "not a regular file (fifo)");
	assert_unusable("/dev/zero", MT_UNWIND_MOD_NOT_REGULAR,
			"not a regular file (character device)");
	assert_unusable(dir, MT_UNWIND_MOD_NOT_REGULAR, "not a regular file (directory)");
	assert_unusable("/proc/self/mem", MT_UNWIND_MOD_NOT_REGULAR,
			"not a regular file (a file of /proc)");
	assert_unusable("/nonexistent/libx.so", MT_UNWIND_MOD_MISSING,
			"No such file or directory");
	assert_unusable("/etc/hostname", MT_UNWIND_MOD_BAD_ELF, "not an ELF file");
	assert_unusable(link, MT_UNWIND_MOD_NOT_REGULAR, "not a regular file (fifo)");
	assert_unusable("//anon", MT_UNWIND_MOD_MISSING, "");	/* names no file */
	int status;
	cr_assert_eq(waitpid(w, &status, WNOHANG), 0, "the fifo's writer was released");
	int fd = open(fifo, O_RDONLY | O_NONBLOCK);	/* now release it */
	cr_assert_eq(waitpid(w, &status, 0), w);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	unlink(fifo);
	unlink(link);
	rmdir(dir);
}

/* Where a link is expected (the ways into other file tables and mount
 * namespaces, /proc/self/fd/N, /proc/PID/root/...), a regular file behind
 * it is used. */
Test(maps, opens_regular_files_behind_proc_links)
{
	const char *path = ut_fixture("unwind_recursion");
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	char via[64], root[4200];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, via, NULL, 0);
	cr_assert_eq(mt_unwind_module_state(m), MT_UNWIND_MOD_OK, "%s", via);
	cr_assert(mt_unwind_module_usable(m));
	char why[160];
	cr_assert_eq(mt_unwind_module_unusable_reason(m, why, sizeof(why)), 0);
	char abs[4096];
	cr_assert_not_null(realpath(path, abs));
	snprintf(root, sizeof(root), "/proc/%d/root%s", (int)getpid(), abs);
	m = mt_unwind_modules_get(ms, root, NULL, 0);
	cr_assert_eq(mt_unwind_module_state(m), MT_UNWIND_MOD_OK, "%s", root);
	close(fd);
}

Test(hashmap, grows_and_finds)
{
	struct mt_unwind_hashmap h;
	mt_unwind_hashmap_init(&h);
	for (uint64_t k = 0; k < 10000; k++)
		cr_assert_eq(mt_unwind_hashmap_put(&h, k * 4096 + 1, k), 0);
	cr_assert_eq(h.len, 10000);
	uint64_t v;
	for (uint64_t k = 0; k < 10000; k++) {
		cr_assert(mt_unwind_hashmap_get(&h, k * 4096 + 1, &v));
		cr_assert_eq(v, k);
	}
	cr_assert_not(mt_unwind_hashmap_get(&h, 2, &v));
	cr_assert_eq(mt_unwind_hashmap_put(&h, 1, 99), 0);	/* replace */
	cr_assert(mt_unwind_hashmap_get(&h, 1, &v));
	cr_assert_eq(v, 99);
	cr_assert_eq(h.len, 10000);
	mt_unwind_hashmap_release(&h);
}

/* The free-slot marker cannot be a key (a recording can make up any pc):
 * it is refused, and never found, not even on a free slot. */
Test(hashmap, the_free_slot_marker_is_no_key)
{
	struct mt_unwind_hashmap h;
	uint64_t v = 0;
	mt_unwind_hashmap_init(&h);
	cr_assert_not(mt_unwind_hashmap_get(&h, MT_UNWIND_HASH_EMPTY, &v));
	cr_assert_eq(mt_unwind_hashmap_put(&h, MT_UNWIND_HASH_EMPTY, 7), MT_UNWIND_HASH_NO_KEY);
	for (uint64_t k = 0; k < 100; k++)
		cr_assert_eq(mt_unwind_hashmap_put(&h, k, k), 0);
	cr_assert_eq(h.len, 100);
	cr_assert_not(mt_unwind_hashmap_get(&h, MT_UNWIND_HASH_EMPTY, &v));
	mt_unwind_hashmap_release(&h);
}

struct seen {
	uint64_t t[16];
	int n;
};

static void collect(int kind, void *rec, size_t size, void *ctx)
{
	struct seen *s = ctx;
	cr_assert_eq(size, 8);
	cr_assert_eq(kind, 7);
	memcpy(&s->t[s->n++], rec, 8);
}

Test(order, releases_in_time_order_up_to_the_limit)
{
	struct mt_unwind_order *q;
	cr_assert_eq(mt_unwind_order_new(&q), 0);
	uint64_t times[] = { 5, 3, 9, 3, 1, 7 };
	for (int i = 0; i < 6; i++) {
		uint64_t rec = times[i] * 10 + (uint64_t)i;	/* time and arrival */
		cr_assert_eq(mt_unwind_order_push(q, 7, &rec, 4, (char *)&rec + 4, 4, times[i]), 0);
	}
	struct seen s = { .n = 0 };
	cr_assert_eq(mt_unwind_order_flush(q, 5, collect, &s), 0);
	cr_assert_eq(s.n, 4);
	cr_assert_eq(s.t[0], 14);
	cr_assert_eq(s.t[1], 31, "equal times keep arrival order");
	cr_assert_eq(s.t[2], 33);
	cr_assert_eq(s.t[3], 50);
	uint64_t rec = 62;
	cr_assert_eq(mt_unwind_order_push(q, 7, &rec, 8, NULL, 0, 6), 0);
	cr_assert_eq(mt_unwind_order_flush(q, UINT64_MAX, collect, &s), 0);
	cr_assert_eq(s.n, 7);
	cr_assert_eq(s.t[4], 62);
	cr_assert_eq(s.t[5], 75);
	cr_assert_eq(s.t[6], 92);
	cr_assert_eq(mt_unwind_order_bytes(q), 0);
	mt_unwind_order_free(q);
}

/* The look-ahead hook sees each item released after the first, just
 * before the one ahead of it goes to fn, and none past the limit. */
struct ahead_log {
	uint64_t given[8], ahead[8];	/* ahead[i]: what the hook saw before given[i] */
	uint64_t seen;			/* the hook's last item, 0: none since */
	int n;
};

static void log_given(int kind, void *rec, size_t size, void *ctx)
{
	(void)kind;
	(void)size;
	struct ahead_log *l = ctx;
	memcpy(&l->given[l->n], rec, 8);
	l->ahead[l->n++] = l->seen;
	l->seen = 0;
}

static void log_ahead(int kind, const void *rec, void *ctx)
{
	struct ahead_log *l = ctx;
	cr_assert_eq(kind, 7);
	memcpy(&l->seen, rec, 8);
}

Test(order, look_ahead_sees_the_next_release)
{
	struct mt_unwind_order *q;
	cr_assert_eq(mt_unwind_order_new(&q), 0);
	mt_unwind_order_set_ahead(q, log_ahead);
	uint64_t times[] = { 5, 3, 9, 1 };
	for (int i = 0; i < 4; i++) {
		uint64_t rec = times[i];
		cr_assert_eq(mt_unwind_order_push(q, 7, &rec, 8, NULL, 0, times[i]), 0);
	}
	struct ahead_log l = { .n = 0 };
	cr_assert_eq(mt_unwind_order_flush(q, 5, log_given, &l), 0);
	cr_assert_eq(l.n, 3);
	uint64_t want_given[] = { 1, 3, 5 }, want_ahead[] = { 3, 5, 0 };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(l.given[i], want_given[i]);
		cr_assert_eq(l.ahead[i], want_ahead[i], "item %d: ahead %llu", i,
			     (unsigned long long)l.ahead[i]);	/* 9 is past the limit */
	}
	mt_unwind_order_free(q);
}

/* Records pushed as a few sorted runs (one per CPU ring buffer per round,
 * as perf writes them) come out in time order, ties in arrival order, each
 * once, up to each flush's limit. */
struct item {
	uint64_t time;
	uint32_t arrival;
};

struct released {
	struct item *v;
	size_t n;
};

static void collect_items(int kind, void *data, size_t size, void *ctx)
{
	struct released *s = ctx;
	cr_assert_eq(kind, 7);
	cr_assert_eq(size, sizeof(struct item));
	s->v[s->n++] = *(struct item *)data;
}

static void push_round(struct mt_unwind_order *q, uint64_t t0, unsigned cpus, unsigned per_cpu,
		       uint32_t *arrival, unsigned *seed)
{
	for (unsigned c = 0; c < cpus; c++) {
		uint64_t t = t0;
		for (unsigned k = 0; k < per_cpu; k++) {
			t += (uint64_t)(rand_r(seed) % 3);	/* ties on purpose */
			struct item it = { t, (*arrival)++ };
			cr_assert_eq(mt_unwind_order_push(q, 7, &it, sizeof(it), NULL, 0, t), 0);
		}
	}
}

Test(order, runs_of_many_cpus_come_out_in_time_order, .timeout = 10)
{
	struct mt_unwind_order *q;
	cr_assert_eq(mt_unwind_order_new(&q), 0);
	unsigned seed = 12345, rounds = 40, cpus = 13, per_cpu = 37;
	uint32_t arrival = 0;
	struct released s = { calloc(rounds * cpus * per_cpu + 4800, sizeof(struct item)), 0 };
	uint64_t prev_max = 0, limit = 0;
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = 1000 + 50 * (uint64_t)r;	/* rounds overlap in time */
		push_round(q, t0, cpus, per_cpu, &arrival, &seed);
		limit = prev_max;	/* what perf's rounds promise: none older comes */
		cr_assert_eq(mt_unwind_order_flush(q, limit, collect_items, &s), 0);
		prev_max = t0 + 2 * per_cpu;
	}
	/* A last round larger than the queue so far (the arrays grow after the
	 * merge buffer was made), one run that starts before the one left
	 * ends: one merge pass, so the result ends in the merge buffer and
	 * the arrays trade places. */
	push_round(q, limit + 1, 1, 4800, &arrival, &seed);
	cr_assert_eq(mt_unwind_order_flush(q, UINT64_MAX, collect_items, &s), 0);
	cr_assert_eq(s.n, arrival, "%zu of %u released", s.n, arrival);
	cr_assert_eq(mt_unwind_order_bytes(q), 0);
	for (size_t i = 1; i < s.n; i++) {
		const struct item *a = &s.v[i - 1], *b = &s.v[i];
		cr_assert(a->time < b->time || (a->time == b->time && a->arrival < b->arrival),
			  "item %zu (%lu, #%u) after (%lu, #%u)", i, (unsigned long)b->time,
			  b->arrival, (unsigned long)a->time, a->arrival);
	}
	free(s.v);
	mt_unwind_order_free(q);
}
