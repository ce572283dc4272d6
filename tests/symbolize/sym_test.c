/* Symbols, inline chains and demangling against the fixtures. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/batch.h"
#include "symbolize/debug_cache.h"
#include "symbolize/demangle.h"
#include "symbolize/out.h"
#include "symbolize/sym.h"
#include "tests/symbolize/unwind_util.h"

static void check_demangle(const char *in, const char *want)
{
	char *d = mt_unwind_demangle(in);
	if (!want) {
		cr_assert_null(d, "%s demangled to %s", in, d);
		return;
	}
	cr_assert_not_null(d, "%s not demangled", in);
	cr_assert_str_eq(d, want);
	free(d);
}

Test(demangle, cxx_rust_and_plain)
{
	check_demangle("_ZN6shapes5StackIiE4pushEi", "shapes::Stack<int>::push");
	check_demangle("_ZN6shapes6detail5visitIdEEiT_", "shapes::detail::visit<double>");
	check_demangle("_ZNK3Foo3barEv", "Foo::bar");
	check_demangle("_ZN3FooclEv", "Foo::operator()");
	check_demangle("_Z7throweri.cold", "thrower [clone .cold]");
	check_demangle("_ZN2ns3fooIiEEvT_.isra.0.cold", "ns::foo<int> [clone .isra.0] [clone .cold]");
	check_demangle("_ZnwmRKSt9nothrow_t", "operator new");
	check_demangle("_ZN12_GLOBAL__N_11fEv", "(anonymous namespace)::f");
	check_demangle("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	check_demangle("_ZN5alloc3vec12Vec$LT$T$GT$4push17h00112233aabbccddE",
		       "alloc::vec::Vec<T>::push");
	check_demangle("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
		       "closure$u7d$$u7d$$GT$17h4f5b2d3f1c7d2e9aE",
		       "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
	/* Rust v0, as rustc 1.95 names its standard library */
	check_demangle("_RINvNtNtCs6GmmlP4bgsG_1r3app5store5buildmEB6_", "r::app::store::build::<u32>");
	check_demangle("_RNvMs1_NtNtCsgEmfK2I1SDS_4core3fmt8buildersNtB5_11DebugStruct5field",
		       "<core::fmt::builders::DebugStruct>::field");
	check_demangle("_RINvNtCsjrHSEGnQ3l9_3std5panic12catch_unwindNCNvNtB4_2rt19lang_start_internal0iEB4_",
		       "std::panic::catch_unwind::<std::rt::lang_start_internal::{closure#0}, isize>");
	check_demangle("_RNvCs1234_3foo3bar.llvm.1234", "foo::bar");
	check_demangle("_Rtest", NULL);
	check_demangle("malloc", NULL);
	check_demangle("_Z", NULL);
	check_demangle("_ZN3Foo", NULL);
}

static struct mt_unwind_modules *ms;

static void setup(void)
{
	cr_assert_eq(mt_unwind_modules_new(&ms, NULL), 0);
}

static void teardown(void)
{
	mt_unwind_modules_free(ms);
}

/* The return address of the call to unwind_mark inside fn, minus one. */
static uint64_t call_site(struct mt_unwind_module *m, const char *fn, const char *callee)
{
	uint64_t f = ut_symbol(m, fn), target = ut_symbol(m, callee);
	cr_assert(f && target);
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t n;
	cr_assert_eq(elf_getphdrnum(elf, &n), 0);
	Elf_Data *d = NULL;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		if (sh.sh_addr <= f && f < sh.sh_addr + sh.sh_size && sh.sh_type == SHT_PROGBITS) {
			d = elf_getdata(s, NULL);
			const uint8_t *p = d->d_buf;
			for (uint64_t a = f; a + 5 <= sh.sh_addr + sh.sh_size && a < f + 512; a++) {
				const uint8_t *q = p + (a - sh.sh_addr);
				int32_t rel;
				memcpy(&rel, q + 1, 4);
				if (q[0] == 0xe8 && a + 5 + (uint64_t)(int64_t)rel == target)
					return a + 4;	/* (a + 5) - 1 */
			}
		}
	}
	cr_assert_fail("no call from %s to %s", fn, callee);
	return 0;
}

