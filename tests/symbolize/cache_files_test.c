/* The symbol table (.syms) and CFI row (.rules) files of the debug cache,
 * on real ELF files (the fixtures, libc): a filled cache gives the tables
 * and rules the ELF file gives, and a file that is damaged, truncated, of
 * another build-id or source, or another user's is counted as unsound,
 * never used, and replaced. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fnv.h"
#include "symbolize/cfi.h"
#include "symbolize/module.h"
#include "symbolize/rules_file.h"
#include "symbolize/symtab.h"
#include "tests/symbolize/unwind_util.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static char *temp_dir(void)
{
	char *dir = strdup("/tmp/mt-cache-files-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static void remove_dir(char *dir)
{
	char *cmd;
	cr_assert_geq(asprintf(&cmd, "rm -rf %s", dir), 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* The one file of dir ending in ext. */
static char *file_in(const char *dir, const char *ext)
{
	char *pattern;
	glob_t g;
	cr_assert_geq(asprintf(&pattern, "%s/*%s", dir, ext), 0);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no %s file in %s", ext, dir);
	cr_assert_eq(g.gl_pathc, 1, "%zu %s files in %s", (size_t)g.gl_pathc, ext, dir);
	char *path = strdup(g.gl_pathv[0]);
	globfree(&g);
	free(pattern);
	return path;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	struct stat st;
	cr_assert_eq(fstat(fileno(f), &st), 0);
	uint8_t *b = malloc((size_t)st.st_size);
	cr_assert_eq(fread(b, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*len = (size_t)st.st_size;
	return b;
}

static void spill(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(b, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* Both cache files have a 128-byte header with the FNV of the rest at 32. */
static void rehash(uint8_t *b, size_t len)
{
	uint64_t h = mt_fnv(b + 128, len - 128);
	memcpy(b + 32, &h, 8);
}

static struct mt_unwind_modules *modules(const char *dir)
{
	struct mt_unwind_modules *ms;
	cr_assert_eq(mt_unwind_modules_new(&ms, NULL), 0);
	if (dir)
		mt_unwind_modules_set_debug_cache(ms, dir);
	return ms;
}

static struct mt_unwind_module *module(struct mt_unwind_modules *ms, const char *path)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, path, NULL, 0);
	cr_assert_not_null(m);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK, "%s", path);
	cr_assert_gt(m->file_id_len, 0, "%s has no build-id", path);
	mt_unwind_module_symbols_ready(m);
	return m;
}

/* ---- symbol tables ------------------------------------------------------ */

/* path's symbol table through the cache in dir, checked against the one
 * built from the ELF file; what the cache did. */
static struct mt_unwind_symtab_stats symtab_run(const char *path, const char *dir)
{
	struct mt_unwind_modules *ms = modules(dir), *plain = modules(NULL);
	struct mt_unwind_module *m = module(ms, path), *p = module(plain, path);
	cr_assert_eq(mt_unwind_module_load_symtab(m), 0);
	cr_assert_eq(mt_unwind_module_load_symtab(p), 0);
	const struct mt_unwind_symtab *a = &m->symtab, *b = &p->symtab;
	cr_assert_gt(b->n, 10, "%s: %zu symbols", path, b->n);
	cr_assert_eq(a->n, b->n, "%s: %zu symbols, want %zu", path, a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		cr_assert_eq(a->v[i].addr, b->v[i].addr, "%s: symbol %zu", path, i);
		cr_assert_eq(a->v[i].size, b->v[i].size, "%s: symbol %zu", path, i);
		cr_assert_eq(a->v[i].rank, b->v[i].rank, "%s: symbol %zu", path, i);
		cr_assert_str_eq(mt_unwind_symtab_name(a, &a->v[i]),
				 mt_unwind_symtab_name(b, &b->v[i]), "%s: symbol %zu", path, i);
	}
	struct mt_unwind_symtab_stats st = mt_unwind_modules_symtab_stats(ms);
	cr_assert_eq(b->map, NULL, "the table without a cache is not mapped");
	cr_assert_eq(a->map != NULL, st.read == 1, "mapped only when read from the cache");
	mt_unwind_modules_free(ms);
	mt_unwind_modules_free(plain);
	return st;
}

Test(symtab_cache, filled_cache_gives_the_same_table)
{
	const char *paths[] = { LIBC, NULL, NULL };
	paths[1] = ut_fixture("unwind_cxx");
	for (size_t i = 0; paths[i]; i++) {
		char *dir = temp_dir();
		struct mt_unwind_symtab_stats st = symtab_run(paths[i], dir);
		cr_assert(st.read == 0 && st.built == 1 && st.saved == 1 && st.unsound == 0,
			  "%s first run: %u read %u built %u saved %u unsound", paths[i], st.read,
			  st.built, st.saved, st.unsound);
		st = symtab_run(paths[i], dir);
		cr_assert(st.read == 1 && st.built == 0 && st.saved == 0 && st.unsound == 0,
			  "%s second run: %u read %u built %u saved %u unsound", paths[i], st.read,
			  st.built, st.saved, st.unsound);
		remove_dir(dir);
	}
}

/* A file damaged by how: not used (counted unsound), the table built from
 * the ELF file again and the file replaced, so the next run reads it. */
static void symtab_damaged(void (*how)(const char *file, uint8_t *b, size_t *len))
{
	char *dir = temp_dir();
	symtab_run(LIBC, dir);
	char *file = file_in(dir, ".syms");
	size_t len;
	uint8_t *b = slurp(file, &len);
	how(file, b, &len);
	if (len)
		spill(file, b, len);
	free(b);
	struct mt_unwind_symtab_stats st = symtab_run(LIBC, dir);
	cr_assert(st.read == 0 && st.unsound == 1 && st.built == 1 && st.saved == 1,
		  "damaged: %u read %u unsound %u built %u saved", st.read, st.unsound, st.built,
		  st.saved);
	st = symtab_run(LIBC, dir);
	cr_assert(st.read == 1 && st.unsound == 0, "replaced: %u read %u unsound", st.read,
		  st.unsound);
	free(file);
	remove_dir(dir);
}

static void flip_byte(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	b[*len / 2] ^= 0x40;
}

static void truncated(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	(void)b;
	*len -= 24;
}

static void other_build_id(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	(void)len;
	b[56] ^= 1;
}

static void other_source(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	(void)len;
	b[40] ^= 1;	/* the source identity: another file, or it changed */
	rehash(b, *len);	/* the header is not under the checksum anyway */
}

static void names_not_ended(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	b[*len - 1] = 'x';
	rehash(b, *len);
}

static void unsorted(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	uint64_t n, big = ~(uint64_t)0 >> 1;
	memcpy(&n, b + 16, 8);
	cr_assert_gt(n, 2);
	memcpy(b + 128, &big, 8);	/* the first symbol's address */
	rehash(b, *len);
}

static void name_outside(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	uint32_t far = 0x7fffffff;
	memcpy(b + 128 + 16, &far, 4);	/* the first symbol's name offset */
	rehash(b, *len);
}

/* Sound, but another user's (as root: nobody's). */
static void foreign_owner(const char *file, uint8_t *b, size_t *len)
{
	(void)b;
	*len = 0;	/* not rewritten */
	if (geteuid() != 0) {
		/* Not root: a file others can write stands in for it. */
		cr_assert_eq(chmod(file, 0666), 0);
		return;
	}
	cr_assert_eq(chown(file, 65534, 65534), 0);
}

Test(symtab_cache, flipped_byte_is_unsound) { symtab_damaged(flip_byte); }
Test(symtab_cache, truncated_is_unsound) { symtab_damaged(truncated); }
Test(symtab_cache, other_build_id_is_unsound) { symtab_damaged(other_build_id); }
Test(symtab_cache, other_source_is_not_used) { symtab_damaged(other_source); }
Test(symtab_cache, names_not_ended_checksum_right) { symtab_damaged(names_not_ended); }
Test(symtab_cache, unsorted_checksum_right) { symtab_damaged(unsorted); }
Test(symtab_cache, name_outside_checksum_right) { symtab_damaged(name_outside); }
Test(symtab_cache, another_users_file_is_not_used) { symtab_damaged(foreign_owner); }

/* ---- CFI rows ----------------------------------------------------------- */

static void same_rule(const struct mt_unwind_rule *a, const struct mt_unwind_rule *b,
		      uint64_t vaddr)
{
	cr_assert_eq(a->status, b->status, "0x%lx", (unsigned long)vaddr);
	if (a->status != MT_UNWIND_RULE_OK)
		return;
	cr_assert_eq(a->signal, b->signal, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->cfa_is_expr, b->cfa_is_expr, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->cfa_reg, b->cfa_reg, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->cfa_off, b->cfa_off, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->cfa_only, b->cfa_only, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->same_mask, b->same_mask, "0x%lx", (unsigned long)vaddr);
	cr_assert_eq(a->at_mask, b->at_mask, "0x%lx", (unsigned long)vaddr);
	for (int r = 0; r < MT_UNWIND_NREGS; r++) {
		cr_assert_eq(a->kind[r], b->kind[r], "0x%lx r%d", (unsigned long)vaddr, r);
		cr_assert_eq(a->off[r], b->off[r], "0x%lx r%d", (unsigned long)vaddr, r);
	}
	for (int r = -1; r < MT_UNWIND_NREGS; r++) {
		const struct mt_unwind_expr *x = r < 0 ? a->cfa_expr : a->expr[r];
		const struct mt_unwind_expr *y = r < 0 ? b->cfa_expr : b->expr[r];
		cr_assert_eq(!x, !y, "0x%lx r%d", (unsigned long)vaddr, r);
		if (!x)
			continue;
		cr_assert_eq(x->nops, y->nops, "0x%lx r%d", (unsigned long)vaddr, r);
		for (uint32_t k = 0; k < x->nops; k++) {
			cr_assert_eq(x->ops[k].atom, y->ops[k].atom);
			cr_assert_eq(x->ops[k].number, y->ops[k].number);
			cr_assert_eq(x->ops[k].number2, y->ops[k].number2);
		}
	}
}

/* The executable PT_LOAD of path: [*lo, *hi). */
static void text_range(struct mt_unwind_module *m, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < m->nr_loads; i++)
		if (m->loads[i].exec) {
			*lo = m->loads[i].vaddr;
			*hi = m->loads[i].vaddr + m->loads[i].filesz;
			return;
		}
	cr_assert_fail("no executable segment");
}

