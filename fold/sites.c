/* Allocation sites and call trees: see sites.h. */
#include "fold/sites.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "fold/line.h"
#include "fold/strtab.h"

/* ---- the allocator's functions ------------------------------------------ */

/* The default table of allocator functions: a name is the allocator's when
 * it equals an EXACT entry or begins with a PREFIX one.  Keep in step with
 * docs/fold.md, "Allocation sites". */
enum { EXACT, PREFIX };
static const struct alloc_fn {
	const char *name;
	int how;
} alloc_table[] = {
	/* the malloc family, and glibc's names for its parts */
	{ "malloc", EXACT }, { "calloc", EXACT }, { "realloc", EXACT },
	{ "reallocarray", EXACT }, { "free", EXACT }, { "cfree", EXACT },
	{ "memalign", EXACT }, { "aligned_alloc", EXACT }, { "posix_memalign", EXACT },
	{ "valloc", EXACT }, { "pvalloc", EXACT }, { "malloc_usable_size", EXACT },
	{ "__libc_", PREFIX }, { "_int_", PREFIX }, { "tcache_", PREFIX },
	{ "__malloc_", PREFIX }, { "_mid_memalign", EXACT }, { "sysmalloc", EXACT },
	/* C++: operator new and delete, the standard library */
	{ "operator new", PREFIX }, { "operator delete", PREFIX },
	{ "std::", PREFIX }, { "__gnu_cxx::", PREFIX },
	/* glibc functions that allocate for their caller */
	{ "strdup", EXACT }, { "strndup", EXACT }, { "__strdup", EXACT },
	{ "__strndup", EXACT }, { "asprintf", EXACT }, { "vasprintf", EXACT },
	{ "__asprintf", EXACT }, { "__vasprintf_internal", EXACT }, { "getline", EXACT },
	{ "getdelim", EXACT }, { "__getdelim", EXACT }, { "open_memstream", EXACT },
	{ "_IO_", PREFIX }, { "__GI_", PREFIX },
	/* glibc stdio: its buffers are allocated at a stream's first use, for
	 * the caller of printf, fputs, fopen... */
	{ "printf", EXACT }, { "fprintf", EXACT }, { "vprintf", EXACT },
	{ "vfprintf", EXACT }, { "__vfprintf_internal", EXACT }, { "outstring_func", EXACT },
	{ "__printf_buffer", PREFIX }, { "__fprintf_chk", EXACT }, { "__printf_chk", EXACT },
	{ "__vfprintf_chk", EXACT }, { "puts", EXACT }, { "fputs", EXACT },
	{ "fwrite", EXACT }, { "fputc", EXACT }, { "putc", EXACT }, { "putchar", EXACT },
	{ "fflush", EXACT }, { "fopen", EXACT }, { "fopen64", EXACT }, { "fdopen", EXACT },
	{ "__fopen_internal", EXACT }, { "fgets", EXACT }, { "fread", EXACT },
	{ "getc", EXACT }, { "fgetc", EXACT }, { "ungetc", EXACT }, { "setvbuf", EXACT },
	/* GNU and gnulib wrappers */
	{ "xmalloc", EXACT }, { "xcalloc", EXACT }, { "xzalloc", EXACT },
	{ "xrealloc", EXACT }, { "xnmalloc", EXACT }, { "xnrealloc", EXACT },
	{ "x2realloc", EXACT }, { "x2nrealloc", EXACT }, { "xcharalloc", EXACT },
	{ "xmemdup", EXACT }, { "xstrdup", EXACT }, { "ximalloc", EXACT },
	{ "xicalloc", EXACT }, { "xirealloc", EXACT }, { "xizalloc", EXACT },
	/* CPython's allocator layer */
	{ "PyMem_", PREFIX }, { "_PyMem_", PREFIX }, { "pymalloc_", PREFIX },
	{ "PyObject_Malloc", EXACT }, { "PyObject_Calloc", EXACT },
	{ "PyObject_Realloc", EXACT }, { "PyObject_Free", EXACT },
	{ "_PyObject_Malloc", EXACT }, { "_PyObject_Calloc", EXACT },
	{ "_PyObject_Realloc", EXACT }, { "_PyObject_Free", EXACT },
	/* glibc's directory streams */
	{ "__alloc_dir", EXACT }, { "opendir", EXACT }, { "opendir_tail", EXACT },
	{ "fdopendir", EXACT }, { "fgets_unlocked", EXACT },
	/* SQLite's allocator layer */
	{ "sqlite3Malloc", PREFIX }, { "sqlite3Realloc", EXACT }, { "sqlite3_malloc", PREFIX },
	{ "sqlite3_realloc", PREFIX }, { "sqlite3DbMalloc", PREFIX },
	{ "sqlite3DbRealloc", PREFIX }, { "sqlite3DbStrDup", EXACT },
	{ "sqlite3DbStrNDup", EXACT }, { "sqlite3MemMalloc", EXACT },
	{ "sqlite3MemRealloc", EXACT }, { "sqlite3PageMalloc", EXACT },
	{ "dbMallocRawFinish", EXACT }, { "dbReallocFinish", EXACT },
	{ "mallocWithAlarm", EXACT }, { "pcache1Alloc", EXACT },
};

