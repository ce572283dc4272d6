/* mt-fold --pprof; see pprof.h.  The messages are built in flat arrays
 * (their pointers set once every array has its final place) and packed by
 * protobuf-c; zlib writes the gzip stream. */
#include "fold/pprof.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "fold/profile.pb-c.h"
#include "common/cli.h"
#include "common/trust.h"
#include "fold/strtab.h"

#define NTYPES_MAX 10

struct sample_at {
	size_t loc, nloc, val, lab, nlab;
};

struct loc_at {
	uint32_t mod;
	uint64_t addr;
	size_t line, nline;
};

struct enc {
	struct mt_fold_strtab *strs, *funcs, *locs;
	Mtpprof__Function *fn;
	size_t nfn, capfn;
	struct loc_at *loc;
	size_t nloc, caploc;
	Mtpprof__Line *line;
	size_t nline, capline;
	struct sample_at *smp;
	size_t nsmp, capsmp;
	uint64_t *locid;
	size_t nlocid, caplocid;
	int64_t *val;
	size_t nval, capval;
	Mtpprof__Label *lab;
	size_t nlab, caplab;
	char *tmp;
	size_t captmp;
	int oom;
	int have_lines;
	uint64_t clamped;
};

/* Room for one more element in *arr (n used, *cap allocated). */
static int grow(struct enc *e, void **arr, size_t n, size_t *cap, size_t elem, size_t more)
{
	if (n + more <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n + more)
		c *= 2;
	void *p = realloc(*arr, c * elem);
	if (!p) {
		e->oom = 1;
		return -1;
	}
	*arr = p;
	*cap = c;
	return 0;
}
#define GROW(e, a, more) grow((e), (void **)&(e)->a, (e)->n##a, &(e)->cap##a, sizeof(*(e)->a), (more))

static int64_t str_id(struct enc *e, const char *s, size_t len)
{
	uint32_t id;
	if (mt_fold_strtab_intern(e->strs, s, len, &id) < 0) {
		e->oom = 1;
		return 0;
	}
	return id;
}

static int64_t cstr_id(struct enc *e, const char *s)
{
	return str_id(e, s, strlen(s));
}

static char *tmp(struct enc *e, size_t n)
{
	if (n > e->captmp) {
		char *p = realloc(e->tmp, n);
		if (!p) {
			e->oom = 1;
			return NULL;
		}
		e->tmp = p;
		e->captmp = n;
	}
	return e->tmp;
}