/* The rules at every step-th address of path's code (from off on) through
 * the cache in dir, each checked against libdw's; then the save.  What
 * the cache did. */
static struct mt_unwind_rules_stats rules_run(const char *path, const char *dir, uint64_t step,
					      uint64_t off)
{
	struct mt_unwind_modules *ms = modules(dir), *plain = modules(NULL);
	struct mt_unwind_module *m = module(ms, path), *p = module(plain, path);
	uint64_t lo, hi, ok = 0;
	text_range(m, &lo, &hi);
	for (uint64_t v = lo + off; v < hi; v += step) {
		const struct mt_unwind_rule *a = mt_unwind_rule_get(m, v);
		const struct mt_unwind_rule *b = mt_unwind_rule_get(p, v);
		cr_assert(a && b);
		same_rule(a, b, v);
		ok += b->status == MT_UNWIND_RULE_OK;
	}
	cr_assert_gt(ok, 100, "%s: %lu rules", path, (unsigned long)ok);
	struct mt_unwind_rules_stats st;
	mt_unwind_modules_save_rules(ms, &st);
	mt_unwind_modules_free(ms);
	mt_unwind_modules_free(plain);
	return st;
}

Test(rules_cache, filled_cache_gives_libdws_rules)
{
	const char *paths[] = { LIBC, NULL, NULL };
	paths[1] = ut_fixture("unwind_cxx");
	for (size_t i = 0; paths[i]; i++) {
		uint64_t step = i == 0 ? 61 : 3;
		char *dir = temp_dir();
		struct mt_unwind_rules_stats st = rules_run(paths[i], dir, step, 0);
		/* Fewer rows than pcs: a pc after one in its row takes that
		 * row's rule, compiled already. */
		cr_assert(st.read == 0 && st.hits == 0 && st.compiled > 20 &&
			  st.compiled + st.reused > 50 && st.saved == 1,
			  "%s first: %u read %lu hits %lu compiled %lu reused %u saved", paths[i],
			  st.read, (unsigned long)st.hits, (unsigned long)st.compiled,
			  (unsigned long)st.reused, st.saved);
		/* Each pc of a row kept: the one compiled, or one after it in
		 * its row, which took that rule. */
		uint64_t kept = st.compiled + st.reused;
		/* The same addresses: every row from the file. */
		st = rules_run(paths[i], dir, step, 0);
		cr_assert(st.read == 1 && st.hits == kept && st.compiled == 0 && st.saved == 0,
			  "%s again: %u read %lu hits (want %lu) %lu compiled %u saved", paths[i],
			  st.read, (unsigned long)st.hits, (unsigned long)kept,
			  (unsigned long)st.compiled, st.saved);
		cr_assert(st.made < st.hits && st.made > 0 && st.reused == 0,
			  "%s again: %lu rules made for %lu hits, %lu reused", paths[i],
			  (unsigned long)st.made, (unsigned long)st.hits, (unsigned long)st.reused);
		/* Other addresses: some in saved rows (after the pc they were
		 * saved at, before the row's end), the others compiled and
		 * merged into the file. */
		st = rules_run(paths[i], dir, step, 1);
		cr_assert(st.read == 1 && st.hits > 0 && st.compiled > 0 && st.saved == 1,
			  "%s shifted: %u read %lu hits %lu compiled %u saved", paths[i], st.read,
			  (unsigned long)st.hits, (unsigned long)st.compiled, st.saved);
		st = rules_run(paths[i], dir, step, 1);
		cr_assert(st.compiled == 0, "%s: merged rows compiled again", paths[i]);
		st = rules_run(paths[i], dir, step, 0);
		cr_assert(st.compiled == 0, "%s: the first rows lost in the merge", paths[i]);
		remove_dir(dir);
	}
}

