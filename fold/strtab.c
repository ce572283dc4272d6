/* String interning with open addressing and linear probing. */
#include "fold/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "fold/line.h"

#define ARENA_CHUNK (1u << 20)

struct entry {
	const char *s;
	uint32_t len;
	uint64_t hash;
};

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct mt_fold_strtab {
	uint32_t *slots;	/* id + 1; 0 = empty */
	size_t mask;
	struct entry *ents;
	uint32_t count, cap;
	struct chunk *arena;
};

uint64_t mt_fold_hash(const char *s, size_t len)
{
	/* Eight bytes per multiply, then a full avalanche: stacks share long
	 * prefixes, so every input bit must reach the low bits used as index. */
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (len * 0xff51afd7ed558ccdull);
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		s += 8;
		len -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

struct mt_fold_strtab *mt_fold_strtab_new(void)
{
	struct mt_fold_strtab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->mask = 1023;
	t->slots = calloc(t->mask + 1, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void mt_fold_strtab_free(struct mt_fold_strtab *t)
{
	if (!t)
		return;
	for (struct chunk *c = t->arena, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->slots);
	free(t->ents);
	free(t);
}

static char *arena_copy(struct mt_fold_strtab *t, const char *s, size_t len)
{
	struct chunk *c = t->arena;
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = t->arena;
		c->used = 0;
		c->size = size;
		t->arena = c;
	}
	char *dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = 0;
	c->used += len + 1;
	return dst;
}

static int grow(struct mt_fold_strtab *t)
{
	size_t nmask = t->mask * 2 + 1;
	uint32_t *slots = calloc(nmask + 1, sizeof(*slots));
	if (!slots)
		return MT_FOLD_ENOMEM;
	for (uint32_t id = 0; id < t->count; id++) {
		size_t i = t->ents[id].hash & nmask;
		while (slots[i])
			i = (i + 1) & nmask;
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = nmask;
	return 0;
}

int mt_fold_strtab_intern(struct mt_fold_strtab *t, const char *s, size_t len,
			  uint32_t *id)
{
	if (len > UINT32_MAX - 1)
		return MT_FOLD_ENOMEM;
	uint64_t h = mt_fold_hash(s, len);
	size_t i = h & t->mask;
	for (;;) {
		uint32_t slot = t->slots[i];
		if (!slot)
			break;
		const struct entry *e = &t->ents[slot - 1];
		if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
			*id = slot - 1;
			return 0;
		}
		i = (i + 1) & t->mask;
	}
	if (t->count == UINT32_MAX - 1)
		return MT_FOLD_ENOMEM;
	if (t->count == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 256;
		struct entry *ents = realloc(t->ents, ncap * sizeof(*ents));
		if (!ents)
			return MT_FOLD_ENOMEM;
		t->ents = ents;
		t->cap = ncap;
	}
	char *copy = arena_copy(t, s, len);
	if (!copy)
		return MT_FOLD_ENOMEM;
	t->ents[t->count] = (struct entry){ copy, (uint32_t)len, h };
	t->slots[i] = t->count + 1;
	*id = t->count++;
	/* Keep the load under 1/2 so probes stay short. */
	if ((size_t)t->count * 2 > t->mask && grow(t))
		return MT_FOLD_ENOMEM;
	return 1;
}

uint32_t mt_fold_strtab_count(const struct mt_fold_strtab *t)
{
	return t->count;
}

const char *mt_fold_strtab_get(const struct mt_fold_strtab *t, uint32_t id,
			       size_t *len)
{
	if (len)
		*len = t->ents[id].len;
	return t->ents[id].s;
}