static int str_eq(struct mt_fold_str a, struct mt_fold_str b)
{
	return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* The function of frame f: its id (1-based).  Its file is the one its line
 * is in (pprof gives a line no file of its own); its first line only where
 * the declaration is in that file too (a definition that follows a
 * prototype takes the header's file and line in DWARF). */
static uint64_t function_id(struct enc *e, const struct mt_fold_frame *f)
{
	int have_file = f->file.len && !mt_fold_str_is(f->file, "??");
	struct mt_fold_str file = have_file ? f->file : f->fn_file;
	if (!file.len)
		file.s = "";	/* never NULL into memcpy */
	int64_t start = f->fn_file.len && str_eq(f->fn_file, file) ? f->start : 0;
	size_t n = f->name.len + 1 + file.len + 24;
	char *k = tmp(e, n);
	if (!k)
		return 0;
	memcpy(k, f->name.s, f->name.len);
	k[f->name.len] = '\0';
	memcpy(k + f->name.len + 1, file.s, file.len);
	size_t kl = f->name.len + 1 + file.len;
	kl += (size_t)snprintf(k + kl, 24, "\n%lld", (long long)start);
	uint32_t id;
	int r = mt_fold_strtab_intern(e->funcs, k, kl, &id);
	if (r < 0) {
		e->oom = 1;
		return 0;
	}
	if (r == 1) {
		if (GROW(e, fn, 1))
			return 0;
		Mtpprof__Function *fn = &e->fn[e->nfn++];
		mtpprof__function__init(fn);
		fn->id = id + 1;
		fn->name = fn->system_name = str_id(e, f->name.s, f->name.len);
		fn->filename = str_id(e, file.s, file.len);
		fn->start_line = start;
	}
	return id + 1;
}

/* The location of the physical frame made of frames s[0..len) (root to
 * leaf, ';'-joined): its id (1-based), 0 when out of memory. */
static uint64_t location_id(struct enc *e, const char *s, size_t len)
{
	uint32_t id;
	int r = mt_fold_strtab_intern(e->locs, s, len, &id);
	if (r < 0) {
		e->oom = 1;
		return 0;
	}
	if (r == 0)
		return id + 1;
	if (GROW(e, loc, 1))
		return 0;
	struct loc_at *l = &e->loc[e->nloc++];
	memset(l, 0, sizeof(*l));
	/* Lines leaf first: the caller (the physical frame's function) last. */
	size_t nframes = 1;
	for (size_t i = 0; i < len; i++)
		nframes += s[i] == ';';
	if (GROW(e, line, nframes))
		return 0;
	l->line = e->nline;
	l->nline = nframes;
	e->nline += nframes;
	size_t k = nframes;
	const char *p = s, *end = s + len;
	while (k > 0) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t fl = semi ? (size_t)(semi - p) : (size_t)(end - p);
		struct mt_fold_frame f;
		mt_fold_frame_parse(p, fl, &f);
		if (f.mod) {
			l->mod = f.mod;
			l->addr = f.addr;
		}
		if (f.file.len)
			e->have_lines = 1;
		Mtpprof__Line *ln = &e->line[l->line + --k];
		mtpprof__line__init(ln);
		ln->function_id = function_id(e, &f);
		ln->line = f.line;
		p = semi ? semi + 1 : end;
	}
	return id + 1;
}

static int64_t value_of(struct enc *e, const struct mt_fold_est *est)
{
	double v = (double)est->exact + est->y;
	if (!(v < 9223372036854775807.0)) {
		e->clamped++;
		return INT64_MAX;
	}
	return (int64_t)llround(v);
}

/* cpu-clock and task-clock count nanoseconds, also as perf names them
 * with their terms: "cpu-clock/freq=2000/", "cpu-clock:u". */
static int is_clock(const char *event)
{
	if (!event)
		return 0;
	size_t n = strncmp(event, "cpu-clock", 9) == 0 ? 9
		 : strncmp(event, "task-clock", 10) == 0 ? 10 : 0;
	return n && (event[n] == '\0' || event[n] == '/' || event[n] == ':');
}

/* One stack of group g as a sample. */
static void add_sample(struct enc *e, const struct mt_fold_pprof_group *g, unsigned nprefix,
		       const char *key, size_t klen, const struct mt_fold_est *est,
		       const enum mt_fold_metric *types, unsigned ntypes, const int64_t *label_keys)
{
	int64_t v[NTYPES_MAX];
	int any = 0;
	for (unsigned i = 0; i < ntypes; i++) {
		v[i] = value_of(e, &est[types[i]]);
		any |= v[i] != 0;
	}
	if (!any)
		return;
	/* The prefix frames: comm, "pid N", "tid N", and the input's labels
	 * ("k=v,k=v") when the profile has them. */
	const char *pf[4];
	size_t pl[4];
	const char *s = key, *end = key + klen;
	for (unsigned i = 0; i < nprefix; i++) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		if (!semi) {
			e->oom = -1;	/* not a key with prefixes */
			return;
		}
		pf[i] = s;
		pl[i] = (size_t)(semi - s);
		s = semi + 1;
	}
	if (pl[1] > 4 && memcmp(pf[1], "pid ", 4) == 0)
		pf[1] += 4, pl[1] -= 4;
	if (pl[2] > 4 && memcmp(pf[2], "tid ", 4) == 0)
		pf[2] += 4, pl[2] -= 4;
	size_t ninput = 0;
	if (nprefix == 4 && pl[3])
		for (size_t i = 0, n = 1; i <= pl[3]; i++)
			if (i == pl[3] || pf[3][i] == ',')
				ninput = n++;
	if (GROW(e, smp, 1) || GROW(e, val, ntypes) || GROW(e, lab, 3 + g->nlabels + ninput))
		return;
	struct sample_at *sa = &e->smp[e->nsmp];
	sa->val = e->nval;
	memcpy(e->val + e->nval, v, ntypes * sizeof(*v));
	e->nval += ntypes;
	sa->lab = e->nlab;
	sa->nlab = 3 + g->nlabels + ninput;
	for (unsigned i = 0; i < 3 + g->nlabels; i++) {
		Mtpprof__Label *lb = &e->lab[e->nlab++];
		mtpprof__label__init(lb);
		lb->key = label_keys[i];
		lb->str = i < 3 ? str_id(e, pf[i], pl[i]) : cstr_id(e, g->labels[i - 3].value);
	}
	for (const char *l = pf[3], *lend = pf[3] + (ninput ? pl[3] : 0); l < lend;) {
		const char *comma = memchr(l, ',', (size_t)(lend - l));
		const char *ve = comma ? comma : lend;
		const char *eq = memchr(l, '=', (size_t)(ve - l));
		Mtpprof__Label *lb = &e->lab[e->nlab++];
		mtpprof__label__init(lb);
		lb->key = str_id(e, l, eq ? (size_t)(eq - l) : (size_t)(ve - l));
		lb->str = eq ? str_id(e, eq + 1, (size_t)(ve - eq - 1)) : 0;
		l = comma ? comma + 1 : lend;
	}
	/* Locations: a frame without "_[i]" begins a physical frame, the
	 * inlined ones after it belong to it.  Written leaf first. */
	size_t first_loc = e->nlocid;
	const char *group = s;
	while (s <= end) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		const char *next = semi ? semi + 1 : end + 1;
		/* does the next frame start a new physical frame? */
		int ends = 1;
		if (semi) {
			const char *semi2 = memchr(next, ';', (size_t)(end - next));
			struct mt_fold_frame f;
			mt_fold_frame_parse(next, semi2 ? (size_t)(semi2 - next) : (size_t)(end - next), &f);
			ends = !f.inlined;
		}
		if (ends) {
			const char *gend = semi ? semi : end;
			uint64_t id = location_id(e, group, (size_t)(gend - group));
			if (!id || GROW(e, locid, 1))
				return;
			e->locid[e->nlocid++] = id;
			group = next;
		}
		if (!semi)
			break;
		s = next;
	}
	for (size_t a = first_loc, b = e->nlocid; a + 1 < b; a++, b--) {
		uint64_t t = e->locid[a];
		e->locid[a] = e->locid[b - 1];
		e->locid[b - 1] = t;
	}
	sa->loc = first_loc;
	sa->nloc = e->nlocid - first_loc;
	e->nsmp++;
}