/* unwind_cxx's rows saved in a new debug cache *dir, and its module read
 * again with them: its row file mapped by a first lookup. */
static struct mt_unwind_module *module_with_rows(char **dir, struct mt_unwind_modules **ms)
{
	const char *path = ut_fixture("unwind_cxx");
	*dir = temp_dir();
	rules_run(path, *dir, 1, 0);
	*ms = modules(*dir);
	struct mt_unwind_module *m = module(*ms, path);
	uint64_t lo, hi;
	text_range(m, &lo, &hi);
	cr_assert_not_null(mt_unwind_rule_get(m, lo));
	cr_assert_not_null(m->rules_file);
	return m;
}

/* Every pc of a saved row takes one rule, made once; libdw is not asked. */
Test(rules_cache, pcs_of_a_row_share_its_rule)
{
	char *dir;
	struct mt_unwind_modules *ms;
	struct mt_unwind_module *m = module_with_rows(&dir, &ms);
	const struct mt_unwind_rules_row *row = NULL;
	for (size_t i = 0; i < m->rules_file->n && !row; i++)
		if (m->rules_file->rows[i].hi - m->rules_file->rows[i].lo >= 3)
			row = &m->rules_file->rows[i];
	cr_assert_not_null(row, "no row of 3 addresses");
	uint64_t asked = m->rules_asked, made = m->rules_file->nr_made;
	const struct mt_unwind_rule *a = mt_unwind_rule_get(m, row->lo);
	const struct mt_unwind_rule *b = mt_unwind_rule_get(m, row->hi - 1);
	const struct mt_unwind_rule *c = mt_unwind_rule_get(m, row->lo + 1);
	cr_assert(a && a == b && b == c, "%p %p %p", (void *)a, (void *)b, (void *)c);
	cr_assert_eq(a->status, MT_UNWIND_RULE_OK);
	cr_assert_eq(m->rules_asked, asked);
	cr_assert_leq(m->rules_file->nr_made, made + 1);
	/* Two rows with records of the same bytes: one rule for both. */
	const struct mt_unwind_rules_file *f = m->rules_file;
	const struct mt_unwind_rules_row *x = NULL, *y = NULL;
	for (size_t i = 0; i < f->n && !y; i++)
		for (size_t k = i + 1; k < f->n && !y; k++)
			if (f->rows[i].size == f->rows[k].size &&
			    memcmp(f->records + f->rows[i].off, f->records + f->rows[k].off,
				   f->rows[i].size) == 0) {
				x = &f->rows[i];
				y = &f->rows[k];
			}
	cr_assert_not_null(y, "no two rows with the same record");
	a = mt_unwind_rule_get(m, x->lo);
	made = f->nr_made;
	b = mt_unwind_rule_get(m, y->lo);
	cr_assert(a && a == b && f->nr_made == made, "%p %p, %zu made (was %zu)", (void *)a,
		  (void *)b, f->nr_made, (size_t)made);
	cr_assert_eq(m->rules_asked, asked);
	mt_unwind_modules_free(ms);
	remove_dir(dir);
}