struct mt_fold_alloc_fns {
	regex_t *re;
	unsigned nre;
};

struct mt_fold_alloc_fns *mt_fold_alloc_fns_new(void)
{
	return calloc(1, sizeof(struct mt_fold_alloc_fns));
}

void mt_fold_alloc_fns_free(struct mt_fold_alloc_fns *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->nre; i++)
		regfree(&a->re[i]);
	free(a->re);
	free(a);
}

int mt_fold_alloc_fns_add(struct mt_fold_alloc_fns *a, const char *ere, char *err,
			  size_t errlen)
{
	regex_t *re = realloc(a->re, (a->nre + 1) * sizeof(*re));
	if (!re)
		return MT_FOLD_ENOMEM;
	a->re = re;
	int r = regcomp(&re[a->nre], ere, REG_EXTENDED | REG_NOSUB);
	if (r) {
		regerror(r, &re[a->nre], err, errlen);
		regfree(&re[a->nre]);
		return -1;
	}
	a->nre++;
	return 0;
}

int mt_fold_is_alloc_fn(const struct mt_fold_alloc_fns *a, const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(alloc_table) / sizeof(alloc_table[0]); i++) {
		const struct alloc_fn *e = &alloc_table[i];
		size_t n = strlen(e->name);
		if (e->how == EXACT ? len == n && memcmp(name, e->name, n) == 0
				    : len >= n && memcmp(name, e->name, n) == 0)
			return 1;
	}
	if (a && a->nre) {
		char buf[512], *s = len < sizeof(buf) ? buf : malloc(len + 1);
		if (!s)
			return 0;
		memcpy(s, name, len);
		s[len] = 0;
		int hit = 0;
		for (unsigned i = 0; i < a->nre && !hit; i++)
			hit = regexec(&a->re[i], s, 0, NULL, 0) == 0;
		if (s != buf)
			free(s);
		return hit;
	}
	return 0;
}

void mt_fold_frame_split(const char *frame, size_t len, size_t *nlen, const char **loc,
			 size_t *llen)
{
	*loc = frame + len;
	*llen = 0;
	/* " (file:line)" at the end: the last " (" whose content holds ':' */
	if (len >= 5 && frame[len - 1] == ')') {
		for (size_t i = len - 1; i-- > 1;) {
			if (frame[i] == '(' && frame[i - 1] == ' ') {
				const char *in = frame + i + 1;
				size_t inlen = len - i - 2;
				if (memchr(in, ':', inlen)) {
					len = i - 1;
					if (!(inlen == 4 && memcmp(in, "??:0", 4) == 0)) {
						*loc = in;
						*llen = inlen;
					}
				}
				break;
			}
		}
	}
	if (len >= 4 && memcmp(frame + len - 4, "_[i]", 4) == 0)
		len -= 4;
	*nlen = len;
}

int mt_fold_is_alloc_frame(const struct mt_fold_alloc_fns *a, const char *frame, size_t len)
{
	size_t nlen, llen;
	const char *loc;
	mt_fold_frame_split(frame, len, &nlen, &loc, &llen);
	return mt_fold_is_alloc_fn(a, frame, nlen);
}

/* ---- grouping ---------------------------------------------------------- */

struct priv {
	struct mt_fold_strtab *site_keys, *path_keys, *node_keys;
	uint32_t *path_site;		/* site of each path key */
	struct mt_fold_path *paths;	/* by path key id, then regrouped */
	size_t path_cap, path_site_cap, site_cap, node_cap;
	char *buf;
	size_t buf_cap;
};

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	if (need < *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 64;
	while (n <= need)
		n *= 2;
	char *a = realloc(*arr, n * size);
	if (!a)
		return -1;
	memset(a + *cap * size, 0, (n - *cap) * size);
	*arr = a;
	*cap = n;
	return 0;
}