static void enc_free(struct enc *e)
{
	mt_fold_strtab_free(e->strs);
	mt_fold_strtab_free(e->funcs);
	mt_fold_strtab_free(e->locs);
	free(e->fn);
	free(e->loc);
	free(e->line);
	free(e->smp);
	free(e->locid);
	free(e->val);
	free(e->lab);
	free(e->tmp);
}

int mt_fold_pprof_encode(const struct mt_fold_pprof_group *g, unsigned ngroups,
			 const struct mt_fold_locs *locs, uint8_t **buf, size_t *len,
			 struct mt_fold_pprof_stats *st)
{
	struct enc e = { 0 };
	int ret = MT_FOLD_ENOMEM;
	void **ptrs = NULL;
	Mtpprof__Mapping *maps = NULL;
	uint32_t *order = NULL;
	uint64_t *votes = NULL;
	Mtpprof__Location *lo = NULL;
	Mtpprof__Sample *sm = NULL;
	Mtpprof__ValueType vt[NTYPES_MAX + 1];
	Mtpprof__Profile pr = MTPPROF__PROFILE__INIT;
	int64_t comments[8];
	size_t ncomments = 0;
	*buf = NULL;
	*len = 0;
	memset(st, 0, sizeof(*st));
	if (!(e.strs = mt_fold_strtab_new()) || !(e.funcs = mt_fold_strtab_new()) ||
	    !(e.locs = mt_fold_strtab_new()))
		goto out;
	cstr_id(&e, "");	/* string 0 */

