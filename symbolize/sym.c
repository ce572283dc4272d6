/* Symbols, inline chains and source lines per pc. */
#include "symbolize/sym.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/cu.h"
#include "symbolize/demangle.h"
#include "symbolize/scopes.h"

/* A growable string for building one entry. */
struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* A name as a frame: ';' separates frames and TAB/newline fields. */
static void buf_name(struct buf *b, const char *s)
{
	size_t start = b->len;
	buf_str(b, s);
	if (b->oom)
		return;
	for (char *p = b->p + start; *p; p++) {
		if (*p == ';')
			*p = ':';
		else if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = '_';
	}
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void buf_srcline(struct buf *b, const char *file, int line)
{
	char tmp[32];
	buf_str(b, " (");
	buf_name(b, file ? base_name(file) : "??");
	snprintf(tmp, sizeof(tmp), ":%d)", line);
	buf_str(b, tmp);
}

/* --pprof-info: " {FILE:START}", the file and first line of the function
 * a frame is in (DW_AT_decl_file, DW_AT_decl_line, through the abstract
 * origin of an inlined instance); nothing when DWARF does not say. */
static void buf_decl(struct buf *b, Dwarf_Die *die)
{
	int line = 0;
	if (!die || dwarf_decl_line(die, &line) != 0 || line <= 0)
		return;
	const char *file = dwarf_decl_file(die);
	char tmp[32];
	buf_str(b, " {");
	buf_name(b, file ? base_name(file) : "??");
	snprintf(tmp, sizeof(tmp), ":%d}", line);
	buf_str(b, tmp);
}

/* name, demangled unless asked not to. */
static void buf_symbol(struct buf *b, const char *name, const struct mt_unwind_symopts *o)
{
	char *d = o->no_demangle ? NULL : mt_unwind_demangle(name);
	buf_name(b, d ? d : name);
	free(d);
}

static void buf_addr(struct buf *b, const struct mt_unwind_module *m, uint64_t vaddr)
{
	char tmp[40];
	buf_str(b, "[");
	buf_name(b, m->name);
	snprintf(tmp, sizeof(tmp), "+0x%" PRIx64 "]", vaddr);
	buf_str(b, tmp);
}

/* A DIE's name for a frame: the linkage name (demangled) where there is
 * one, since it carries namespaces and template arguments, else DW_AT_name. */
static const char *die_name(Dwarf_Die *die, int *linkage)
{
	Dwarf_Attribute a;
	*linkage = 1;
	const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (s)
		return s;
	*linkage = 0;
	return dwarf_diename(die);
}

static void buf_die_name(struct buf *b, Dwarf_Die *die, const struct mt_unwind_symopts *o)
{
	int linkage;
	const char *s = die_name(die, &linkage);
	if (!s)
		buf_str(b, "??");
	else if (linkage)
		buf_symbol(b, s, o);
	else
		buf_name(b, s);
}

#define MAX_INLINE 64

struct chain {
	Dwarf_Die scopes[MAX_INLINE];	/* inlined subroutines, innermost first */
	int n;
	Dwarf_Die func;			/* the enclosing subprogram */
	int have_func;
	Dwarf_Die cu;			/* the unit holding the pc */
	int have_cu;
	Dwarf_Addr bias;		/* of its addresses */
	Dwarf_Files *files;		/* the CU's file table, for call_file */
};

#define MAX_PATH 256

/* Take one scope, innermost first: an inline instance joins the chain, the
 * function ends it.  @return : 1 once the function is reached. */
static int chain_take(struct chain *c, Dwarf_Die *scope)
{
	int tag = dwarf_tag(scope);
	if (tag == DW_TAG_inlined_subroutine && c->n < MAX_INLINE) {
		c->scopes[c->n++] = *scope;
	} else if (tag == DW_TAG_subprogram) {
		c->func = *scope;
		c->have_func = 1;
		return 1;
	}
	return 0;
}

/* files: also the CU's file table (call sites, for --srcline): in libdw
 * 0.188 that reads and sorts the CU's whole line table, a large part of a
 * run's symbolising time on python3 with its debug info. */
static void get_chain(struct mt_unwind_module *m, uint64_t vaddr, struct chain *c, int files)
{
	c->n = 0;
	c->have_func = 0;
	c->have_cu = 0;
	c->files = NULL;
	mt_unwind_module_load_dwarf(m);
	if (!m->dwarf)
		return;
	Dwarf_Addr bias;
	Dwarf_Die cu_die, *cu = &cu_die;
	if (!mt_unwind_cu_find(&m->cus, m->sym_mod, m->dwarf, m->dwarf_bias, vaddr, cu, &bias))
		return;
	c->cu = cu_die;
	c->have_cu = 1;
	c->bias = bias;
	Dwarf_Die path[MAX_PATH];
	/* The scope index keys DIEs by their offset in the module's DWARF: a
	 * split unit's are in a .dwo file of its own, for libdw to walk. */
	int n = mt_unwind_cu_is_split(cu) ? -1
		: mt_unwind_scopes_find(&m->scopes, cu, vaddr - bias, path, MAX_PATH);
	if (n >= 0) {
		for (int i = 0; i < n && !chain_take(c, &path[i]); i++)
			;
	} else {
		Dwarf_Die *scopes;
		n = dwarf_getscopes(cu, vaddr - bias, &scopes);
		if (n <= 0)
			return;
		/* dwarf_getscopes continues from an inlined instance into its
		 * abstract definition; the concrete nesting (which function
		 * each instance was inlined into) comes from the DIE tree. */
		Dwarf_Die inner = scopes[0];
		free(scopes);
		n = dwarf_getscopes_die(&inner, &scopes);
		if (n <= 0)
			return;
		for (int i = 0; i < n && !chain_take(c, &scopes[i]); i++)
			;
		free(scopes);
	}
	size_t nfiles;
	if (files && dwarf_getsrcfiles(cu, &c->files, &nfiles) != 0)
		c->files = NULL;
}

/* The call site an inlined subroutine was expanded at. */
static void call_site(const struct chain *c, Dwarf_Die *inl, const char **file, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &w) == 0)
		*line = (int)w;
	if (c->files && dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &w) == 0)
		*file = dwarf_filesrc(c->files, w, NULL, NULL);
}