static int buf_reserve(struct priv *pv, size_t n)
{
	if (n <= pv->buf_cap)
		return 0;
	char *b = realloc(pv->buf, n * 2);
	if (!b)
		return -1;
	pv->buf = b;
	pv->buf_cap = n * 2;
	return 0;
}

struct frame { const char *s; size_t len; };

/* The trie node under parent for frame; created when new. */
static int node_get(struct mt_fold_sites *t, struct priv *pv, uint32_t parent,
		    const char *f, size_t len, uint32_t *out)
{
	if (buf_reserve(pv, len + 16))
		return -1;
	memcpy(pv->buf, &parent, sizeof(parent));
	memcpy(pv->buf + sizeof(parent), f, len);
	uint32_t id;
	int r = mt_fold_strtab_intern(pv->node_keys, pv->buf, len + sizeof(parent), &id);
	if (r < 0)
		return -1;
	if (r == 1) {
		if (grow((void **)&t->nodes, &pv->node_cap, id, sizeof(*t->nodes)))
			return -1;
		size_t kl;
		const char *k = mt_fold_strtab_get(pv->node_keys, id, &kl);
		t->nodes[id].frame = k + sizeof(parent);
		t->nodes[id].child = t->nodes[id].next = UINT32_MAX;
		t->nnodes = id + 1;
		/* link under parent now; sorted once all is added */
		uint32_t *head = parent == UINT32_MAX ? &t->root : &t->nodes[parent].child;
		t->nodes[id].next = *head;
		*head = id;
	}
	*out = id;
	return 0;
}

static const struct mt_fold_sites *sort_sites;

static int node_cmp(const void *a, const void *b)
{
	const struct mt_fold_tree_node *x = &sort_sites->nodes[*(const uint32_t *)a];
	const struct mt_fold_tree_node *y = &sort_sites->nodes[*(const uint32_t *)b];
	if (x->value.value != y->value.value)
		return x->value.value > y->value.value ? -1 : 1;
	return strcmp(x->frame, y->frame);
}

/* Sort the sibling list at *head, best first. */
static int sort_siblings(struct mt_fold_sites *t, uint32_t *head)
{
	uint32_t n = 0;
	for (uint32_t i = *head; i != UINT32_MAX; i = t->nodes[i].next)
		n++;
	if (n < 2)
		return 0;
	uint32_t *ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -1;
	n = 0;
	for (uint32_t i = *head; i != UINT32_MAX; i = t->nodes[i].next)
		ids[n++] = i;
	sort_sites = t;
	qsort(ids, n, sizeof(*ids), node_cmp);
	*head = ids[0];
	for (uint32_t i = 0; i + 1 < n; i++)
		t->nodes[ids[i]].next = ids[i + 1];
	t->nodes[ids[n - 1]].next = UINT32_MAX;
	free(ids);
	return 0;
}

static int site_cmp(const void *a, const void *b)
{
	const struct mt_fold_alloc_site *x = a, *y = b;
	if (x->value.value != y->value.value)
		return x->value.value > y->value.value ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->loc, y->loc);
}

static int path_cmp(const void *a, const void *b)
{
	const struct mt_fold_path *x = a, *y = b;
	if (x->value.value != y->value.value)
		return x->value.value > y->value.value ? -1 : 1;
	return strcmp(x->frames, y->frames);
}