	/* What the inputs hold decides the sample types. */
	uint64_t allocs = 0, samples = 0, rate = 0, every = 0, ticks = 0, seqs = 0;
	const char *event = NULL;
	int events_differ = 0;
	mt_fold_u128 lost = 0;
	uint64_t bad = 0;
	for (unsigned i = 0; i < ngroups; i++) {
		const struct mt_fold_counts *c = mt_fold_profile_counts(g[i].p);
		allocs += c->kind[MT_FOLD_ALLOC] + c->kind[MT_FOLD_FREE];
		ticks += c->kind[MT_FOLD_TICK];
		seqs += c->seq_allocs;
		samples += c->kind[MT_FOLD_SAMPLE];
		if (c->sample_allocs && c->rate_max > rate)
			rate = c->rate_max;
		if (c->trace_allocs && c->every_max > every)
			every = c->every_max;
		if (c->kind[MT_FOLD_SAMPLE]) {
			if (!event)
				event = c->event;
			else if (!c->event || strcmp(event, c->event) != 0)
				events_differ = 1;
		}
		lost += c->lost_events;
		bad += c->bad_lines;
	}
	if (events_differ)
		event = NULL;
	enum mt_fold_metric types[NTYPES_MAX];
	unsigned ntypes = 0;
	const char *names[NTYPES_MAX][2];
	const char *evname = event && *event ? event : "events";
	if (allocs || !samples) {
		static const struct { enum mt_fold_metric m; const char *t, *u; } heap[] = {
			{ MT_FOLD_ALLOC_OBJECTS, "alloc_objects", "count" },
			{ MT_FOLD_ALLOC_BYTES, "alloc_space", "bytes" },
			{ MT_FOLD_INUSE_OBJECTS, "inuse_objects", "count" },
			{ MT_FOLD_INUSE_BYTES, "inuse_space", "bytes" },
		};
		for (unsigned i = 0; i < 4; i++) {
			types[ntypes] = heap[i].m;
			names[ntypes][0] = heap[i].t;
			names[ntypes++][1] = heap[i].u;
		}
		/* live at each process's peak, and temporaries: only when
		 * the input carries what they need (ticks, seq=) */
		static const struct { enum mt_fold_metric m; const char *t, *u; } more[] = {
			{ MT_FOLD_PEAK_OBJECTS, "peak_objects", "count" },
			{ MT_FOLD_PEAK_BYTES, "peak_space", "bytes" },
			{ MT_FOLD_TEMP_OBJECTS, "temp_objects", "count" },
			{ MT_FOLD_TEMP_BYTES, "temp_space", "bytes" },
		};
		for (unsigned i = 0; i < 4; i++) {
			if (i < 2 ? !ticks : !seqs)
				continue;
			types[ntypes] = more[i].m;
			names[ntypes][0] = more[i].t;
			names[ntypes++][1] = more[i].u;
		}
	}
	if (samples) {
		types[ntypes] = MT_FOLD_SAMPLES;
		names[ntypes][0] = "samples";
		names[ntypes++][1] = "count";
		types[ntypes] = MT_FOLD_PERIOD;
		names[ntypes][0] = is_clock(event) ? "cpu" : evname;
		names[ntypes++][1] = is_clock(event) ? "nanoseconds" : "count";
	}
	for (unsigned i = 0; i < ntypes; i++) {
		mtpprof__value_type__init(&vt[i]);
		vt[i].type = cstr_id(&e, names[i][0]);
		vt[i].unit = cstr_id(&e, names[i][1]);
	}
	Mtpprof__ValueType *vtp[NTYPES_MAX];
	for (unsigned i = 0; i < ntypes; i++)
		vtp[i] = &vt[i];
	pr.n_sample_type = ntypes;
	pr.sample_type = vtp;
	mtpprof__value_type__init(&vt[NTYPES_MAX]);
	pr.period_type = &vt[NTYPES_MAX];
	if (allocs || !samples) {
		/* Sample mode: bytes between sample points; trace mode: every
		 * Nth call recorded. */
		pr.period_type->type = cstr_id(&e, rate || !every ? "space" : "calls");
		pr.period_type->unit = cstr_id(&e, rate || !every ? "bytes" : "count");
		pr.period = (int64_t)(rate ? rate : every);
		pr.default_sample_type = cstr_id(&e, "alloc_space");
	} else {
		pr.period_type->type = vt[ntypes - 1].type;
		pr.period_type->unit = vt[ntypes - 1].unit;
		pr.default_sample_type = vt[ntypes - 1].type;
	}