static struct mt_unwind_sym *format(struct mt_unwind_module *m, uint64_t vaddr,
				    const struct mt_unwind_symopts *o)
{
	struct buf b = { 0 };
	struct chain c = { .n = 0 };
	int nframes = 1;

	mt_unwind_module_symbols_ready(m);

	if (!o->no_inline || o->srcline || o->pprof_info)
		get_chain(m, vaddr, &c, o->srcline);
	int ninl = o->no_inline ? 0 : c.n;

	const char *leaf_file = NULL;
	int leaf_line = 0;
	if (o->srcline && c.have_cu) {
		Dwarf_Line *l = dwarf_getsrc_die(&c.cu, vaddr - c.bias);
		if (l && dwarf_lineno(l, &leaf_line) == 0)
			leaf_file = dwarf_linesrc(l, NULL, NULL);
	}

	/* The physical frame: the ELF symbol (what perf shows), else DWARF. */
	if (o->addrs) {
		buf_addr(&b, m, vaddr);
	} else {
		if (mt_unwind_module_load_symtab(m) != 0) {
			free(b.p);
			return NULL;
		}
		const struct mt_unwind_symbol *y = mt_unwind_symtab_find(&m->symtab, vaddr);
		if (!y) {
			/* A return address at a function's first byte (the signal
			 * trampoline __restore_rt): pc - 1 is just before it. */
			y = mt_unwind_symtab_find(&m->symtab, vaddr + 1);
			if (y && y->addr != vaddr + 1)
				y = NULL;
		}
		const char *name = y ? mt_unwind_symtab_name(&m->symtab, y) : NULL;
		char plain[256];
		const char *at = name ? strchr(name, '@') : NULL;
		if (at && at > name && (size_t)(at - name) < sizeof(plain)) {
			/* "memcpy@@GLIBC_2.14": the version is not part of the name */
			memcpy(plain, name, (size_t)(at - name));
			plain[at - name] = '\0';
			name = plain;
		}
		if (name && *name)
			buf_symbol(&b, name, o);
		else if (c.have_func)
			buf_die_name(&b, &c.func, o);
		else
			buf_addr(&b, m, vaddr);
	}
	if (o->srcline) {
		const char *file = leaf_file;
		int line = leaf_line;
		if (c.n)
			call_site(&c, &c.scopes[c.n - 1], &file, &line);
		buf_srcline(&b, file, line);
	}
	if (o->pprof_info)
		buf_decl(&b, c.have_func ? &c.func : NULL);
	for (int i = ninl - 1; i >= 0; i--) {
		buf_str(&b, ";");
		if (o->addrs)
			buf_addr(&b, m, vaddr);
		else
			buf_die_name(&b, &c.scopes[i], o);
		buf_str(&b, "_[i]");
		nframes++;
		if (o->srcline) {
			const char *file = leaf_file;
			int line = leaf_line;
			if (i > 0)
				call_site(&c, &c.scopes[i - 1], &file, &line);
			buf_srcline(&b, file, line);
		}
		if (o->pprof_info)
			buf_decl(&b, &c.scopes[i]);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	struct mt_unwind_sym *s = malloc(sizeof(*s) + b.len + 1);
	if (s) {
		s->len = (uint32_t)b.len;
		s->nframes = (uint16_t)nframes;
		memcpy(s->text, b.p ? b.p : "", b.len + 1);
	}
	free(b.p);
	return s;
}

const struct mt_unwind_sym *mt_unwind_sym_get(struct mt_unwind_module *m, uint64_t vaddr,
					      const struct mt_unwind_symopts *o)
{
	uint64_t v;
	if (mt_unwind_hashmap_get(&m->frames, vaddr, &v))
		return (const void *)(uintptr_t)v;
	if (vaddr == MT_UNWIND_HASH_EMPTY && m->frame_no_key)
		return m->frame_no_key;
	pthread_mutex_lock(&m->lock);	/* libdw: see struct mt_unwind_module */
	struct mt_unwind_sym *s = format(m, vaddr, o);
	pthread_mutex_unlock(&m->lock);
	if (!s)
		return NULL;
	int rc = mt_unwind_hashmap_put(&m->frames, vaddr, (uintptr_t)s);
	if (rc == MT_UNWIND_HASH_NO_KEY) {
		m->frame_no_key = s;
	} else if (rc != 0) {
		free(s);
		return NULL;
	}
	return s;
}

size_t mt_unwind_sym_unknown(char *buf, size_t n, const struct mt_unwind_map *map,
			     uint64_t pc)
{
	int k;
	if (!map) {
		k = snprintf(buf, n, "[unknown+0x%" PRIx64 "]", pc);
	} else {
		const char *name = base_name(map->path);
		int mismatch = map->mod && map->mod->state == MT_UNWIND_MOD_MISMATCH;
		k = snprintf(buf, n, "[%s+0x%" PRIx64 "]%s", name, pc - map->start + map->pgoff,
			     mismatch ? "_[x]" : "");
		for (char *p = buf; *p; p++)
			if (*p == ';' || *p == '\t' || *p == '\n')
				*p = '_';
	}
	if (k < 0)
		k = 0;
	return (size_t)k < n ? (size_t)k : n - 1;
}