TestSuite(sym, .init = setup, .fini = teardown);

Test(sym, inline_chain_with_call_sites)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t pc = call_site(m, "outer", "unwind_mark");
	struct mt_unwind_symopts o = { 0 };
	const struct mt_unwind_sym *s = mt_unwind_sym_get(m, pc, &o);
	cr_assert_str_eq(s->text, "outer;helper_always_[i];helper_static_[i]");
	cr_assert_eq(s->nframes, 3);
	cr_assert_eq(mt_unwind_sym_get(m, pc, &o), s, "cached");
}

/* The module's section called name into *out.  @return : 1, or 0 when
 * it has none. */
static int section_named(struct mt_unwind_module *m, const char *name, GElf_Shdr *out)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	size_t shstrndx;
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		const char *n = gelf_getshdr(s, out) ? elf_strptr(elf, shstrndx, out->sh_name) : NULL;
		if (n && strcmp(n, name) == 0)
			return 1;
	}
	return 0;
}

static int has_section(struct mt_unwind_module *m, const char *name)
{
	GElf_Shdr sh;
	return section_named(m, name, &sh);
}

Test(sym, inline_chain_without_aranges_and_split)
{
	/* The same chain and source lines when no .debug_aranges places the
	 * unit (clang writes none by default), and when the unit's DIEs are
	 * in a .dwo file (split DWARF). */
	struct mt_unwind_symopts lines = { .srcline = 1 };
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	const struct mt_unwind_sym *want = mt_unwind_sym_get(m, call_site(m, "outer", "unwind_mark"),
							     &lines);
	cr_assert(strstr(want->text, "helper_static_[i] (unwind_inline.c:"), "%s", want->text);
	static const char *const variants[] = { "unwind_inline-noaranges", "unwind_inline-split" };
	for (size_t i = 0; i < 2; i++) {
		struct mt_unwind_module *v = mt_unwind_modules_get(ms, ut_fixture(variants[i]), NULL, 0);
		cr_assert_eq(v->state, MT_UNWIND_MOD_OK);
		if (i == 0)
			cr_assert(!has_section(v, ".debug_aranges"));
		else
			cr_assert(!has_section(v, ".debug_loclists") && !has_section(v, ".debug_loc"),
				  "split: the DIEs' location lists are in the .dwo file");
		/* (a module's frames are cached by pc: one set of options each) */
		uint64_t pc = call_site(v, "outer", "unwind_mark");
		const char *got = mt_unwind_sym_get(v, pc, &lines)->text;
		cr_assert_str_eq(got, want->text, "%s: %s", variants[i], got);
	}
}