int mt_fold_sites_new(struct mt_fold_sites **out, const struct mt_fold_profile *p,
		      const struct mt_fold_snapshot *s, const struct mt_fold_alloc_fns *a,
		      enum mt_fold_tree_kind tree)
{
	struct mt_fold_sites *t = calloc(1, sizeof(*t));
	struct priv *pv = calloc(1, sizeof(*pv));
	struct frame *fr = NULL;
	size_t fr_cap = 0;
	enum mt_fold_metric m = s->opt.metric;
	*out = NULL;
	if (!t || !pv)
		goto oom;
	t->priv = pv;
	t->metric = m;
	t->root = UINT32_MAX;
	pv->site_keys = mt_fold_strtab_new();
	pv->path_keys = mt_fold_strtab_new();
	pv->node_keys = mt_fold_strtab_new();
	if (!pv->site_keys || !pv->path_keys || !pv->node_keys)
		goto oom;
	unsigned skip = mt_fold_profile_prefix_frames(p);
	uint32_t nstacks = mt_fold_profile_stack_count(p);
	for (uint32_t id = 0; id < nstacks; id++) {
		const struct mt_fold_est *est;
		size_t len;
		const char *key = mt_fold_profile_stack(p, id, &len, &est);
		if (est[m].exact == 0 && est[m].n == 0)
			continue;	/* nothing of this metric */
		/* the frames, root first, without the prefix ones */
		size_t nf = 0;
		unsigned depth = 0;
		for (const char *f = key, *end = key + len; f <= end;) {
			const char *semi = memchr(f, ';', (size_t)(end - f));
			const char *stop = semi ? semi : end;
			if (depth++ >= skip) {
				if (grow((void **)&fr, &fr_cap, nf, sizeof(*fr)))
					goto oom;
				fr[nf++] = (struct frame){ f, (size_t)(stop - f) };
			}
			if (!semi)
				break;
			f = semi + 1;
		}
		if (nf == 1 && (fr[0].len == 0 || (fr[0].len == strlen(MT_FOLD_NO_STACK) &&
				memcmp(fr[0].s, MT_FOLD_NO_STACK, fr[0].len) == 0))) {
			fr[0] = (struct frame){ MT_FOLD_SITE_NO_STACK, strlen(MT_FOLD_SITE_NO_STACK) };
		}
		if (nf == 0)
			continue;	/* the prefix only: cannot be (a key has a frame) */
		size_t k = nf;
		/* An unsymbolised frame between two of the allocator's is one
		 * of its static helpers (sqlite3MemMalloc in a stripped
		 * libsqlite3): the allocator's too. */
		while (k-- > 0 && (mt_fold_is_alloc_frame(a, fr[k].s, fr[k].len) ||
				   (fr[k].s[0] == '[' && k + 1 < nf && k > 0 &&
				    mt_fold_is_alloc_frame(a, fr[k - 1].s, fr[k - 1].len))))
			;
		if (k == (size_t)-1) {	/* all the allocator's: the outermost */
			k = 0;
			t->allocator_only++;
		}
		/* the site: bare name and place */
		size_t nlen, llen;
		const char *loc;
		mt_fold_frame_split(fr[k].s, fr[k].len, &nlen, &loc, &llen);
		if (buf_reserve(pv, nlen + llen + 2))
			goto oom;
		memcpy(pv->buf, fr[k].s, nlen);
		pv->buf[nlen] = 0;
		memcpy(pv->buf + nlen + 1, loc, llen);
		uint32_t sid;
		int r = mt_fold_strtab_intern(pv->site_keys, pv->buf, nlen + 1 + llen, &sid);
		if (r < 0 || grow((void **)&t->sites, &pv->site_cap, sid, sizeof(*t->sites)))
			goto oom;
		struct mt_fold_alloc_site *site = &t->sites[sid];
		mt_fold_est_merge(&site->acc, &est[m]);
		mt_fold_est_merge(&site->allocs_acc, &est[MT_FOLD_ALLOC_OBJECTS]);
		site->events += (uint64_t)est[MT_FOLD_SAMPLES].exact;
		if (mt_fold_cells_merge(&site->cells, mt_fold_profile_stack_cells(p, id)))
			goto oom;
		/* the path: the site id, then the callers nearest first */
		size_t plen = sizeof(sid);
		for (size_t j = k; j-- > 0;)
			plen += fr[j].len + 1;
		if (buf_reserve(pv, plen + 1))
			goto oom;
		memcpy(pv->buf, &sid, sizeof(sid));
		size_t o = sizeof(sid);
		for (size_t j = k; j-- > 0;) {
			memcpy(pv->buf + o, fr[j].s, fr[j].len);
			o += fr[j].len;
			if (j)
				pv->buf[o++] = ';';
		}
		uint32_t pid;
		r = mt_fold_strtab_intern(pv->path_keys, pv->buf, o, &pid);
		if (r < 0 || grow((void **)&pv->paths, &pv->path_cap, pid, sizeof(*pv->paths)) ||
		    grow((void **)&pv->path_site, &pv->path_site_cap, pid,
			 sizeof(*pv->path_site)))
			goto oom;
		pv->path_site[pid] = sid;
		mt_fold_est_merge(&pv->paths[pid].acc, &est[m]);
		/* the tree */
		uint32_t node = UINT32_MAX;
		if (tree == MT_FOLD_TREE_DOWN) {
			for (size_t j = 0; j <= k; j++) {
				if (node_get(t, pv, node, fr[j].s, fr[j].len, &node))
					goto oom;
				mt_fold_est_merge(&t->nodes[node].acc, &est[m]);
			}
		} else if (tree == MT_FOLD_TREE_CALLERS) {
			for (size_t j = k + 1; j-- > 0;) {
				if (node_get(t, pv, node, fr[j].s, fr[j].len, &node))
					goto oom;
				mt_fold_est_merge(&t->nodes[node].acc, &est[m]);
			}
		}
	}
	t->nsites = mt_fold_strtab_count(pv->site_keys);
	double conf = s->opt.conf;
	for (uint32_t i = 0; i < t->nsites; i++) {
		struct mt_fold_alloc_site *site = &t->sites[i];
		size_t kl;
		site->name = mt_fold_strtab_get(pv->site_keys, i, &kl);
		site->loc = site->name + strlen(site->name) + 1;
		mt_fold_est_finish(&site->acc, conf, s->wfb[m], &site->value);
		mt_fold_value_clip(&site->value, s->bound[m]);
		mt_fold_est_finish(&site->allocs_acc, conf, s->wfb[MT_FOLD_ALLOC_OBJECTS],
				   &site->allocs);
		mt_fold_value_clip(&site->allocs, s->bound[MT_FOLD_ALLOC_OBJECTS]);
	}
	/* paths: count per site, then place them in site order */
	uint32_t np = mt_fold_strtab_count(pv->path_keys);
	struct mt_fold_path *all = calloc((size_t)np + 1, sizeof(*all));
	uint32_t *at = calloc((size_t)t->nsites + 1, sizeof(*at));
	if (!all || !at) {
		free(all);
		free(at);
		goto oom;
	}
	for (uint32_t i = 0; i < np; i++)
		t->sites[pv->path_site[i]].npaths++;
	uint32_t o = 0;
	for (uint32_t i = 0; i < t->nsites; i++) {
		at[i] = o;
		o += t->sites[i].npaths;
	}
	for (uint32_t i = 0; i < np; i++) {
		uint32_t sid = pv->path_site[i];
		struct mt_fold_path *ph = &all[at[sid]++];
		*ph = pv->paths[i];
		ph->frames = mt_fold_strtab_get(pv->path_keys, i, NULL) + sizeof(uint32_t);
		mt_fold_est_finish(&ph->acc, conf, s->wfb[m], &ph->value);
		mt_fold_value_clip(&ph->value, s->bound[m]);
	}
	free(pv->paths);
	pv->paths = all;	/* freed with the sites */
	for (uint32_t i = 0; i < t->nsites; i++) {
		struct mt_fold_alloc_site *site = &t->sites[i];
		site->paths = all + at[i] - site->npaths;
		qsort(site->paths, site->npaths, sizeof(*site->paths), path_cmp);
	}
	free(at);
	if (t->nsites)
		qsort(t->sites, t->nsites, sizeof(*t->sites), site_cmp);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		mt_fold_est_finish(&t->nodes[i].acc, conf, s->wfb[m], &t->nodes[i].value);
		mt_fold_value_clip(&t->nodes[i].value, s->bound[m]);
	}
	if (t->nnodes) {
		if (sort_siblings(t, &t->root))
			goto oom;
		for (uint32_t i = 0; i < t->nnodes; i++)
			if (sort_siblings(t, &t->nodes[i].child))
				goto oom;
	}
	free(fr);
	*out = t;
	return 0;
oom:
	free(fr);
	mt_fold_sites_free(t);
	if (!t)
		free(pv);
	return MT_FOLD_ENOMEM;
}

void mt_fold_sites_free(struct mt_fold_sites *t)
{
	if (!t)
		return;
	struct priv *pv = t->priv;
	for (size_t i = 0; t->sites && pv && i < pv->site_cap; i++)
		mt_fold_cells_release(&t->sites[i].cells);
	if (pv) {
		mt_fold_strtab_free(pv->site_keys);
		mt_fold_strtab_free(pv->path_keys);
		mt_fold_strtab_free(pv->node_keys);
		free(pv->path_site);
		free(pv->paths);
		free(pv->buf);
		free(pv);
	}
	free(t->sites);
	free(t->nodes);
	free(t);
}
