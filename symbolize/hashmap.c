#include "symbolize/hashmap.h"

#include <stdlib.h>
#include <string.h>

void mt_unwind_hashmap_init(struct mt_unwind_hashmap *h)
{
	memset(h, 0, sizeof(*h));
}

void mt_unwind_hashmap_release(struct mt_unwind_hashmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

static void insert(uint64_t *keys, uint64_t *vals, size_t cap, uint64_t key, uint64_t val,
		   size_t *len)
{
	size_t mask = cap - 1;
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
	while (keys[i] != MT_UNWIND_HASH_EMPTY && keys[i] != key)
		i = (i + 1) & mask;
	if (keys[i] == MT_UNWIND_HASH_EMPTY)
		(*len)++;
	keys[i] = key;
	vals[i] = val;
}

int mt_unwind_hashmap_put(struct mt_unwind_hashmap *h, uint64_t key, uint64_t val)
{
	if (key == MT_UNWIND_HASH_EMPTY)
		return MT_UNWIND_HASH_NO_KEY;
	/* Keep the load under one half so probes stay short. */
	if ((h->len + 1) * 2 > h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		uint64_t *keys = malloc(cap * sizeof(*keys));
		uint64_t *vals = malloc(cap * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return MT_UNWIND_ENOMEM;
		}
		memset(keys, 0xff, cap * sizeof(*keys));
		size_t len = 0;
		for (size_t i = 0; i < h->cap; i++)
			if (h->keys[i] != MT_UNWIND_HASH_EMPTY)
				insert(keys, vals, cap, h->keys[i], h->vals[i], &len);
		free(h->keys);
		free(h->vals);
		h->keys = keys;
		h->vals = vals;
		h->cap = cap;
		h->len = len;
	}
	insert(h->keys, h->vals, h->cap, key, val, &h->len);
	return 0;
}