Test(sym, inline_chain_from_zstd_compressed_dwarf)
{
	/* DWARF sections compressed with zstd: libelf 0.188 cannot read them,
	 * and the debug cache's inflated copy of the file stands in. */
	struct mt_unwind_symopts lines = { .srcline = 1 };
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	const struct mt_unwind_sym *want = mt_unwind_sym_get(m, call_site(m, "outer", "unwind_mark"),
							     &lines);
	char dir[] = "/tmp/mt-zstd-test-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	struct mt_unwind_modules *zms;
	cr_assert_eq(mt_unwind_modules_new(&zms, NULL), 0);
	mt_unwind_modules_set_debug_cache(zms, dir);
	struct mt_unwind_module *z = mt_unwind_modules_get(zms, ut_fixture("unwind_inline-zstd"),
							   NULL, 0);
	cr_assert_eq(z->state, MT_UNWIND_MOD_OK);
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(z->mod, &bias);
	size_t shstrndx;
	int zstd_sections = 0;
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		GElf_Chdr ch;
		GElf_Shdr sh;
		zstd_sections += gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
				 gelf_getchdr(s, &ch) && ch.ch_type == 2;
	}
	cr_assert_gt(zstd_sections, 0, "the fixture has zstd-compressed sections");
	/* elfutils 0.189 and later read them: then no copy is needed */
	int fd = open(ut_fixture("unwind_inline-zstd"), O_RDONLY | O_CLOEXEC);
	Elf *probe = elf_begin(fd, ELF_C_READ, NULL);
	int libelf_reads = 1;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(probe, s));) {
		GElf_Shdr sh;
		if (gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			libelf_reads &= elf_compress(s, 0, 0) >= 0;
	}
	elf_end(probe);
	close(fd);
	const char *got = mt_unwind_sym_get(z, call_site(z, "outer", "unwind_mark"), &lines)->text;
	cr_assert_str_eq(got, want->text);
	cr_assert_eq(mt_unwind_modules_debug_cache_stats(zms).written, !libelf_reads);
	mt_unwind_modules_free(zms);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A compression header asking for an alignment of 4 GiB, or a section
 * that inflates more than 64 times: a hostile file (the profiled program
 * itself may be one) gets no copy, rather than gigabytes of zeros. */
static void hostile_chdr(const char *fixture, uint64_t field_off, uint64_t value)
{
	const char *path = ut_fixture(fixture);
	struct mt_unwind_modules *tms;
	cr_assert_eq(mt_unwind_modules_new(&tms, NULL), 0);
	struct mt_unwind_module *m = mt_unwind_modules_get(tms, path, NULL, 0);
	cr_assert_gt(m->file_id_len, 0);
	GElf_Shdr info;
	cr_assert(section_named(m, ".debug_info", &info));
	uint64_t at = info.sh_offset;
	char dir[] = "/tmp/mt-chdr-test-XXXXXX", copy[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/bad", dir);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "cp '%s' %s", path, copy);
	cr_assert_eq(system(cmd), 0);
	int fd = open(copy, O_RDWR | O_CLOEXEC);
	if (field_off)
		cr_assert_eq(pwrite(fd, &value, 8, (off_t)(at + field_off)), 8);	/* Elf64_Chdr */
	struct mt_unwind_debug_cache_stats st = { 0 };
	char *out = NULL;
	cr_assert_eq(mt_unwind_debug_cache_add(dir, fd, m->file_id, m->file_id_len, &out, &st), -1);
	cr_assert_eq(st.failed, 1);
	cr_assert_eq(st.written, 0);
	glob_t g;
	snprintf(cmd, sizeof(cmd), "%s/*.debug", dir);
	cr_assert_eq(glob(cmd, 0, NULL, &g), GLOB_NOMATCH, "a copy was made");
	close(fd);
	mt_unwind_modules_free(tms);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(sym, hostile_compression_alignment_gets_no_copy)
{
	hostile_chdr("unwind_inline-zstd", 16, (uint64_t)1 << 32);
}
Test(sym, compression_bomb_gets_no_copy) { hostile_chdr("unwind_inline-bomb", 0, 0); }

Test(sym, no_inline_and_addrs)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	uint64_t pc = call_site(m, "outer", "unwind_mark");
	struct mt_unwind_symopts o = { .no_inline = 1 };
	cr_assert_str_eq(mt_unwind_sym_get(m, pc, &o)->text, "outer");

	struct mt_unwind_module *m2 = mt_unwind_modules_get(ms, ut_fixture("unwind_inline-fp"), NULL, 0);
	uint64_t pc2 = call_site(m2, "outer", "unwind_mark");
	struct mt_unwind_symopts a = { .addrs = 1, .no_inline = 1 };
	char want[64];
	snprintf(want, sizeof(want), "[unwind_inline-fp+0x%lx]", (unsigned long)pc2);
	cr_assert_str_eq(mt_unwind_sym_get(m2, pc2, &a)->text, want);
}

Test(sym, cxx_names)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_cxx"), NULL, 0);
	uint64_t f = ut_symbol(m, "_ZN6shapes5StackIiE4pushEi");
	cr_assert_neq(f, 0);
	struct mt_unwind_symopts o = { 0 }, raw = { .no_demangle = 1 };
	cr_assert_str_eq(mt_unwind_sym_get(m, f + 1, &o)->text, "shapes::Stack<int>::push");
	struct mt_unwind_module *m2 = mt_unwind_modules_get(ms, ut_fixture("unwind_cxx-fp"), NULL, 0);
	uint64_t f2 = ut_symbol(m2, "_ZN6shapes5StackIiE4pushEi");
	cr_assert_str_eq(mt_unwind_sym_get(m2, f2 + 1, &raw)->text, "_ZN6shapes5StackIiE4pushEi");
}

/* ---- batches (symbolize/batch.c) ------------------------------------- */

/* Stacks of frames, root first: a module frame, or NULL then a text. */
struct test_frame {
	struct mt_unwind_module *mod;
	uint64_t vaddr;
	int trim;
	const char *unknown;
};

/* Fill b with lines first..first+n-1 of stacks: "line K\t", the frames,
 * "\n". */
static void fill_batch(struct mt_unwind_batch *b, const struct test_frame *const *stacks,
		       const unsigned *lens, unsigned first, unsigned n)
{
	for (unsigned i = first; i < first + n; i++) {
		char head[32];
		snprintf(head, sizeof(head), "%sline %u\t", i > first ? "\n" : "", i);
		mt_unwind_out_str(&b->out, head);
		cr_assert_eq(mt_unwind_batch_reserve(b, lens[i]), 0);
		struct mt_unwind_seg *g = &b->segs[b->nr_segs++];
		g->text_end = b->out.len;
		g->fr_begin = b->nr_dframes;
		g->fr_count = lens[i];
		for (unsigned k = 0; k < lens[i]; k++) {
			const struct test_frame *f = &stacks[i][k];
			struct mt_unwind_dframe *d = &b->dframes[b->nr_dframes++];
			*d = (struct mt_unwind_dframe){ .mod = f->mod, .vaddr = f->vaddr,
							.trim = (uint8_t)f->trim };
			if (!f->mod) {
				d->vaddr = b->unk.len;
				d->len = (uint32_t)strlen(f->unknown);
				mt_unwind_out_str(&b->unk, f->unknown);
			}
		}
	}
	mt_unwind_out_char(&b->out, '\n');
}

Test(sym, batch_copies_shared_outer_frames_from_the_last_stack)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t site = call_site(m, "outer", "unwind_mark");	/* 3 frames, 2 inline */
	uint64_t mainf = ut_symbol(m, "main") + 1, outer = ut_symbol(m, "outer") + 1;
	const struct test_frame
		s0[] = { { m, mainf, 0, 0 }, { m, site, 0, 0 }, { m, outer, 0, 0 } },
		s1[] = { { m, mainf, 0, 0 }, { m, site, 0, 0 }, { m, mainf, 0, 0 } },
		s2[] = { { m, mainf, 0, 0 }, { m, site, 1, 0 } },	/* trimmed: differs */
		s3[] = { { NULL, 0, 0, "[unknown+0x1]" }, { m, mainf, 0, 0 } },
		s4[] = { { NULL, 0, 0, "[unknown+0x1]" }, { m, outer, 0, 0 } },
		s5[] = { { m, mainf, 0, 0 } },
		s6[] = { { m, mainf, 0, 0 }, { m, site, 0, 0 }, { m, outer, 0, 0 } };
	const struct test_frame *const stacks[] = { s0, s1, s2, s3, s4, s5, s5, s6, s6 };
	const unsigned lens[] = { 3, 3, 2, 2, 2, 1, 0, 3, 3 };
	struct mt_unwind_symopts o = { 0 };
	/* Two batches in a row, written with the last stack kept, and the
	 * same stacks each in a batch of its own with nothing kept. */
	char *text[2];
	struct mt_unwind_frame_counts c[2] = { { 0 } };
	for (int kept = 0; kept < 2; kept++) {
		struct mt_unwind_last_stack last;
		mt_unwind_last_stack_init(&last);
		struct mt_unwind_out to;
		mt_unwind_out_init_mem(&to);
		for (unsigned round = 0; round < 2; round++) {
			for (unsigned i = 0; i < 9; i += kept ? 9 : 1) {
				struct mt_unwind_batch b = { 0 };
				mt_unwind_out_init_mem(&b.out);
				mt_unwind_out_init_mem(&b.unk);
				fill_batch(&b, stacks, lens, i, kept ? 9 : 1);
				mt_unwind_batch_write(&to, &b, &o, &c[kept], &last);
				mt_unwind_batch_release(&b);
				if (!kept) {	/* nothing to share */
					mt_unwind_last_stack_release(&last);
					mt_unwind_last_stack_init(&last);
				}
			}
		}
		if (kept)
			cr_assert_eq(last.n, 3, "the last stack is kept: %u frames", last.n);
		mt_unwind_last_stack_release(&last);
		text[kept] = mt_unwind_out_detach(&to);
		cr_assert_not_null(text[kept]);
	}
	cr_assert_str_eq(text[1], text[0]);
	cr_assert_eq(c[1].frames, c[0].frames);
	cr_assert_eq(c[1].inl, c[0].inl);
	/* What it must say: the trimmed frame keeps its physical frame only. */
	const char *want_line2 = "line 2\tmain;outer\n";
	cr_assert(strstr(text[0], want_line2), "%s", text[0]);
	cr_assert(strstr(text[0], "line 1\tmain;outer;helper_always_[i];helper_static_[i];main\n"),
		  "%s", text[0]);
	cr_assert(strstr(text[0], "line 4\t[unknown+0x1];outer\n"), "%s", text[0]);
	cr_assert(strstr(text[0], "line 6\t\n"), "%s", text[0]);
	cr_assert_eq(c[0].frames, 2 * (5 + 5 + 2 + 2 + 2 + 1 + 0 + 5 + 5));
	cr_assert_eq(c[0].inl, 2 * (2 + 2 + 0 + 0 + 0 + 0 + 0 + 2 + 2));
	free(text[0]);
	free(text[1]);
}

