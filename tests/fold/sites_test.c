/* Allocation sites: which frames are the allocator's, how stacks group by
 * site, their paths and figures, and the trees. */
#include <criterion/criterion.h>
#include <math.h>

#include "fold/sites.h"
#include "fold/sitestext.h"
#include "tests/fold/helpers.h"

static int is_alloc(const char *frame)
{
	return mt_fold_is_alloc_frame(NULL, frame, strlen(frame));
}

Test(sites, allocator_frames)
{
	const char *yes[] = {
		"malloc", "malloc (sampler.c:1037)", "calloc", "realloc", "reallocarray", "free",
		"posix_memalign", "aligned_alloc", "__libc_malloc", "_int_malloc", "tcache_get",
		"operator new", "operator new[] (new_op.cc:3)", "operator new(unsigned long)",
		"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>",
		"std::__cxx11::basic_string<char>::_M_create_[i] (basic_string.tcc:154)",
		"std::_Vector_base<int>::_M_allocate_[i]", "__gnu_cxx::new_allocator<int>::allocate",
		"strdup", "__strdup", "__vasprintf_internal", "getline", "__getdelim",
		"_IO_file_doallocate", "__GI___libc_malloc", "xmalloc_[i] (wordfreq.c:40)",
		"x2nrealloc", "xstrdup", "PyMem_Malloc", "_PyMem_RawMalloc", "pymalloc_alloc",
		"PyObject_Malloc", "_PyObject_Malloc", "outstring_func", "sqlite3Malloc",
		"sqlite3DbMallocRawNN",
	};
	const char *no[] = {
		"main", "main (x.c:3)", "mallocx_user", "my_malloc", "xmalloc_table",
		"PyObject_GC_Track", "_PyObject_GC_New", "list_resize (listobject.c:81)",
		"[libc.so.6+0x9a0c4]", "[no stack]", "stdx::thing", "freelist_pop",
		"Pool<Node>::fill (fold_sites_cxx.cc:25)", "operator_newish",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		cr_expect(is_alloc(yes[i]), "'%s' is the allocator's", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_expect(!is_alloc(no[i]), "'%s' is not the allocator's", no[i]);
}

Test(sites, alloc_fn_patterns)
{
	struct mt_fold_alloc_fns *a = mt_fold_alloc_fns_new();
	char err[128];
	cr_assert_eq(mt_fold_alloc_fns_add(a, "^my_(malloc|free)$", err, sizeof(err)), 0);
	cr_assert(mt_fold_is_alloc_frame(a, "my_malloc (a.c:1)", 17));
	cr_assert(mt_fold_is_alloc_frame(a, "my_free_[i]", 11));
	cr_assert(!mt_fold_is_alloc_frame(a, "my_mallocx", 10));
	cr_assert(mt_fold_is_alloc_frame(a, "malloc", 6), "the defaults stay");
	cr_assert_eq(mt_fold_alloc_fns_add(a, "(unclosed", err, sizeof(err)), -1);
	cr_assert(*err, "regerror says why");
	mt_fold_alloc_fns_free(a);
}

Test(sites, frame_split)
{
	size_t nl, ll;
	const char *loc;
	const char *f = "xmalloc_[i] (wordfreq.c:40)";
	mt_fold_frame_split(f, strlen(f), &nl, &loc, &ll);
	cr_assert_eq(nl, 7);
	cr_assert_eq(ll, 13);
	cr_assert_eq(strncmp(loc, "wordfreq.c:40", ll), 0);
	f = "_start (??:0)";
	mt_fold_frame_split(f, strlen(f), &nl, &loc, &ll);
	cr_assert_eq(nl, 6);
	cr_assert_eq(ll, 0, "??:0 is no place");
	f = "(anonymous namespace)::g";
	mt_fold_frame_split(f, strlen(f), &nl, &loc, &ll);
	cr_assert_eq(nl, strlen(f));
	cr_assert_eq(ll, 0);
}

/* Exact (trace mode, every=1) stacks of known sizes. */
static const char trace[] =
	"# mt-unwind 1\n"
	"alloc\t1/1\t10\tp\tsize=100 ptr=0x10 fn=malloc every=1\t_start;main (m.c:5);build (b.c:7);xmalloc_[i] (b.c:3);malloc end=complete\n"
	"alloc\t1/1\t11\tp\tsize=100 ptr=0x20 fn=malloc every=1\t_start;main (m.c:6);build (b.c:7);malloc end=complete\n"
	"alloc\t1/1\t12\tp\tsize=50 ptr=0x30 fn=malloc every=1\t_start;main (m.c:9);load (l.c:2);std::vector<int>::_M_realloc_insert;operator new;malloc end=complete\n"
	"alloc\t1/1\t13\tp\tsize=7 ptr=0x40 fn=malloc every=1\toperator new;malloc end=complete\n"
	"alloc\t1/1\t14\tp\tsize=3 ptr=0x50 fn=malloc every=1\t end=none\n";

static struct mt_fold_sites *sites_of(const char *text, enum mt_fold_tree_kind tree,
				      struct mt_fold_profile **pp, struct mt_fold_snapshot **sp)
{
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot_options o = { .metric = MT_FOLD_ALLOC_BYTES, .conf = 0.95 };
	struct mt_fold_snapshot *s;
	struct mt_fold_sites *t;
	cr_assert_eq(mt_fold_snapshot_new(&s, p, &o), 0);
	cr_assert_eq(mt_fold_sites_new(&t, p, s, NULL, tree), 0);
	*pp = p;
	*sp = s;
	return t;
}

Test(sites, grouping)
{
	struct mt_fold_profile *p;
	struct mt_fold_snapshot *s;
	struct mt_fold_sites *t = sites_of(trace, MT_FOLD_TREE_NONE, &p, &s);
	cr_assert_eq(t->nsites, 4);
	/* build: both stacks, once through its inlined xmalloc */
	cr_assert_str_eq(t->sites[0].name, "build");
	cr_assert_str_eq(t->sites[0].loc, "b.c:7");
	cr_assert_eq(t->sites[0].value.value, 200);
	cr_assert(t->sites[0].value.exact);
	cr_assert_eq(t->sites[0].allocs.value, 2);
	cr_assert_eq(t->sites[0].events, 2);
	cr_assert_eq(t->sites[0].npaths, 2, "called from two lines of main");
	cr_assert_str_eq(t->sites[0].paths[0].frames, "main (m.c:5);_start");
	cr_assert_eq(t->sites[0].paths[0].value.value, 100);
	/* load: past std:: and operator new */
	cr_assert_str_eq(t->sites[1].name, "load");
	cr_assert_eq(t->sites[1].value.value, 50);
	/* all the allocator's: the outermost frame */
	cr_assert_str_eq(t->sites[2].name, "operator new");
	cr_assert_str_eq(t->sites[2].loc, "");
	cr_assert_eq(t->sites[2].paths[0].frames[0], 0, "no caller");
	cr_assert_eq(t->allocator_only, 1);
	cr_assert_str_eq(t->sites[3].name, MT_FOLD_SITE_NO_STACK);
	cr_assert_eq(t->sites[3].value.value, 3);
	/* the sites add up to the total */
	double sum = 0;
	for (uint32_t i = 0; i < t->nsites; i++)
		sum += t->sites[i].value.value;
	cr_assert_eq(sum, s->total.value);
	mt_fold_sites_free(t);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

Test(sites, trees)
{
	struct mt_fold_profile *p;
	struct mt_fold_snapshot *s;
	struct mt_fold_sites *t = sites_of(trace, MT_FOLD_TREE_DOWN, &p, &s);
	/* roots: _start (350), operator new (7), (no stack) (3) */
	const struct mt_fold_tree_node *r = &t->nodes[t->root];
	cr_assert_str_eq(r->frame, "_start");
	cr_assert_eq(r->value.value, 250);
	const struct mt_fold_tree_node *m = &t->nodes[r->child];
	cr_assert_str_eq(m->frame, "main (m.c:5)");	/* 100, before m.c:9's 50 by name */
	cr_assert_eq(t->nodes[m->child].child, UINT32_MAX, "cut at the site: no xmalloc");
	mt_fold_sites_free(t);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	t = sites_of(trace, MT_FOLD_TREE_CALLERS, &p, &s);
	r = &t->nodes[t->root];
	cr_assert_str_eq(r->frame, "build (b.c:7)");
	cr_assert_eq(r->value.value, 200);
	cr_assert_str_eq(t->nodes[r->child].frame, "main (m.c:5)");
	mt_fold_sites_free(t);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* A sampled capture: a site's interval is the snapshot's for the same
 * events (fold/est.c), not a statistic of its own. */
Test(sites, sampled_interval_is_the_snapshots)
{
	static const char text[] =
		"# mt-unwind 1\n"
		"alloc\t1/1\t1\tp\tsize=64 ptr=0x1 fn=malloc points=3 rate=4096\tmain;leaf;malloc end=complete\n"
		"alloc\t1/1\t2\tp\tsize=64 ptr=0x2 fn=malloc points=2 rate=4096\tmain;leaf;malloc end=complete\n"
		"alloc\t1/1\t3\tp\tsize=64 ptr=0x3 fn=malloc points=1 rate=4096\tmain;other;calloc end=bad-frame\n";
	struct mt_fold_profile *p;
	struct mt_fold_snapshot *s;
	struct mt_fold_sites *t = sites_of(text, MT_FOLD_TREE_NONE, &p, &s);
	const struct mt_fold_site *leaf = NULL;
	for (uint32_t i = 0; i < s->nsites; i++)
		if (strcmp(s->sites[i].name, "leaf") == 0)
			leaf = &s->sites[i];
	cr_assert(leaf);
	cr_assert_str_eq(t->sites[0].name, "leaf");
	cr_assert_eq(t->sites[0].value.value, leaf->total.value);
	cr_assert_eq(t->sites[0].value.lo, leaf->total.lo);
	cr_assert_eq(t->sites[0].value.hi, leaf->total.hi);
	cr_assert_eq(t->sites[0].value.n, 5);
	cr_assert(!t->sites[0].value.exact);
	mt_fold_sites_free(t);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
}

/* --only-pid/--only-tid/--only-comm: events of other threads are left
 * out and counted; kernel losses are kept. */
Test(sites, filter)
{
	static const char text[] =
		"# mt-unwind 1\n"
		"alloc\t1/1\t1\tapp\tsize=10 ptr=0x1 fn=malloc every=1\tmain;a;malloc end=complete\n"
		"alloc\t1/2\t2\tworker\tsize=20 ptr=0x2 fn=malloc every=1\tmain;b;malloc end=complete\n"
		"alloc\t3/3\t3\tother\tsize=40 ptr=0x3 fn=malloc every=1\tmain;c;malloc end=complete\n"
		"lost\t0/0\t4\t?\tcount=5 reason=kernel\t end=none\n";
	static const uint32_t pid1[] = { 1 }, tid2[] = { 2 };
	static const char *const comms[] = { "app", "other" };
	struct { struct mt_fold_filter f; uint64_t bytes, out; } cases[] = {
		{ { .pids = pid1, .npids = 1 }, 30, 1 },
		{ { .pids = pid1, .npids = 1, .tids = tid2, .ntids = 1 }, 20, 2 },
		{ { .comms = comms, .ncomms = 2 }, 50, 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		FILE *f = fmemopen((void *)text, strlen(text), "r");
		mt_fold_profile_filter(p, &cases[i].f);
		cr_assert_eq(mt_fold_profile_read(p, f, "t", NULL, NULL), 0);
		cr_assert_eq(mt_fold_profile_finish(p), 0);
		fclose(f);
		const struct mt_fold_counts *c = mt_fold_profile_counts(p);
		cr_assert_eq(c->filtered_out, cases[i].out, "case %zu", i);
		cr_assert_eq((uint64_t)c->lost_events, 5, "case %zu: the loss is kept", i);
		struct mt_fold_snapshot_options o = { .metric = MT_FOLD_ALLOC_BYTES, .conf = 0.95 };
		struct mt_fold_snapshot *s;
		cr_assert_eq(mt_fold_snapshot_new(&s, p, &o), 0);
		cr_assert_eq(s->total.value, (double)cases[i].bytes, "case %zu", i);
		mt_fold_snapshot_free(s);
		mt_fold_profile_free(p);
	}
}

Test(sites, time_units)
{
	char b[32];
	cr_assert_str_eq(mt_fold_format_time(b, 999), "999 ns");
	cr_assert_str_eq(mt_fold_format_time(b, 1500), "1.50 us");
	cr_assert_str_eq(mt_fold_format_time(b, 25e6), "25.0 ms");
	cr_assert_str_eq(mt_fold_format_time(b, 2.5e9), "2.50 s");
	cr_assert_str_eq(mt_fold_format_time(b, 999.7e6), "1.00 s");
}