	int64_t label_keys[3 + 16];
	label_keys[0] = cstr_id(&e, "comm");
	label_keys[1] = cstr_id(&e, "pid");
	label_keys[2] = cstr_id(&e, "tid");
	double period_sum = 0, sample_sum = 0;
	for (unsigned i = 0; i < ngroups && !e.oom; i++) {
		if (g[i].nlabels > 16) {
			ret = MT_FOLD_ERANGE;
			goto out;
		}
		for (unsigned j = 0; j < g[i].nlabels; j++)
			label_keys[3 + j] = cstr_id(&e, g[i].labels[j].key);
		unsigned nprefix = mt_fold_profile_prefix_frames(g[i].p);
		if (nprefix != 3 && nprefix != 4) {
			ret = MT_FOLD_ESTATE;
			goto out;
		}
		uint32_t n = mt_fold_profile_stack_count(g[i].p);
		for (uint32_t id = 0; id < n && !e.oom; id++) {
			size_t klen;
			const struct mt_fold_est *est;
			const char *key = mt_fold_profile_stack(g[i].p, id, &klen, &est);
			add_sample(&e, &g[i], nprefix, key, klen, est, types, ntypes, label_keys);
			period_sum += (double)est[MT_FOLD_PERIOD].exact + est[MT_FOLD_PERIOD].y;
			sample_sum += (double)est[MT_FOLD_SAMPLES].exact + est[MT_FOLD_SAMPLES].y;
		}
	}
	if (e.oom < 0) {
		ret = MT_FOLD_ESTATE;
		goto out;
	}
	if (!(allocs || !samples) && sample_sum > 0)
		pr.period = llround(period_sum / sample_sum);
	char text[160];
	if (lost) {
		char num[40];
		snprintf(text, sizeof(text), "mt-fold: the capture lost %s events",
			 mt_fold_u128_str(num, lost));
		comments[ncomments++] = cstr_id(&e, text);
	}
	if (bad) {
		snprintf(text, sizeof(text), "mt-fold: %llu bad input lines skipped",
			 (unsigned long long)bad);
		comments[ncomments++] = cstr_id(&e, text);
	}
	if (locs && mt_fold_locs_unknown(locs)) {
		snprintf(text, sizeof(text), "mt-fold: %llu frames named no module line: "
			 "written without an address", (unsigned long long)mt_fold_locs_unknown(locs));
		comments[ncomments++] = cstr_id(&e, text);
	}
	pr.n_comment = ncomments;
	pr.comment = comments;

	/* Mappings: every module the locations name.  pprof takes the first
	 * for the program ("File:" and its build-id in its headers): the
	 * module at the root of the most samples (_start's) goes first. */
	uint32_t nmod = locs ? mt_fold_locs_module_count(locs) : 0;
	if (!(maps = calloc(nmod + 1, sizeof(*maps))) ||
	    !(order = calloc(nmod + 1, sizeof(*order))) ||
	    !(votes = calloc(nmod + 1, sizeof(*votes))))
		goto out;
	for (size_t i = 0; i < e.nsmp; i++) {
		for (size_t k = e.smp[i].nloc; k-- > 0;) {
			uint32_t m = e.loc[e.locid[e.smp[i].loc + k] - 1].mod;
			if (m && m <= nmod) {
				votes[m]++;
				break;
			}
		}
	}
	uint32_t first = 1;
	for (uint32_t m = 1; m <= nmod; m++)
		if (votes[m] > votes[first])
			first = m;
	for (uint32_t m = 1; m <= nmod; m++)	/* module m -> mapping id */
		order[m] = m == first ? 1 : m < first ? m + 1 : m;
	for (uint32_t m = 1; m <= nmod; m++) {
		const char *bid, *path;
		mt_fold_locs_module(locs, m, &bid, &path);
		Mtpprof__Mapping *mp = &maps[order[m] - 1];
		mtpprof__mapping__init(mp);
		mp->id = order[m];
		mp->filename = cstr_id(&e, path);
		mp->build_id = cstr_id(&e, bid);
		mp->has_functions = 1;
		mp->has_filenames = mp->has_line_numbers = e.have_lines;
		mp->has_inline_frames = 1;
		mp->memory_start = UINT64_MAX;
	}
	for (size_t i = 0; i < e.nloc; i++) {
		uint32_t m = e.loc[i].mod;
		if (!m || m > nmod) {
			e.loc[i].mod = 0;
			continue;
		}
		e.loc[i].mod = order[m];
		Mtpprof__Mapping *mp = &maps[order[m] - 1];
		if (e.loc[i].addr < mp->memory_start)
			mp->memory_start = e.loc[i].addr;
		if (e.loc[i].addr >= mp->memory_limit)
			mp->memory_limit = e.loc[i].addr + 1;
	}
	for (uint32_t m = 0; m < nmod; m++)
		if (maps[m].memory_start == UINT64_MAX)
			maps[m].memory_start = 0;
	if (e.oom)
		goto out;

