/* The .eh_frame rows compiled in a run, by address: a rule compiled for
 * one pc holds for every address up to its row's end (rules_file.h), so a
 * later pc inside such a range takes the rule compiled already instead of
 * asking libdw again.  The same rows are the ones a run saves in the CFI
 * row cache.
 *
 * Ranges are added in the order pcs miss, which is no order: they go to a
 * short unsorted tail, merged into the sorted part when it fills.  Two
 * ranges may overlap (a pc before one already kept, in the same row):
 * each still holds for all its addresses, so any that holds a pc gives
 * its rule; a lookup may miss the one holding it (then libdw is asked). */
#ifndef MT_UNWIND_RULE_RANGES_H
#define MT_UNWIND_RULE_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* Not rules_file.h: module.h includes this, and cfi.h needs module.h. */
struct mt_unwind_rule;
struct mt_unwind_rules_new;	/* rules_file.h */

struct mt_unwind_rule_ranges {
	struct mt_unwind_rules_new *v;	/* [0, sorted) by lo, then the tail */
	size_t n, sorted, cap;
};

/* The rule of a range holding vaddr, or NULL. */
const struct mt_unwind_rule *mt_unwind_rule_ranges_find(const struct mt_unwind_rule_ranges *r,
							uint64_t vaddr);

/* Add [lo, hi) -> rule (not owned).  @return : 0, or MT_UNWIND_ENOMEM
 * (not added). */
int mt_unwind_rule_ranges_add(struct mt_unwind_rule_ranges *r, uint64_t lo, uint64_t hi,
			      const struct mt_unwind_rule *rule);

/* Sort them all (r->v[0, r->n) by lo). */
void mt_unwind_rule_ranges_sort(struct mt_unwind_rule_ranges *r);

/* Forget them all; the arrays stay for reuse. */
void mt_unwind_rule_ranges_clear(struct mt_unwind_rule_ranges *r);

void mt_unwind_rule_ranges_release(struct mt_unwind_rule_ranges *r);

#endif
