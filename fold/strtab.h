/* Interned strings: each distinct byte string gets a dense id 0, 1, 2, ...
 * Open addressing with stored hashes; the bytes live in an arena that never
 * moves, so returned pointers stay valid until the table is freed.  This is
 * the hash table mt-fold aggregates stacks and function names with.
 */
#ifndef MT_FOLD_STRTAB_H
#define MT_FOLD_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct mt_fold_strtab;

/* @return : an empty table, or NULL when out of memory. */
struct mt_fold_strtab *mt_fold_strtab_new(void);

/* Accepts NULL. */
void mt_fold_strtab_free(struct mt_fold_strtab *t);

/* Find s[0..len) or add it.  *id receives its id.
 * @return : 1 when added, 0 when it was present, MT_FOLD_ENOMEM. */
int mt_fold_strtab_intern(struct mt_fold_strtab *t, const char *s, size_t len,
			  uint32_t *id);

/* @return : the number of distinct strings (ids are 0 .. count-1). */
uint32_t mt_fold_strtab_count(const struct mt_fold_strtab *t);

/* The string with this id (NUL-terminated; its length in *len if not NULL);
 * valid while the table lives. */
const char *mt_fold_strtab_get(const struct mt_fold_strtab *t, uint32_t id,
			       size_t *len);

/* The 64-bit hash used by the table (exposed for tests). */
uint64_t mt_fold_hash(const char *s, size_t len);

#endif
