/* The scope index file of the debug cache; see scopes_file.h. */
#include "symbolize/scopes_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/buf.h"
#include "common/fnv.h"
#include "symbolize/cache_file.h"
#include "symbolize/debug_cache.h"
#include "common/trust.h"

#define MAGIC "MTSCOPES"
#define VERSION 1
#define HEADER 128
#define ENTRY 24
#define RANGE 24
#define MAX_FILE ((size_t)1 << 30)

_Static_assert(sizeof(struct mt_unwind_scope_range) == RANGE, "range layout");

uint64_t mt_unwind_scopes_identity(Dwarf *dw)
{
	uint64_t h = MT_FNV_BASIS;
	Dwarf_Off off = 0, next, abbrev;
	size_t hsize;
	Dwarf_Half version;
	int units = 0;
	while (dwarf_next_unit(dw, off, &next, &hsize, &version, &abbrev, NULL, NULL, NULL,
			       NULL) == 0) {
		uint64_t w[4] = { off, next - off, (uint64_t)version << 32 | hsize, abbrev };
		h = mt_fnv_from(h, (const unsigned char *)w, 0, sizeof(w));
		off = next;
		units++;
	}
	return units ? h : 0;
}

static int read_all(int fd, uint8_t *buf, size_t n)
{
	for (size_t at = 0; at < n;) {
		ssize_t k = pread(fd, buf + at, n - at, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		at += (size_t)k;
	}
	return 0;
}

/* Ranges sorted by lo, each inside its parent, which comes before it; every
 * key a DIE offset with a tag. */
static int entry_sound(const struct mt_unwind_scopes_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct mt_unwind_scope_range *r = &e->r[i];
		if (r->lo >= r->hi || r->die >= e->nkeys || (i && e->r[i - 1].lo > r->lo))
			return 0;
		if (r->parent != -1) {
			if (r->parent < 0 || (size_t)r->parent >= i)
				return 0;
			const struct mt_unwind_scope_range *p = &e->r[r->parent];
			if (p->lo > r->lo || r->lo >= p->hi)
				return 0;
		}
	}
	for (size_t k = 0; k < e->nkeys; k++)
		if (!MT_UNWIND_SCOPE_KEY_TAG(e->keys[k]))
			return 0;
	return 1;
}

/* Check and index the file in f->buf (len bytes). */
static int parse(struct mt_unwind_scopes_file *f, size_t len, const uint8_t *id, size_t id_len,
		 uint64_t identity)
{
	const uint8_t *b = f->buf;
	if (len < HEADER || memcmp(b, MAGIC, 8) != 0 || mt_ld32(b + 8) != VERSION)
		return -1;
	uint64_t entries = mt_ld32(b + 12), ranges = mt_ld64(b + 24), keys = mt_ld64(b + 32);
	if (mt_ld64(b + 16) != identity || mt_ld32(b + 48) != id_len ||
	    memcmp(b + 56, id, id_len) != 0)
		return -1;
	for (size_t i = 56 + id_len; i < HEADER; i++)	/* padding, as written */
		if (b[i])
			return -1;
	if (mt_ld32(b + 52))
		return -1;
	if (ranges > len / RANGE || keys > len / 8 ||
	    HEADER + ENTRY * entries + RANGE * ranges + 8 * keys != len)
		return -1;
	if (mt_fnv(b + HEADER, len - HEADER) != mt_ld64(b + 40))
		return -1;
	if (!(f->e = calloc(entries ? entries : 1, sizeof(*f->e))))
		return -1;
	const uint8_t *ent = b + HEADER;
	const struct mt_unwind_scope_range *r =
		(const void *)(ent + ENTRY * entries);	/* 8-aligned: 128 + 24k */
	const uint64_t *k = (const void *)((const uint8_t *)r + RANGE * ranges);
	uint64_t used_r = 0, used_k = 0;
	for (size_t i = 0; i < entries; i++, ent += ENTRY) {
		struct mt_unwind_scopes_entry *e = &f->e[i];
		e->root = mt_ld64(ent);
		e->n = mt_ld32(ent + 8);
		e->nkeys = mt_ld32(ent + 12);
		if (mt_ld64(ent + 16) || e->n > ranges - used_r || e->nkeys > keys - used_k)
			return -1;
		e->r = r + used_r;
		e->keys = k + used_k;
		used_r += e->n;
		used_k += e->nkeys;
		if (!entry_sound(e))
			return -1;
	}
	if (used_r != ranges || used_k != keys)
		return -1;
	f->n = entries;
	return 1;
}