/* The file holds each distinct record once, shared by its rows. */
Test(rules_cache, rows_share_records_in_the_file)
{
	char *dir;
	struct mt_unwind_modules *ms;
	struct mt_unwind_module *m = module_with_rows(&dir, &ms);
	const struct mt_unwind_rules_file *f = m->rules_file;
	size_t shared = 0;
	for (size_t i = 0; i < f->n; i++)
		for (size_t k = i + 1; k < f->n; k++) {
			const struct mt_unwind_rules_row *x = &f->rows[i], *y = &f->rows[k];
			if (x->off == y->off) {
				shared++;
				continue;
			}
			cr_assert(x->size != y->size ||
				  memcmp(f->records + x->off, f->records + y->off, x->size) != 0,
				  "rows %zu and %zu: the same record twice", i, k);
		}
	cr_assert_gt(shared, 0);
	mt_unwind_modules_free(ms);
	remove_dir(dir);
}

static void rules_damaged(void (*how)(const char *file, uint8_t *b, size_t *len))
{
	char *dir = temp_dir();
	const char *path = ut_fixture("unwind_cxx");
	rules_run(path, dir, 3, 0);
	char *file = file_in(dir, ".rules");
	size_t len;
	uint8_t *b = slurp(file, &len);
	how(file, b, &len);
	if (len)
		spill(file, b, len);
	free(b);
	struct mt_unwind_rules_stats st = rules_run(path, dir, 3, 0);
	cr_assert(st.read == 0 && st.hits == 0 && st.unsound == 1 && st.compiled > 0 &&
		  st.saved == 1, "damaged: %u read %lu hits %u unsound %lu compiled %u saved",
		  st.read, (unsigned long)st.hits, st.unsound, (unsigned long)st.compiled,
		  st.saved);
	st = rules_run(path, dir, 3, 0);
	cr_assert(st.read == 1 && st.unsound == 0 && st.compiled == 0,
		  "replaced: %u read %u unsound %lu compiled", st.read, st.unsound,
		  (unsigned long)st.compiled);
	free(file);
	remove_dir(dir);
}

