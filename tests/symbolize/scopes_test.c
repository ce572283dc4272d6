/* The scope index against libdw's own scope walk, at every line-table
 * address of real ELF files: the fixtures with inline frames and this test
 * program itself (-O2 -g, much inlining); and the same answers from indexes
 * a previous set saved in a cache directory, whole or damaged. */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fnv.h"
#include "symbolize/scopes.h"
#include "symbolize/scopes_file.h"
#include "tests/symbolize/unwind_util.h"

#define MAX 256

static int chain_tag(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
}

/* The inline instances and functions holding pc, innermost first, as
 * libdw finds them (dwarf_getscopes, then the concrete parents). */
static int libdw_chain(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Off *out)
{
	Dwarf_Die *scopes;
	int k = dwarf_getscopes(cu, pc, &scopes);
	if (k <= 0)
		return 0;
	Dwarf_Die inner = scopes[0];
	free(scopes);
	k = dwarf_getscopes_die(&inner, &scopes);
	int n = 0;
	for (int i = 0; i < k && n < MAX; i++)
		if (chain_tag(dwarf_tag(&scopes[i])))
			out[n++] = dwarf_dieoffset(&scopes[i]);
	free(scopes);
	return n;
}

/* What a cached run did: attach's result and the set's counts after the
 * save. */
struct cached {
	int attach;
	struct mt_unwind_scopes_stats st;
};

/* Compare at every step-th line address, with the index set kept in cache
 * (NULL: none; then *c is left alone).  @return : addresses compared, and
 * through *inlined how many had an inline instance. */
static size_t compare_cached(const char *path, size_t step, size_t *inlined, const char *cache,
			     struct cached *c)
{
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s", path);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw, "%s: no DWARF", path);
	struct mt_unwind_scopes *set = NULL;
	if (cache) {
		const void *id;
		ssize_t id_len = dwelf_elf_gnu_build_id(dwarf_getelf(dw), &id);
		cr_assert_gt(id_len, 0, "%s: no build-id", path);
		c->attach = mt_unwind_scopes_attach(&set, dw, cache, id, (size_t)id_len);
	}
	size_t compared = 0, seen = 0;
	*inlined = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		cr_assert_not_null(dwarf_offdie(dw, off + hsize, &cu));
		off = next;
		Dwarf_Lines *lines;
		size_t nlines;
		if (dwarf_getsrclines(&cu, &lines, &nlines) != 0)
			continue;
		for (size_t l = 0; l < nlines; l++) {
			Dwarf_Addr pc;
			if (seen++ % step || dwarf_lineaddr(dwarf_onesrcline(lines, l), &pc) != 0)
				continue;
			Dwarf_Off want[MAX];
			int nw = libdw_chain(&cu, pc, want);
			Dwarf_Die got[MAX];
			int ng = mt_unwind_scopes_find(&set, &cu, pc, got, MAX);
			cr_assert_geq(ng, 0, "%s: pc 0x%lx: the index did not answer", path,
				      (unsigned long)pc);
			int k = 0;
			for (int i = 0; i < ng; i++) {
				if (!chain_tag(dwarf_tag(&got[i])))
					continue;
				cr_assert_lt(k, nw, "%s: pc 0x%lx: more scopes than libdw finds",
					     path, (unsigned long)pc);
				cr_assert_eq(dwarf_dieoffset(&got[i]), want[k],
					     "%s: pc 0x%lx: scope %d is DIE 0x%lx, libdw says 0x%lx",
					     path, (unsigned long)pc, k,
					     (unsigned long)dwarf_dieoffset(&got[i]),
					     (unsigned long)want[k]);
				k++;
			}
			cr_assert_eq(k, nw, "%s: pc 0x%lx: %d scopes, libdw finds %d", path,
				     (unsigned long)pc, k, nw);
			compared++;
			if (nw > 1)
				(*inlined)++;
		}
	}
	if (cache) {
		cr_assert_geq(mt_unwind_scopes_save(set), 0, "%s: cannot save in %s", path, cache);
		c->st = mt_unwind_scopes_stats(set);
	}
	mt_unwind_scopes_free(set);
	dwarf_end(dw);
	close(fd);
	return compared;
}

static size_t compare_file(const char *path, size_t step, size_t *inlined)
{
	return compare_cached(path, step, inlined, NULL, NULL);
}

Test(scopes, agree_with_libdw_on_fixtures)
{
	const char *names[] = { "unwind_inline", "unwind_inline-fp", "unwind_cxx", "unwind_cxx-fp" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		size_t inlined, n = compare_file(ut_fixture(names[i]), 1, &inlined);
		cr_assert_gt(n, 20, "%s: only %zu addresses", names[i], n);
		cr_assert_gt(inlined, 0, "%s: no address inside an inline instance", names[i]);
	}
}

Test(scopes, agree_with_libdw_on_this_program)
{
	size_t inlined, n = compare_file("/proc/self/exe", 5, &inlined);
	cr_assert_gt(n, 1000, "only %zu addresses", n);
	cr_assert_gt(inlined, 100, "only %zu addresses inside inline instances", inlined);
}

/* ---- the cache (scopes_file.h) ------------------------------------------ */

