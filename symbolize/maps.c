/* Address spaces replayed from the record stream. */
#include "symbolize/maps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct build_id_entry {
	char *path;
	uint8_t id[20];
	unsigned len;
	struct build_id_entry *next;
};

struct mt_unwind_maps {
	struct mt_unwind_modules *modules;
	struct mt_unwind_hashmap spaces;	/* pid -> space */
	struct mt_unwind_hashmap threads;	/* tid -> thread */
	struct build_id_entry *ids;		/* short list: one per DSO */
};

int mt_unwind_maps_new(struct mt_unwind_maps **out, struct mt_unwind_modules *ms)
{
	struct mt_unwind_maps *mp = calloc(1, sizeof(*mp));
	if (!mp)
		return MT_UNWIND_ENOMEM;
	mp->modules = ms;
	*out = mp;
	return 0;
}

static void space_changed(struct mt_unwind_space *sp)
{
	sp->gen++;
	if (sp->pccache)
		memset(sp->pccache, 0, (sp->pcmask + (size_t)1) * sizeof(*sp->pccache));
}

static void space_clear(struct mt_unwind_space *sp)
{
	space_changed(sp);
	for (size_t i = 0; i < sp->nr; i++)
		free(sp->maps[i].path);
	sp->nr = 0;
}

void mt_unwind_maps_free(struct mt_unwind_maps *mp)
{
	if (!mp)
		return;
	for (size_t i = 0; i < mp->spaces.cap; i++) {
		if (mp->spaces.keys[i] == MT_UNWIND_HASH_EMPTY)
			continue;
		struct mt_unwind_space *sp = (void *)(uintptr_t)mp->spaces.vals[i];
		space_clear(sp);
		free(sp->maps);
		free(sp->pccache);
		free(sp);
	}
	for (size_t i = 0; i < mp->threads.cap; i++)
		if (mp->threads.keys[i] != MT_UNWIND_HASH_EMPTY)
			free((void *)(uintptr_t)mp->threads.vals[i]);
	mt_unwind_hashmap_release(&mp->spaces);
	mt_unwind_hashmap_release(&mp->threads);
	while (mp->ids) {
		struct build_id_entry *e = mp->ids;
		mp->ids = e->next;
		free(e->path);
		free(e);
	}
	free(mp);
}

struct mt_unwind_space *mt_unwind_maps_space(struct mt_unwind_maps *mp, uint32_t pid)
{
	uint64_t v;
	return mt_unwind_hashmap_get(&mp->spaces, pid, &v) ? (void *)(uintptr_t)v : NULL;
}

static struct mt_unwind_space *space_get(struct mt_unwind_maps *mp, uint32_t pid)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(mp, pid);
	if (sp)
		return sp;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->pid = pid;
	if (mt_unwind_hashmap_put(&mp->spaces, pid, (uintptr_t)sp) != 0) {
		free(sp);
		return NULL;
	}
	return sp;
}

struct mt_unwind_thread *mt_unwind_maps_thread(struct mt_unwind_maps *mp, uint32_t tid)
{
	uint64_t v;
	return mt_unwind_hashmap_get(&mp->threads, tid, &v) ? (void *)(uintptr_t)v : NULL;
}