	/* The pointer arrays, now that every array has its place. */
	uint32_t nstr = mt_fold_strtab_count(e.strs);
	size_t nptr = nmod + e.nloc + e.nline + e.nfn + e.nsmp * 2 + e.nlab + nstr;
	if (!(ptrs = malloc((nptr + 1) * sizeof(*ptrs))) ||
	    !(lo = calloc(e.nloc + 1, sizeof(*lo))) || !(sm = calloc(e.nsmp + 1, sizeof(*sm))))
		goto out;
	void **pp = ptrs;
	pr.n_mapping = nmod;
	pr.mapping = (Mtpprof__Mapping **)pp;
	for (uint32_t m = 0; m < nmod; m++)
		*pp++ = &maps[m];
	Mtpprof__Line **lines = (Mtpprof__Line **)pp;
	for (size_t i = 0; i < e.nline; i++)
		*pp++ = &e.line[i];
	pr.n_location = e.nloc;
	pr.location = (Mtpprof__Location **)pp;
	for (size_t i = 0; i < e.nloc; i++) {
		mtpprof__location__init(&lo[i]);
		lo[i].id = i + 1;
		lo[i].mapping_id = e.loc[i].mod;
		lo[i].address = lo[i].mapping_id ? e.loc[i].addr : 0;
		lo[i].n_line = e.loc[i].nline;
		lo[i].line = lines + e.loc[i].line;
		*pp++ = &lo[i];
	}
	pr.n_function = e.nfn;
	pr.function = (Mtpprof__Function **)pp;
	for (size_t i = 0; i < e.nfn; i++)
		*pp++ = &e.fn[i];
	Mtpprof__Label **labs = (Mtpprof__Label **)pp;
	for (size_t i = 0; i < e.nlab; i++)
		*pp++ = &e.lab[i];
	pr.n_sample = e.nsmp;
	pr.sample = (Mtpprof__Sample **)pp;
	for (size_t i = 0; i < e.nsmp; i++) {
		mtpprof__sample__init(&sm[i]);
		sm[i].n_location_id = e.smp[i].nloc;
		sm[i].location_id = e.locid + e.smp[i].loc;
		sm[i].n_value = ntypes;
		sm[i].value = e.val + e.smp[i].val;
		sm[i].n_label = e.smp[i].nlab;
		sm[i].label = labs + e.smp[i].lab;
		*pp++ = &sm[i];
	}
	pr.n_string_table = nstr;
	pr.string_table = (char **)pp;
	for (uint32_t i = 0; i < nstr; i++)
		*pp++ = (char *)mt_fold_strtab_get(e.strs, i, NULL);

	size_t size = mtpprof__profile__get_packed_size(&pr);
	uint8_t *out = malloc(size ? size : 1);
	if (!out)
		goto out;
	*len = mtpprof__profile__pack(&pr, out);
	*buf = out;
	st->samples = e.nsmp;
	st->locations = e.nloc;
	st->functions = e.nfn;
	st->mappings = nmod;
	st->clamped = e.clamped;
	ret = 0;
out:
	free(ptrs);
	free(maps);
	free(order);
	free(votes);
	free(lo);
	free(sm);
	enc_free(&e);
	return ret;
}

int mt_fold_pprof_write(const char *path, const struct mt_fold_pprof_group *g,
			unsigned ngroups, const struct mt_fold_locs *locs,
			struct mt_fold_pprof_stats *st)
{
	uint8_t *buf;
	size_t len;
	int r = mt_fold_pprof_encode(g, ngroups, locs, &buf, &len, st);
	if (r)
		return r;
	/* 0600, as every output of mt's (common/trust.h) */
	int fd = strcmp(path, "-") == 0 ? -1 : mt_open_output(path);
	FILE *f = strcmp(path, "-") == 0 ? stdout : fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return MT_FOLD_EIO;
	}
	/* gzip (deflate with a gzip header: windowBits 15 + 16). */
	z_stream z = { 0 };
	r = 0;
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		r = MT_FOLD_ENOMEM;
		goto close;
	}
	uint8_t out[1 << 16];
	z.next_in = buf;
	z.avail_in = (uInt)(len > (1u << 30) ? (1u << 30) : len);	/* uInt: in parts */
	size_t left = len - z.avail_in;
	int zr;
	do {
		if (z.avail_in == 0 && left) {
			size_t k = left > (1u << 30) ? (1u << 30) : left;
			z.avail_in = (uInt)k;
			left -= k;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		size_t have = sizeof(out) - z.avail_out;
		if (have && fwrite(out, 1, have, f) != have) {
			r = MT_FOLD_EIO;
			break;
		}
	} while (zr != Z_STREAM_END && zr != Z_STREAM_ERROR);
	if (!r && zr != Z_STREAM_END)
		r = MT_FOLD_ENOMEM;
	deflateEnd(&z);
close:
	free(buf);
	if (f == stdout) {
		if (fflush(f) && !r)
			r = MT_FOLD_EIO;
	} else {
		int saved = errno;
		if (fclose(f) && !r)
			r = MT_FOLD_EIO;
		else
			errno = saved;
	}
	return r;
}

