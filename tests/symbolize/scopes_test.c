/* The scope index against libdw's own scope walk, at every line-table
 * address of real ELF files: the fixtures with inline frames and this test
 * program itself (-O2 -g, much inlining). */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "symbolize/scopes.h"
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

/* Compare at every step-th line address.  @return : addresses compared,
 * and through *inlined how many had an inline instance. */
static size_t compare_file(const char *path, size_t step, size_t *inlined)
{
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0, "%s", path);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	cr_assert_not_null(dw, "%s: no DWARF", path);
	struct mt_unwind_scopes *set = NULL;
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
	mt_unwind_scopes_free(set);
	dwarf_end(dw);
	close(fd);
	return compared;
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