static void rules_other_source(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	(void)len;
	b[40] ^= 1;
}

/* The second row made to overlap the first. */
static void overlapping_rows(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	uint64_t n, lo;
	memcpy(&n, b + 16, 8);
	cr_assert_gt(n, 2);
	memcpy(&lo, b + 128, 8);
	memcpy(b + 128 + 24, &lo, 8);
	rehash(b, *len);
}

/* The first record's first register rule a kind there is none of. */
static void bad_register_kind(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	uint64_t n;
	memcpy(&n, b + 16, 8);
	uint32_t off;
	memcpy(&off, b + 128 + 16, 4);
	b[128 + 24 * n + off + 16] = 99;
	rehash(b, *len);
}

/* The first record's CFA register outside the register set. */
static void bad_cfa_register(const char *file, uint8_t *b, size_t *len)
{
	(void)file;
	uint64_t n;
	memcpy(&n, b + 16, 8);
	uint32_t off;
	memcpy(&off, b + 128 + 16, 4);
	uint8_t *rec = b + 128 + 24 * n + off;
	cr_assert_eq(rec[1], 0, "the first row's CFA is an expression");
	rec[2] = MT_UNWIND_NREGS;
	rehash(b, *len);
}

Test(rules_cache, flipped_byte_is_unsound) { rules_damaged(flip_byte); }
Test(rules_cache, truncated_is_unsound) { rules_damaged(truncated); }
Test(rules_cache, other_build_id_is_unsound) { rules_damaged(other_build_id); }
Test(rules_cache, other_source_is_not_used) { rules_damaged(rules_other_source); }
Test(rules_cache, overlapping_rows_checksum_right) { rules_damaged(overlapping_rows); }
Test(rules_cache, bad_register_kind_checksum_right) { rules_damaged(bad_register_kind); }
Test(rules_cache, bad_cfa_register_checksum_right) { rules_damaged(bad_cfa_register); }
Test(rules_cache, another_users_file_is_not_used) { rules_damaged(foreign_owner); }