int mt_unwind_scopes_file_read(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t identity, struct mt_unwind_scopes_file *f)
{
	memset(f, 0, sizeof(*f));
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "scopes");
	if (!path)
		return 0;
	struct stat st;
	int fd = mt_unwind_cache_file_open(path, MAX_FILE, &st);
	free(path);
	if (fd < 0)
		return fd == -1 ? 0 : -1;
	int rc = -1;
	if ((f->buf = malloc(st.st_size ? (size_t)st.st_size : 1)) &&
	    read_all(fd, f->buf, (size_t)st.st_size) == 0)
		rc = parse(f, (size_t)st.st_size, id, id_len, identity);
	close(fd);
	if (rc < 0)
		mt_unwind_scopes_file_release(f);
	return rc;
}

/* The file's bytes after its header, in one buffer.  @return : NULL on ENOMEM. */
static uint8_t *body(const struct mt_unwind_scopes_entry *e, size_t n, size_t *len,
		     uint64_t *ranges, uint64_t *keys)
{
	*ranges = *keys = 0;
	for (size_t i = 0; i < n; i++) {
		*ranges += e[i].n;
		*keys += e[i].nkeys;
	}
	*len = ENTRY * n + RANGE * *ranges + 8 * *keys;
	uint8_t *b = malloc(*len ? *len : 1), *p = b;
	if (!b)
		return NULL;
	for (size_t i = 0; i < n; i++, p += ENTRY) {
		mt_st64(p, e[i].root);
		mt_st32(p + 8, (uint32_t)e[i].n);
		mt_st32(p + 12, (uint32_t)e[i].nkeys);
		mt_st64(p + 16, 0);
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].n)	/* an empty index has no array: memcpy(, NULL, 0) */
			memcpy(p, e[i].r, RANGE * e[i].n);
		p += RANGE * e[i].n;
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].nkeys)
			memcpy(p, e[i].keys, 8 * e[i].nkeys);
		p += 8 * e[i].nkeys;
	}
	return b;
}

int mt_unwind_scopes_file_write(const char *dir, const uint8_t *id, size_t id_len,
				uint64_t identity, const struct mt_unwind_scopes_entry *e,
				size_t n)
{
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "scopes");
	if (!path || n > UINT32_MAX)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (e[i].n > UINT32_MAX || e[i].nkeys > UINT32_MAX)
			goto fail;
	size_t len;
	uint64_t ranges, keys;
	uint8_t h[HEADER] = MAGIC, *b = body(e, n, &len, &ranges, &keys);
	if (!b)
		goto fail;
	mt_st32(h + 8, VERSION);
	mt_st32(h + 12, (uint32_t)n);
	mt_st64(h + 16, identity);
	mt_st64(h + 24, ranges);
	mt_st64(h + 32, keys);
	mt_st64(h + 40, mt_fnv(b, len));
	mt_st32(h + 48, (uint32_t)id_len);
	memcpy(h + 56, id, id_len);
	struct iovec parts[] = { { h, HEADER }, { b, len } };
	int ok = mt_unwind_cache_file_write(dir, path, parts, 2) == 0;
	free(b);
	free(path);
	return ok ? 0 : MT_UNWIND_EIO;
fail:
	free(path);
	return MT_UNWIND_EIO;
}

void mt_unwind_scopes_file_release(struct mt_unwind_scopes_file *f)
{
	free(f->buf);
	free(f->e);
	memset(f, 0, sizeof(*f));
}