static struct mt_unwind_thread *thread_get(struct mt_unwind_maps *mp, uint32_t pid,
					   uint32_t tid)
{
	struct mt_unwind_thread *t = mt_unwind_maps_thread(mp, tid);
	if (t) {
		t->pid = pid;
		return t;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	if (mt_unwind_hashmap_put(&mp->threads, tid, (uintptr_t)t) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

static int space_reserve(struct mt_unwind_space *sp, size_t extra)
{
	if (sp->nr + extra <= sp->cap)
		return 0;
	size_t cap = sp->cap ? sp->cap * 2 : 16;
	while (cap < sp->nr + extra)
		cap *= 2;
	struct mt_unwind_map *m = realloc(sp->maps, cap * sizeof(*m));
	if (!m)
		return MT_UNWIND_ENOMEM;
	sp->maps = m;
	sp->cap = cap;
	return 0;
}

/* Cut [start, end) out of the existing mappings: a new mmap replaces what
 * it overlaps, as the kernel does. */
static int space_punch(struct mt_unwind_space *sp, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < sp->nr; i++) {
		struct mt_unwind_map *m = &sp->maps[i];
		if (m->end <= start || m->start >= end)
			continue;
		space_changed(sp);
		if (m->start < start && m->end > end) {	/* split in two */
			if (space_reserve(sp, 1) != 0)
				return MT_UNWIND_ENOMEM;
			m = &sp->maps[i];
			struct mt_unwind_map tail = *m;
			tail.path = strdup(m->path);
			if (!tail.path)
				return MT_UNWIND_ENOMEM;
			tail.pgoff += end - m->start;
			tail.start = end;
			tail.resolved = 0;
			m->end = start;
			memmove(&sp->maps[i + 2], &sp->maps[i + 1],
				(sp->nr - i - 1) * sizeof(*m));
			sp->maps[i + 1] = tail;
			sp->nr++;
			return 0;
		}
		if (m->start < start) {
			m->end = start;
		} else if (m->end > end) {
			m->pgoff += end - m->start;
			m->start = end;
			m->resolved = 0;
		} else {
			free(m->path);
			memmove(m, m + 1, (sp->nr - i - 1) * sizeof(*m));
			sp->nr--;
			i--;
		}
	}
	return 0;
}

static const struct build_id_entry *known_id(struct mt_unwind_maps *mp, const char *path)
{
	for (const struct build_id_entry *e = mp->ids; e; e = e->next)
		if (strcmp(e->path, path) == 0)
			return e;
	return NULL;
}

int mt_unwind_maps_mmap(struct mt_unwind_maps *mp, uint32_t pid, uint64_t start,
			uint64_t len, uint64_t pgoff, const char *path,
			const uint8_t *build_id, unsigned build_id_len, int executable)
{
	struct mt_unwind_space *sp = space_get(mp, pid);
	if (!sp)
		return MT_UNWIND_ENOMEM;
	uint64_t end = start + len;
	if (end < start)
		end = UINT64_MAX;
	/* Data mappings (most mmaps: heap arenas) leave the memo alone
	 * unless they cut into code. */
	if (space_punch(sp, start, end) != 0)
		return MT_UNWIND_ENOMEM;
	if (!executable || len == 0)
		return 0;
	space_changed(sp);
	if (space_reserve(sp, 1) != 0)
		return MT_UNWIND_ENOMEM;
	struct mt_unwind_map m = { .start = start, .end = end, .pgoff = pgoff };
	m.path = strdup(path);
	if (!m.path)
		return MT_UNWIND_ENOMEM;
	if (build_id_len > 20)
		build_id_len = 20;
	if (!build_id_len) {
		const struct build_id_entry *e = known_id(mp, path);
		if (e) {
			build_id = e->id;
			build_id_len = e->len;
		}
	}
	if (build_id_len)
		memcpy(m.build_id, build_id, build_id_len);
	m.build_id_len = (uint8_t)build_id_len;
	size_t i = sp->nr;
	while (i > 0 && sp->maps[i - 1].start > start)
		i--;
	memmove(&sp->maps[i + 1], &sp->maps[i], (sp->nr - i) * sizeof(m));
	sp->maps[i] = m;
	sp->nr++;
	return 0;
}

int mt_unwind_maps_add_build_id(struct mt_unwind_maps *mp, const char *path,
				const uint8_t *id, unsigned len)
{
	if (known_id(mp, path) || len == 0)
		return 0;
	struct build_id_entry *e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		return MT_UNWIND_ENOMEM;
	}
	e->len = len > 20 ? 20 : len;
	memcpy(e->id, id, e->len);
	e->next = mp->ids;
	mp->ids = e;
	return 0;
}

int mt_unwind_maps_comm(struct mt_unwind_maps *mp, uint32_t pid, uint32_t tid,
			const char *comm, int exec)
{
	struct mt_unwind_thread *t = thread_get(mp, pid, tid);
	if (!t)
		return MT_UNWIND_ENOMEM;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	if (exec) {
		/* exec: the old image is gone; its new mappings follow. */
		struct mt_unwind_space *sp = mt_unwind_maps_space(mp, pid);
		if (sp)
			space_clear(sp);
	}
	return 0;
}

int mt_unwind_maps_fork(struct mt_unwind_maps *mp, uint32_t pid, uint32_t ppid,
			uint32_t tid, uint32_t ptid)
{
	struct mt_unwind_thread *parent = mt_unwind_maps_thread(mp, ptid);
	struct mt_unwind_thread *t = thread_get(mp, pid, tid);
	if (!t)
		return MT_UNWIND_ENOMEM;
	t->exited = 0;
	if (parent)
		memcpy(t->comm, parent->comm, sizeof(t->comm));
	if (pid == ppid)
		return 0;	/* a new thread shares the address space */
	struct mt_unwind_space *from = mt_unwind_maps_space(mp, ppid);
	struct mt_unwind_space *sp = space_get(mp, pid);
	if (!sp)
		return MT_UNWIND_ENOMEM;
	space_clear(sp);
	if (!from || from == sp)
		return 0;
	if (space_reserve(sp, from->nr) != 0)
		return MT_UNWIND_ENOMEM;
	for (size_t i = 0; i < from->nr; i++) {
		sp->maps[i] = from->maps[i];
		sp->maps[i].path = strdup(from->maps[i].path);
		if (!sp->maps[i].path) {
			sp->nr = i;
			return MT_UNWIND_ENOMEM;
		}
	}
	sp->nr = from->nr;
	return 0;
}

int mt_unwind_maps_exit(struct mt_unwind_maps *mp, uint32_t pid, uint32_t tid)
{
	(void)pid;
	/* Kept: records are not strictly time-ordered, and a sample of this
	 * thread may still follow. */
	struct mt_unwind_thread *t = mt_unwind_maps_thread(mp, tid);
	if (t)
		t->exited = 1;
	return 0;
}

/* resolved is set last (release): a worker of mt-unwind -j that reads it
 * set (acquire) sees mod and delta (symbolize/jobs.c). */
static void map_resolve(struct mt_unwind_maps *mp, struct mt_unwind_map *m)
{
	if (!m->mod)
		m->mod = mt_unwind_modules_get(mp->modules, m->path, m->build_id,
					       m->build_id_len);
	m->delta_ok = 0;
	int64_t d;
	if (m->mod && m->mod->state == MT_UNWIND_MOD_OK &&
	    mt_unwind_module_vaddr_delta(m->mod, m->pgoff, &d) == 0) {
		/* modulo 2^64, as it is applied: an ELF file's segment
		 * addresses can be anything */
		m->delta = (int64_t)(m->pgoff - m->start + (uint64_t)d);
		m->delta_ok = 1;
	}
	__atomic_store_n(&m->resolved, 1, __ATOMIC_RELEASE);
}

void mt_unwind_maps_resolve(struct mt_unwind_maps *mp, struct mt_unwind_map *m)
{
	if (!m->resolved)
		map_resolve(mp, m);
}

struct mt_unwind_map *mt_unwind_maps_lookup(const struct mt_unwind_space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sp->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == sp->nr || sp->maps[lo].start > addr)
		return NULL;
	return &sp->maps[lo];
}

struct mt_unwind_map *mt_unwind_maps_find(struct mt_unwind_maps *mp,
					  struct mt_unwind_space *sp, uint64_t addr)
{
	struct mt_unwind_map *m = mt_unwind_maps_lookup(sp, addr);
	if (m && !m->resolved)
		map_resolve(mp, m);
	return m;
}
