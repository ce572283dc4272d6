/* Compiled CFI rows kept across runs: DIR/<build-id>.rules in the debug
 * cache (docs/formats/rules-cache.md).
 *
 * A rule is asked of libdw once per address and compiled (cfi.h); on a
 * recording of many short processes (a build: cc1, as, ld in every
 * compile) that is a large part of the unwinder's time, since few pcs
 * repeat within a run.  A row of .eh_frame holds for a range of addresses,
 * so a run saves the rows it compiled, with their ranges, and the next run
 * takes a pc's rule from the file when a saved row covers it.  Only rows
 * of .eh_frame that compiled (status OK) are kept; .debug_frame, the
 * entry-point rule and pcs without CFI are asked of libdw every run.
 *
 * The file (little-endian):
 *   header, 128 bytes: "MTCFIRUL", u32 version (1), u32 registers (17),
 *     u64 rows, u64 record bytes, u64 FNV-1a 64 (common/fnv.h) of all that
 *     follows the header, u64 source (the identity of the ELF file the rows
 *     come from), u32 build-id length, u32 0, the build-id (64 bytes,
 *     zero-padded), u64 0
 *   rows x 24 bytes: u64 lo, u64 hi (ELF addresses, [lo, hi)), u32 record
 *     offset (8-aligned, from the first record), u32 record size; rows
 *     with the same record share it (written once)
 *   records: u8 signal, u8 CFA is an expression, u8 CFA register, u8 0,
 *     u32 expressions, s64 CFA offset; 17 x (u8 rule kind, 7 x 0, s64
 *     offset); then each expression (the CFA's first, then the registers'
 *     in order): u32 operations, u32 0, operations x (u8 atom, 7 x 0, u64
 *     number, u64 number2, u64 offset)
 */
#ifndef MT_UNWIND_RULES_FILE_H
#define MT_UNWIND_RULES_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/cfi.h"
#include "symbolize/hashmap.h"

struct mt_unwind_rules_row {
	uint64_t lo, hi;
	uint32_t off, size;
};

struct mt_unwind_rules_file {
	void *map;
	size_t map_len;
	const struct mt_unwind_rules_row *rows;
	size_t n;
	const uint8_t *records;
	size_t records_len;
	/* The rules made of records, on first use, each shared by every pc
	 * of every row whose record has the same bytes (most rows do share:
	 * "CFA = rsp + 8" and its like).  Owned by the file. */
	struct mt_unwind_hashmap by_off;	/* record offset -> rule */
	struct mt_unwind_hashmap by_sum;	/* FNV of its bytes -> an offset */
	struct mt_unwind_rule **made;
	size_t nr_made, cap_made;
};

/* A row compiled in this run, to be saved. */
struct mt_unwind_rules_new {
	uint64_t lo, hi;
	const struct mt_unwind_rule *rule;
};

/* What the cache did (summed over modules). */
struct mt_unwind_rules_stats {
	unsigned read;		/* files mapped */
	uint64_t hits;		/* pcs whose rule came from a file */
	uint64_t made;		/* distinct rules made of those files' rows */
	uint64_t asked;		/* pcs whose rule was asked of libdw */
	uint64_t reused;	/* pcs in a row compiled before in the run */
	uint64_t compiled;	/* rows compiled by libdw and kept to be saved */
	unsigned saved;		/* files written */
	unsigned unsound;	/* files that did not check out, or another
				 * user's: not used */
	unsigned failed;	/* files that could not be written */
};

/* The identity of the file at path (device, inode, size, modification
 * and change times), hashed; 0 when it cannot be examined. */
uint64_t mt_unwind_rules_source(const char *path);

/* dir's file for build-id id, checked whole (size, checksum, build-id,
 * source, rows sorted and disjoint, every record well-formed) and trusted
 * (common/trust.h), mapped into f.
 * @return : 1 read; 0 no such file (or out of memory); -1 unsound or
 * untrusted (f empty). */
int mt_unwind_rules_file_read(const char *dir, const uint8_t *id, size_t id_len,
			      uint64_t source, struct mt_unwind_rules_file *f);

/* The row of f that holds vaddr, or NULL. */
const struct mt_unwind_rules_row *mt_unwind_rules_file_find(const struct mt_unwind_rules_file *f,
							    uint64_t vaddr);

/* The rule of a row of f, as mt_unwind_rule_compile makes it, made on
 * first use and the same for every row with the same record (owned by f:
 * valid until mt_unwind_rules_file_release).  @return : it, or NULL when
 * out of memory. */
const struct mt_unwind_rule *mt_unwind_rules_file_rule(struct mt_unwind_rules_file *f,
						       const struct mt_unwind_rules_row *row);

/* Write dir's file for build-id id: the rows of old (may be NULL) and
 * the n rows of add (sorted here; a row that overlaps another is left
 * out), to a temporary name, then renamed.
 * @return : 0, or MT_UNWIND_EIO (MT_UNWIND_ENOMEM). */
int mt_unwind_rules_file_write(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t source, const struct mt_unwind_rules_file *old,
			       struct mt_unwind_rules_new *add, size_t n);

/* Frees the rules made of f's rows too.  Accepts an empty f. */
void mt_unwind_rules_file_release(struct mt_unwind_rules_file *f);

#endif