/* arg as a label, named in messages as where ("--label 'host=a'"). */
static int label_check(const char *where, char *arg, struct mt_fold_label *labels, unsigned *n,
		       unsigned max)
{
	char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;
	if (!eq || !klen)
		return mt_error("%s: a label is KEY=VALUE", where);
	for (size_t i = 0; i < klen; i++) {
		char c = arg[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return mt_error("%s: a key is letters, digits, '_', '.' and '-'", where);
	}
	static const char *const taken[] = { "comm", "pid", "tid" };
	for (unsigned i = 0; i < 3; i++)
		if (klen == strlen(taken[i]) && memcmp(arg, taken[i], klen) == 0)
			return mt_error("%s: %s is a label of every sample already", where,
					taken[i]);
	for (unsigned i = 0; i < *n; i++)
		if (strlen(labels[i].key) == klen && memcmp(labels[i].key, arg, klen) == 0)
			return mt_error("%s: %.*s is given twice", where, (int)klen, arg);
	if (*n >= max)
		return mt_error("%s: at most %u labels", where, max);
	*eq = '\0';	/* arg lives on: a command-line argument, or the caller's */
	labels[*n].key = arg;
	labels[*n].value = eq + 1;
	(*n)++;
	return 0;
}

int mt_fold_pprof_label(char *arg, struct mt_fold_label *labels, unsigned *n, unsigned max)
{
	char where[300];
	snprintf(where, sizeof(where), "--label '%.280s'", arg);
	return label_check(where, arg, labels, n, max);
}

int mt_fold_pprof_input_labels(char *arg, const struct mt_fold_label *global, unsigned nglobal,
			       const char **labels)
{
	*labels = NULL;
	char *at = strrchr(arg, '@');
	if (!at || !strchr(at, '='))
		return 0;
	struct stat st;
	if (stat(arg, &st) == 0)
		return 0;	/* a file of that name: the name wins */
	struct mt_fold_label l[16];
	unsigned n = 0;
	char copy[4096], where[300];
	size_t len = strlen(at + 1);
	snprintf(where, sizeof(where), "'%.280s'", arg);
	if (len >= sizeof(copy))
		return mt_error("%s: labels longer than %zu bytes", where, sizeof(copy) - 1);
	memcpy(copy, at + 1, len + 1);
	if (strchr(copy, ';'))
		return mt_error("%s: a label holds no ';'", where);
	for (char *item = copy, *next; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (label_check(where, item, l, &n, 16 - nglobal))
			return -1;
		for (unsigned i = 0; i < nglobal; i++)
			if (strcmp(global[i].key, l[n - 1].key) == 0)
				return mt_error("%s: %s is given by --label too", where,
						global[i].key);
	}
	*at = '\0';	/* arg: the file's name from now on */
	*labels = at + 1;
	return 1;
}

int mt_fold_pprof_inputs(char **args, int n, const struct mt_fold_label *global,
			 unsigned nglobal, const char ***input_labels)
{
	*input_labels = NULL;
	for (int i = 0; i < n; i++) {
		const char *l;
		int r = mt_fold_pprof_input_labels(args[i], global, nglobal, &l);
		if (r < 0) {
			free(*input_labels);
			*input_labels = NULL;
			return -1;
		}
		if (r && !*input_labels && !(*input_labels = calloc((size_t)n, sizeof(**input_labels))))
			return MT_FOLD_ENOMEM;
		if (r)
			(*input_labels)[i] = l;
	}
	return 0;
}
