/* Sorted symbol tables, and the cache of them; see symtab.h and
 * docs/formats/symtab-cache.md. */
#include "symbolize/symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/cache_dir.h"
#include "common/fnv.h"
#include "common/trust.h"
#include "symbolize/cache_file.h"
#include "symbolize/debug_cache.h"

_Static_assert(sizeof(struct mt_unwind_symbol) == 24, "symbol layout");

#define MAGIC "MTSYMTAB"
#define VERSION 1
#define HEADER 128
#define MAX_FILE ((size_t)1 << 31)
#define MAX_RANK 127

static int cmp(const void *a, const void *b, void *arg)
{
	const struct mt_unwind_symbol *x = a, *y = b;
	const char *names = arg;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)		/* the preferred alias first */
		return x->rank > y->rank ? -1 : 1;
	const char *nx = names + x->name, *ny = names + y->name;
	size_t lx = strlen(nx), ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

int mt_unwind_symtab_load(struct mt_unwind_symtab *t, Dwfl_Module *mod)
{
	memset(t, 0, sizeof(*t));
	int n = dwfl_module_getsymtab(mod);
	if (n <= 0)
		return 0;
	struct mt_unwind_symbol *v = malloc((size_t)n * sizeof(*v));
	struct mt_buf names = { 0 };
	if (!v)
		return MT_UNWIND_ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		int bind = GELF_ST_BIND(sym.st_info), under = 0;
		while (name[under] == '_' && under < 3)
			under++;
		int rank = (GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT) * 64 +
			   (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0) * 8 + (3 - under);
		size_t len = strlen(name) + 1;
		if (names.len + len > UINT32_MAX)
			break;	/* 4 GiB of names: the rest is not named */
		v[t->n++] = (struct mt_unwind_symbol){
			.addr = addr, .size = sym.st_size, .name = (uint32_t)names.len, .rank = rank,
		};
		if (mt_buf_reserve(&names, len) != 0) {
			free(v);
			mt_buf_release(&names);
			t->n = 0;
			return MT_UNWIND_ENOMEM;
		}
		mt_buf_put(&names, name, len);
	}
	qsort_r(v, t->n, sizeof(*v), cmp, names.data);
	t->v = v;
	t->names = (const char *)names.data;
	t->names_len = names.len;
	return 0;
}

/* Does the ELF file of mod have a .symtab of its own? */
static int has_symtab(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(mod, &bias);
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return 1;
	}
	return 0;
}

static uint64_t file_identity(uint64_t h, const char *path)
{
	struct stat st;
	uint64_t w[5] = { 0 };
	if (path && stat(path, &st) == 0) {
		w[0] = st.st_dev;
		w[1] = st.st_ino;
		w[2] = (uint64_t)st.st_size;
		w[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
		w[4] = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
	}
	return mt_fnv_from(h, (const unsigned char *)w, 0, sizeof(w));
}

/* Is path in directory dir? */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

uint64_t mt_unwind_symtab_source(Dwfl_Module *mod, const char *cache_dir)
{
	int n = dwfl_module_getsymtab(mod);	/* finds the debug file if needed */
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	struct stat st;
	if (!mainfile || stat(mainfile, &st) != 0)
		return 0;
	uint64_t w = (uint64_t)(n < 0 ? 0 : n);
	uint64_t h = mt_fnv_from(MT_FNV_BASIS, (const unsigned char *)&w, 0, sizeof(w));
	h = file_identity(h, mainfile);
	if (!has_symtab(mod)) {
		/* An inflated copy in the cache may be made again by any run
		 * (two sessions of one run may each make it): its own identity
		 * would change, not the file it was made from, which its
		 * trailer names. */
		uint64_t copy = debugfile && cache_dir && *cache_dir && under(debugfile, cache_dir);
		h = mt_fnv_from(h, (const unsigned char *)&copy, 0, sizeof(copy));
		if (!copy) {
			h = file_identity(h, debugfile);
		} else {
			uint64_t from = mt_unwind_debug_cache_copy_source(debugfile);
			if (!from)
				return 0;
			h = mt_fnv_from(h, (const unsigned char *)&from, 0, sizeof(from));
		}
	}
	return h ? h : 1;
}

/* Check the file mapped at b (len bytes) and point t into it. */
static int parse(struct mt_unwind_symtab *t, const uint8_t *b, size_t len, const uint8_t *id,
		 size_t id_len, uint64_t source)
{
	if (len < HEADER || memcmp(b, MAGIC, 8) != 0 || mt_ld32(b + 8) != VERSION ||
	    mt_ld32(b + 12) != 0)
		return -1;
	uint64_t n = mt_ld64(b + 16), names = mt_ld64(b + 24);
	if (mt_ld64(b + 40) != source || mt_ld32(b + 48) != id_len || mt_ld32(b + 52) != 0 ||
	    memcmp(b + 56, id, id_len) != 0)
		return -1;
	for (size_t i = 56 + id_len; i < HEADER; i++)	/* padding, as written */
		if (b[i])
			return -1;
	if (n > len / sizeof(struct mt_unwind_symbol) || names > len ||
	    HEADER + n * sizeof(struct mt_unwind_symbol) + names != len)
		return -1;
	if (mt_fnv(b + HEADER, len - HEADER) != mt_ld64(b + 32))
		return -1;
	const struct mt_unwind_symbol *v = (const void *)(b + HEADER);	/* 8-aligned */
	const char *s = (const char *)(v + n);
	if (n && (!names || s[names - 1] != '\0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i].name >= names || !s[v[i].name] || v[i].rank < 0 || v[i].rank > MAX_RANK ||
		    (i && v[i - 1].addr > v[i].addr))
			return -1;
	}
	t->v = v;
	t->n = (size_t)n;
	t->names = s;
	t->names_len = (size_t)names;
	return 1;
}

int mt_unwind_symtab_file_read(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t source, struct mt_unwind_symtab *t)
{
	memset(t, 0, sizeof(*t));
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "syms");
	if (!path)
		return 0;
	void *p;
	size_t len;
	int rc = mt_unwind_cache_file_map(path, HEADER, MAX_FILE, &p, &len);
	free(path);
	if (rc <= 0)
		return rc;
	t->map = p;
	t->map_len = len;
	rc = parse(t, p, len, id, id_len, source);
	if (rc < 0)
		mt_unwind_symtab_release(t);
	return rc;
}

