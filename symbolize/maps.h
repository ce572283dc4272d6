/* Address spaces: which file is mapped where in each process, replayed from
 * MMAP/MMAP2/COMM/FORK/EXIT records in stream order, so a sample sees the
 * mappings as of its own time.  Threads carry their command name.
 *
 * Only executable mappings are kept: they are the ones a pc can fall in.
 * Modules are opened lazily, at the first pc that needs them.
 */
#ifndef MT_UNWIND_MAPS_H
#define MT_UNWIND_MAPS_H

#include <stdint.h>

#include "symbolize/error.h"
#include "symbolize/hashmap.h"
#include "symbolize/module.h"

struct mt_unwind_map {
	uint64_t start, end;		/* [start, end) in the process */
	uint64_t pgoff;
	char *path;			/* owned */
	uint8_t build_id[20];
	uint8_t build_id_len;
	int resolved;			/* mod and delta computed */
	int64_t delta;			/* ELF vaddr = address + delta */
	int delta_ok;			/* 0: no PT_LOAD covers pgoff */
	struct mt_unwind_module *mod;	/* NULL until resolved or on ENOMEM */
};

/* Per-pc memo of a space: the mapping and rule found for a lookup address,
 * so a pc seen again costs one probe.  Direct-mapped; emptied whenever the
 * space's mappings change (map pointers move).  Small until the space has
 * had MT_UNWIND_PCCACHE_GROW walks: most processes of a build or a shell
 * pipeline have a few samples each, and a large memo apiece was most of
 * mt-unwind's page faults on a 200-process recording. */
#define MT_UNWIND_PCCACHE_SMALL 256
#define MT_UNWIND_PCCACHE_LARGE 4096
#define MT_UNWIND_PCCACHE_GROW 256
struct mt_unwind_pcentry {
	uint64_t key;			/* lookup address + 1; 0: empty */
	struct mt_unwind_map *map;
	const void *rule;		/* const struct mt_unwind_rule * */
};

struct mt_unwind_space {
	uint32_t pid;
	struct mt_unwind_map *maps;	/* sorted by start, disjoint */
	size_t nr, cap;
	struct mt_unwind_pcentry *pccache;	/* NULL until the first sample */
	uint32_t pcmask;		/* pccache entries - 1 */
	uint32_t walks;			/* counted up to MT_UNWIND_PCCACHE_GROW */
	uint64_t gen;			/* bumped at every change of maps */
};

struct mt_unwind_thread {
	uint32_t pid, tid;
	char comm[32];			/* "" when unknown */
	int exited;
};

struct mt_unwind_maps;

/* Address spaces sharing the module cache ms (which must outlive them).
 * @return : 0 or MT_UNWIND_ENOMEM. */
int mt_unwind_maps_new(struct mt_unwind_maps **out, struct mt_unwind_modules *ms);
void mt_unwind_maps_free(struct mt_unwind_maps *mp);

/* Record events.  Each @return : 0 or MT_UNWIND_ENOMEM. */
int mt_unwind_maps_mmap(struct mt_unwind_maps *mp, uint32_t pid, uint64_t start,
			uint64_t len, uint64_t pgoff, const char *path,
			const uint8_t *build_id, unsigned build_id_len, int executable);
int mt_unwind_maps_comm(struct mt_unwind_maps *mp, uint32_t pid, uint32_t tid,
			const char *comm, int exec);
int mt_unwind_maps_fork(struct mt_unwind_maps *mp, uint32_t pid, uint32_t ppid,
			uint32_t tid, uint32_t ptid);
int mt_unwind_maps_exit(struct mt_unwind_maps *mp, uint32_t pid, uint32_t tid);

/* Build-ids known from elsewhere (perf.data's build-id table, HEADER_BUILD_ID
 * records): used for mappings of path that carry none.  @return : 0/MT_UNWIND_ENOMEM */
int mt_unwind_maps_add_build_id(struct mt_unwind_maps *mp, const char *path,
				const uint8_t *id, unsigned len);

/* @return : the process's address space, NULL when none was seen. */
struct mt_unwind_space *mt_unwind_maps_space(struct mt_unwind_maps *mp, uint32_t pid);

/* @return : the thread (NULL when never seen). */
struct mt_unwind_thread *mt_unwind_maps_thread(struct mt_unwind_maps *mp, uint32_t tid);

/* The mapping that holds addr, with its module resolved (map->mod may still
 * be in a failed state: check mod->state).
 * @return : the mapping, or NULL when addr is in none. */
struct mt_unwind_map *mt_unwind_maps_find(struct mt_unwind_maps *mp,
					  struct mt_unwind_space *sp, uint64_t addr);

/* The two halves of mt_unwind_maps_find, for a walk on a worker thread
 * (symbolize/jobs.c): the mapping that holds addr, as it is (NULL: none;
 * it reads sp only), and its module resolved (the caller serialises
 * this; ->resolved is stored last, with release order). */
struct mt_unwind_map *mt_unwind_maps_lookup(const struct mt_unwind_space *sp, uint64_t addr);
void mt_unwind_maps_resolve(struct mt_unwind_maps *mp, struct mt_unwind_map *m);

#endif