/* ---- numbers in the text out (symbolize/out.c) ----------------------- */

Test(out, numbers_as_printf_writes_them)
{
	uint64_t v[] = { 0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 4096, 65535, 1234567890,
			 1700000000123456789ull, UINT64_MAX - 1, UINT64_MAX };
	struct mt_unwind_out o;
	mt_unwind_out_init_mem(&o);
	char want[64 * 24] = "", one[48];
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		mt_unwind_out_u64(&o, v[i]);
		mt_unwind_out_char(&o, ' ');
		mt_unwind_out_x64(&o, v[i]);
		mt_unwind_out_char(&o, ';');
		snprintf(one, sizeof(one), "%llu %llx;", (unsigned long long)v[i],
			 (unsigned long long)v[i]);
		strcat(want, one);
	}
	/* every power of ten and the number before it */
	for (uint64_t p = 1; p <= 10000000000000000000ull; p *= 10) {
		mt_unwind_out_u64(&o, p - 1);
		mt_unwind_out_char(&o, ',');
		mt_unwind_out_u64(&o, p);
		mt_unwind_out_char(&o, ';');
		snprintf(one, sizeof(one), "%llu,%llu;", (unsigned long long)(p - 1),
			 (unsigned long long)p);
		strcat(want, one);
		if (p == 10000000000000000000ull)
			break;
	}
	char *got = mt_unwind_out_detach(&o);
	cr_assert_not_null(got);
	cr_assert_str_eq(got, want);
	free(got);
}