int mt_unwind_symtab_file_write(const char *dir, const uint8_t *id, size_t id_len,
				uint64_t source, const struct mt_unwind_symtab *t)
{
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "syms");
	if (!path)
		return MT_UNWIND_EIO;
	size_t vlen = t->n * sizeof(*t->v);
	uint8_t h[HEADER] = MAGIC;
	mt_st32(h + 8, VERSION);
	mt_st64(h + 16, t->n);
	mt_st64(h + 24, t->names_len);
	uint64_t sum = mt_fnv_from(MT_FNV_BASIS, (const unsigned char *)t->v, 0, vlen);
	/* vlen is a multiple of 8: the names continue the word sequence. */
	sum = mt_fnv_from(sum, (const unsigned char *)t->names, 0, t->names_len);
	mt_st64(h + 32, sum);
	mt_st64(h + 40, source);
	mt_st32(h + 48, (uint32_t)id_len);
	memcpy(h + 56, id, id_len);
	struct iovec parts[] = { { h, HEADER }, { (void *)t->v, vlen },
				 { (void *)t->names, t->names_len } };
	int ok = mt_unwind_cache_file_write(dir, path, parts, 3) == 0;
	free(path);
	return ok ? 0 : MT_UNWIND_EIO;
}

int mt_unwind_symtab_load_cached(struct mt_unwind_symtab *t, Dwfl_Module *mod, const char *dir,
				 const uint8_t *id, size_t id_len,
				 struct mt_unwind_symtab_stats *st)
{
	uint64_t source = dir && *dir && id_len && id_len <= MT_UNWIND_CACHE_MAX_ID ? mt_unwind_symtab_source(mod, dir) : 0;
	if (!source)
		return mt_unwind_symtab_load(t, mod);
	int rc = mt_unwind_symtab_file_read(dir, id, id_len, source, t);
	if (rc > 0) {
		if (st)
			__atomic_add_fetch(&st->read, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (rc < 0 && st)
		__atomic_add_fetch(&st->unsound, 1, __ATOMIC_RELAXED);
	if ((rc = mt_unwind_symtab_load(t, mod)) != 0)
		return rc;
	if (st)
		__atomic_add_fetch(&st->built, 1, __ATOMIC_RELAXED);
	int w = mt_unwind_symtab_file_write(dir, id, id_len, source, t);
	if (st)
		__atomic_add_fetch(w == 0 ? &st->saved : &st->failed, 1, __ATOMIC_RELAXED);
	return 0;
}

void mt_unwind_symtab_release(struct mt_unwind_symtab *t)
{
	if (t->map) {
		munmap(t->map, t->map_len);
	} else {
		free((void *)t->v);
		free((void *)t->names);
	}
	memset(t, 0, sizeof(*t));
}

const struct mt_unwind_symbol *mt_unwind_symtab_find(const struct mt_unwind_symtab *t,
						     uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {	/* first symbol with start > addr */
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* The nearest start may be a small symbol nested in a bigger one, or
	 * several aliases: look back a little for one that covers addr. */
	uint64_t nearest = t->v[lo - 1].addr;
	const struct mt_unwind_symbol *sizeless = NULL;
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
		const struct mt_unwind_symbol *s = &t->v[i];
		if (s->size && addr < s->addr + s->size) {
			/* Aliases are sorted best first: take the first one. */
			while (i > 0 && t->v[i - 1].addr == s->addr && t->v[i - 1].size &&
			       addr < t->v[i - 1].addr + t->v[i - 1].size)
				s = &t->v[--i];
			return s;
		}
		if (!s->size && s->addr == nearest)
			sizeless = s;	/* the last one seen is the best */
	}
	return sizeless;
}