static char *temp_dir(void)
{
	char *dir = strdup("/tmp/mt-scopes-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

/* The one .scopes file in dir. */
static char *scopes_file_in(const char *dir)
{
	char *pattern;
	glob_t g;
	cr_assert_geq(asprintf(&pattern, "%s/*.scopes", dir), 0);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no .scopes file in %s", dir);
	cr_assert_eq(g.gl_pathc, 1, "%zu .scopes files in %s", (size_t)g.gl_pathc, dir);
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

static void remove_dir(char *dir)
{
	char *cmd;
	cr_assert_geq(asprintf(&cmd, "rm -rf %s", dir), 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

Test(scopes, cache_gives_the_same_answers_without_walking_the_dies)
{
	const char *names[] = { "unwind_inline", "unwind_cxx" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *dir = temp_dir();
		size_t inlined;
		struct cached first, second;
		compare_cached(ut_fixture(names[i]), 1, &inlined, dir, &first);
		cr_assert_eq(first.attach, 0, "%s: a file before the first save", names[i]);
		cr_assert_gt(first.st.built, 0, "%s", names[i]);
		cr_assert_eq(first.st.saved, first.st.built, "%s: %u built, %u saved", names[i],
			     first.st.built, first.st.saved);
		compare_cached(ut_fixture(names[i]), 1, &inlined, dir, &second);
		cr_assert_eq(second.attach, 1, "%s: the saved file was not read", names[i]);
		cr_assert_eq(second.st.loaded, first.st.saved, "%s", names[i]);
		cr_assert_eq(second.st.built, 0, "%s: %u indexes built again", names[i],
			     second.st.built);
		cr_assert_eq(second.st.saved, 0, "%s: nothing new, yet saved", names[i]);
		cr_assert_eq(second.st.unsound, 0);
		remove_dir(dir);
	}
}

Test(scopes, cache_of_this_program)
{
	char *dir = temp_dir();
	size_t inlined;
	struct cached first, second;
	compare_cached("/proc/self/exe", 5, &inlined, dir, &first);
	size_t n = compare_cached("/proc/self/exe", 5, &inlined, dir, &second);
	cr_assert_gt(n, 1000);
	cr_assert_gt(first.st.built, 50, "only %u indexes", first.st.built);
	cr_assert_eq(second.attach, 1);
	cr_assert_eq(second.st.built, 0, "%u indexes built again", second.st.built);
	remove_dir(dir);
}

/* A damaged file (damage: how) is refused or found out; the answers stay
 * libdw's, and the save replaces the file with a sound one. */
static void damaged(void (*damage)(uint8_t *b, size_t *len), int attach_rc)
{
	char *dir = temp_dir();
	const char *path = ut_fixture("unwind_inline");
	size_t inlined, len;
	struct cached c;
	compare_cached(path, 1, &inlined, dir, &c);
	char *file = scopes_file_in(dir);
	uint8_t *b = slurp(file, &len);
	damage(b, &len);
	spill(file, b, len);
	free(b);
	compare_cached(path, 1, &inlined, dir, &c);
	cr_assert_eq(c.attach, attach_rc, "attach said %d", c.attach);
	cr_assert_eq(c.st.unsound, 1, "unsound %u", c.st.unsound);
	cr_assert_gt(c.st.built, 0);
	cr_assert_gt(c.st.saved, 0, "the damaged file was not replaced");
	compare_cached(path, 1, &inlined, dir, &c);
	cr_assert_eq(c.attach, 1);
	cr_assert_eq(c.st.built, 0);
	free(file);
	remove_dir(dir);
}

static void flip_a_range_byte(uint8_t *b, size_t *len)
{
	b[*len / 2] ^= 0x40;
}

static void cut(uint8_t *b, size_t *len)
{
	(void)b;
	*len -= 8;
}

static void other_build_id(uint8_t *b, size_t *len)
{
	(void)len;
	b[56] ^= 1;
}

/* The checksum made right again: only the checks of the content remain. */
static void rehash(uint8_t *b, size_t len)
{
	uint64_t h = mt_fnv(b + 128, len - 128);
	memcpy(b + 40, &h, 8);
}

/* Every range's parent made -1 but the last's, which points after itself. */
static void bad_parent(uint8_t *b, size_t *len)
{
	uint32_t entries;
	uint64_t ranges;
	memcpy(&entries, b + 12, 4);
	memcpy(&ranges, b + 24, 8);
	uint8_t *last = b + 128 + 24 * (size_t)entries + 24 * (ranges - 1);
	int32_t p = 1 << 20;
	memcpy(last + 20, &p, 4);
	rehash(b, *len);
}

/* Each DIE key names another tag: sound on its face, wrong for the DWARF;
 * found out at the first use. */
static void wrong_tags(uint8_t *b, size_t *len)
{
	uint32_t entries;
	uint64_t ranges, keys;
	memcpy(&entries, b + 12, 4);
	memcpy(&ranges, b + 24, 8);
	memcpy(&keys, b + 32, 8);
	uint8_t *k = b + 128 + 24 * (size_t)entries + 24 * ranges;
	for (uint64_t i = 0; i < keys; i++) {
		uint64_t v;
		memcpy(&v, k + 8 * i, 8);
		v = MT_UNWIND_SCOPE_KEY(MT_UNWIND_SCOPE_KEY_OFF(v), DW_TAG_variable);
		memcpy(k + 8 * i, &v, 8);
	}
	rehash(b, *len);
}

Test(scopes, cache_damage_flipped_byte) { damaged(flip_a_range_byte, -1); }
Test(scopes, cache_damage_truncated) { damaged(cut, -1); }
Test(scopes, cache_damage_other_build_id) { damaged(other_build_id, -1); }
Test(scopes, cache_damage_bad_parent_checksum_right) { damaged(bad_parent, -1); }
Test(scopes, cache_damage_wrong_dies_checksum_right) { damaged(wrong_tags, 1); }
