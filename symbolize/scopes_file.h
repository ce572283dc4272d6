/* Scope indexes kept across runs: DIR/<build-id>.scopes in the debug cache.
 *
 * Building the index of a big function (an interpreter's main loop: 6000
 * code ranges of inline instances and blocks) walks its DIE tree, and a
 * profile of python3 with its debug info builds ~400 of them, a large part
 * of the symbolising thread's work in such a run.  The indexes depend only
 * on the DWARF, so a run saves what it built and the next one reads it.
 *
 * The file (little-endian; docs/formats/scopes-cache.md):
 *   header, 128 bytes: "MTSCOPES", u32 version (1), u32 entries,
 *     u64 identity (mt_unwind_scopes_identity of the DWARF), u64 ranges,
 *     u64 keys, u64 FNV-1a 64 (common/fnv.h) of all that follows the
 *     header, u32 build-id length, u32 0, the build-id (64 bytes, zero-padded)
 *   entries x 24 bytes: u64 root DIE offset, u32 ranges, u32 keys, u64 0
 *   ranges x 24 bytes: u64 lo, u64 hi, u32 key, s32 parent (both indexes
 *     within the entry; parent -1: none)
 *   keys x 8 bytes: DIE offset | DW_TAG << 48
 * Each entry's ranges and keys follow the previous entry's.
 */
#ifndef MT_UNWIND_SCOPES_FILE_H
#define MT_UNWIND_SCOPES_FILE_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"

/* One code range of a scope DIE.  The ranges of a well-formed tree nest or
 * are disjoint, so each has one tightest enclosing range: parent.  Sorted
 * by lo (then widest first). */
struct mt_unwind_scope_range {
	uint64_t lo, hi;	/* [lo, hi) */
	uint32_t die;		/* the scope's DIE, in the index's DIE list */
	int32_t parent;		/* index, or -1 */
};

/* The index of the scopes under the DIE at root: ranges, and the DIEs they
 * belong to as keys (DIE offset | tag << 48). */
struct mt_unwind_scopes_entry {
	uint64_t root;
	const struct mt_unwind_scope_range *r;
	size_t n;
	const uint64_t *keys;
	size_t nkeys;
};

#define MT_UNWIND_SCOPE_KEY(off, tag) ((uint64_t)(off) | (uint64_t)(tag) << 48)
#define MT_UNWIND_SCOPE_KEY_OFF(k) ((k) & (((uint64_t)1 << 48) - 1))
#define MT_UNWIND_SCOPE_KEY_TAG(k) ((int)((k) >> 48))

struct mt_unwind_scopes_file {
	void *buf;		/* the whole file: the entries point into it */
	struct mt_unwind_scopes_entry *e;
	size_t n;
};

/* What identifies the DWARF an index file was made from, besides its
 * build-id: a hash of every unit header (offset, size, version, abbrev
 * offset), which a rewrite of the DWARF (dwz, another compiler run with
 * the same build-id) changes.  0 when dw has no units. */
uint64_t mt_unwind_scopes_identity(Dwarf *dw);

/* Read dir's file for build-id id, checking all of it (sizes, checksum,
 * build-id, identity, each range's order and nesting) and that no other
 * user can have written it (common/trust.h).
 * @return : 1 read into f; 0 no such file; -1 unsound (f empty). */
int mt_unwind_scopes_file_read(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t identity, struct mt_unwind_scopes_file *f);

/* Write dir's file for build-id id: to a temporary name, then renamed, so
 * concurrent runs never see half a file.  @return : 0, or MT_UNWIND_EIO. */
int mt_unwind_scopes_file_write(const char *dir, const uint8_t *id, size_t id_len,
				uint64_t identity, const struct mt_unwind_scopes_entry *e,
				size_t n);

/* Accepts an empty f. */
void mt_unwind_scopes_file_release(struct mt_unwind_scopes_file *f);

#endif
