/* Location details of mt-unwind --pprof-info; see locs.h. */
#include "fold/locs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold/strtab.h"

struct mt_fold_locs {
	int keep;
	int active;			/* this file had module lines */
	struct mt_fold_strtab *mods;	/* "BUILDID\0PATH" -> global - 1 */
	uint32_t *local;		/* this file's N -> global (0: none) */
	uint32_t nlocal;
	char *buf;
	size_t cap;
	uint64_t unknown;
};

struct mt_fold_locs *mt_fold_locs_new(int keep)
{
	struct mt_fold_locs *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->keep = keep;
	if (!(l->mods = mt_fold_strtab_new())) {
		free(l);
		return NULL;
	}
	return l;
}

void mt_fold_locs_free(struct mt_fold_locs *l)
{
	if (!l)
		return;
	mt_fold_strtab_free(l->mods);
	free(l->local);
	free(l->buf);
	free(l);
}

void mt_fold_locs_file(struct mt_fold_locs *l)
{
	l->active = 0;
	if (l->local)
		memset(l->local, 0, l->nlocal * sizeof(*l->local));
}

int mt_fold_locs_active(const struct mt_fold_locs *l)
{
	return l->active;
}

/* s[0..len) as a decimal.  @return : 0, or -1 when not one. */
static int dec(const char *s, size_t len, uint64_t *v)
{
	if (!len || len > 19)
		return -1;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

static int hex(const char *s, size_t len, uint64_t *v)
{
	if (!len || len > 16)
		return -1;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	return 0;
}

int mt_fold_locs_comment(struct mt_fold_locs *l, const char *line, size_t len)
{
	static const char pre[] = "# module ";
	size_t n = sizeof(pre) - 1;
	if (len <= n || memcmp(line, pre, n) != 0)
		return 0;
	const char *s = line + n, *end = line + len;
	const char *sp = memchr(s, ' ', (size_t)(end - s));
	uint64_t num;
	if (!sp || dec(s, (size_t)(sp - s), &num) || num == 0 || num > 1000000)
		return 0;
	const char *id = sp + 1;
	const char *sp2 = memchr(id, ' ', (size_t)(end - id));
	if (!sp2)
		return 0;
	size_t idlen = (size_t)(sp2 - id);
	if (idlen == 1 && id[0] == '-')
		idlen = 0;
	const char *path = sp2 + 1;
	size_t plen = (size_t)(end - path);
	char *key = malloc(idlen + 1 + plen);
	if (!key)
		return MT_FOLD_ENOMEM;
	memcpy(key, id, idlen);
	key[idlen] = '\0';
	memcpy(key + idlen + 1, path, plen);
	uint32_t g;
	int r = mt_fold_strtab_intern(l->mods, key, idlen + 1 + plen, &g);
	free(key);
	if (r < 0)
		return MT_FOLD_ENOMEM;
	if (num >= l->nlocal) {
		uint32_t c = l->nlocal ? l->nlocal : 16;
		while (c <= num)
			c *= 2;
		uint32_t *p = realloc(l->local, c * sizeof(*p));
		if (!p)
			return MT_FOLD_ENOMEM;
		memset(p + l->nlocal, 0, (c - l->nlocal) * sizeof(*p));
		l->local = p;
		l->nlocal = c;
	}
	l->local[num] = g + 1;
	l->active = 1;
	return 1;
}

/* Where the " @N+0xADDR" suffix of s[0..len) begins (len: none). */
static size_t addr_suffix(const char *s, size_t len, uint64_t *num, uint64_t *addr)
{
	size_t i = len;
	while (i > 0 && s[i - 1] != '@' && s[i - 1] != ' ' && s[i - 1] != ';')
		i--;
	if (i < 2 || s[i - 1] != '@' || s[i - 2] != ' ')
		return len;
	const char *plus = memchr(s + i, '+', len - i);
	if (!plus || plus + 2 >= s + len || plus[1] != '0' || plus[2] != 'x' ||
	    dec(s + i, (size_t)(plus - (s + i)), num) ||
	    hex(plus + 3, (size_t)(s + len - plus - 3), addr))
		return len;
	return i - 2;
}

/* Where a " {FILE:N}" or " (FILE:N)" suffix (open '{' or '(') begins. */
static size_t paren_suffix(const char *s, size_t len, char open, struct mt_fold_str *file,
			   int64_t *line)
{
	char close = open == '{' ? '}' : ')';
	if (len < 5 || s[len - 1] != close)
		return len;
	size_t colon = len - 1;
	while (colon > 0 && s[colon - 1] >= '0' && s[colon - 1] <= '9')
		colon--;
	uint64_t v;
	if (colon == 0 || s[colon - 1] != ':' || dec(s + colon, len - 1 - colon, &v))
		return len;
	colon--;
	size_t o = colon;
	while (o > 0 && !(s[o] == open && s[o - 1] == ' '))
		o--;
	if (o == 0)
		return len;
	file->s = s + o + 1;
	file->len = colon - o - 1;
	*line = (int64_t)v;
	return o - 1;
}

void mt_fold_frame_parse(const char *s, size_t len, struct mt_fold_frame *f)
{
	memset(f, 0, sizeof(*f));
	uint64_t num, addr;
	size_t k = addr_suffix(s, len, &num, &addr);
	if (k < len && num <= UINT32_MAX) {
		f->mod = (uint32_t)num;
		f->addr = addr;
		len = k;
	}
	len = paren_suffix(s, len, '{', &f->fn_file, &f->start);
	len = paren_suffix(s, len, '(', &f->file, &f->line);
	if (len >= 4 && memcmp(s + len - 4, "_[i]", 4) == 0) {
		f->inlined = 1;
		len -= 4;
	}
	f->name.s = s;
	f->name.len = len;
}

int mt_fold_locs_frames(struct mt_fold_locs *l, struct mt_fold_str in, struct mt_fold_str *out)
{
	size_t need = in.len + 32 * (in.len / 4 + 1);	/* renumbering may lengthen */
	if (need > l->cap) {
		char *b = realloc(l->buf, need);
		if (!b)
			return MT_FOLD_ENOMEM;
		l->buf = b;
		l->cap = need;
	}
	size_t n = 0;
	const char *s = in.s, *end = in.s + in.len;
	while (s <= end) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		size_t len = semi ? (size_t)(semi - s) : (size_t)(end - s);
		uint64_t num, addr;
		size_t a = addr_suffix(s, len, &num, &addr);
		uint32_t g = 0;
		if (a < len) {
			g = num < l->nlocal ? l->local[num] : 0;
			if (!g)
				l->unknown++;
		}
		size_t body = a;
		if (!l->keep) {
			struct mt_fold_str file;
			int64_t line;
			body = paren_suffix(s, a, '{', &file, &line);
		}
		memcpy(l->buf + n, s, body);
		n += body;
		if (l->keep && g)
			n += (size_t)sprintf(l->buf + n, " @%u+0x%llx", g, (unsigned long long)addr);
		if (!semi)
			break;
		l->buf[n++] = ';';
		s = semi + 1;
	}
	out->s = l->buf;
	out->len = n;
	return 0;
}

uint32_t mt_fold_locs_module_count(const struct mt_fold_locs *l)
{
	return mt_fold_strtab_count(l->mods);
}

void mt_fold_locs_module(const struct mt_fold_locs *l, uint32_t g, const char **build_id,
			 const char **path)
{
	size_t len;
	const char *k = mt_fold_strtab_get(l->mods, g - 1, &len);
	*build_id = k;
	*path = k + strlen(k) + 1;
}

uint64_t mt_fold_locs_unknown(const struct mt_fold_locs *l)
{
	return l->unknown;
}
