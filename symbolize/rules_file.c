/* The CFI row cache of the debug cache; see rules_file.h. */
#include "symbolize/rules_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/cache_dir.h"
#include "common/fnv.h"
#include "common/trust.h"
#include "symbolize/cache_file.h"
#include "symbolize/debug_cache.h"

#define MAGIC "MTCFIRUL"
#define VERSION 1
#define HEADER 128
#define ROW 24
#define REC_HEAD (16 + 16 * MT_UNWIND_NREGS)
#define OP 32
#define MAX_FILE ((size_t)1 << 31)
#define MAX_OPS 4096

_Static_assert(sizeof(struct mt_unwind_rules_row) == ROW, "row layout");

uint64_t mt_unwind_rules_source(const char *path)
{
	struct stat st;
	if (!path || stat(path, &st) != 0)
		return 0;
	uint64_t w[5] = {
		st.st_dev, st.st_ino, (uint64_t)st.st_size,
		(uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec,
		(uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec,
	};
	uint64_t h = mt_fnv(w, sizeof(w));
	return h ? h : 1;
}

static int is_expr_kind(unsigned k)
{
	return k == MT_UNWIND_AT_EXPR || k == MT_UNWIND_VAL_EXPR;
}

/* Is the record at p (size bytes) well-formed?  @return : its heap size
 * as a rule (mt_unwind_rule_compile's layout), or 0. */
static size_t record_check(const uint8_t *p, size_t size)
{
	if (size < REC_HEAD || p[0] > 1 || p[1] > 1 || p[3] || (!p[1] && p[2] >= MT_UNWIND_NREGS))
		return 0;
	uint32_t nexpr = mt_ld32(p + 4), want = p[1];
	for (int r = 0; r < MT_UNWIND_NREGS; r++) {
		const uint8_t *q = p + 16 + 16 * r;
		if (q[0] > MT_UNWIND_VAL_EXPR || mt_ld32(q) >> 8 || mt_ld32(q + 4))
			return 0;
		if (q[0] == MT_UNWIND_REG && (uint64_t)mt_ld64(q + 8) >= MT_UNWIND_NREGS)
			return 0;
		want += is_expr_kind(q[0]);
	}
	if (nexpr != want)
		return 0;
	size_t at = REC_HEAD, heap = (sizeof(struct mt_unwind_rule) + 7) & ~(size_t)7;
	for (uint32_t i = 0; i < nexpr; i++) {
		if (size - at < 8)
			return 0;
		uint32_t nops = mt_ld32(p + at);
		if (nops == 0 || nops > MAX_OPS || mt_ld32(p + at + 4) || (size - at - 8) / OP < nops)
			return 0;
		for (uint32_t k = 0; k < nops; k++) {
			const uint8_t *o = p + at + 8 + (size_t)OP * k;
			if (mt_ld32(o) >> 8 || mt_ld32(o + 4))
				return 0;
		}
		at += 8 + (size_t)OP * nops;
		heap += (sizeof(struct mt_unwind_expr) + nops * sizeof(Dwarf_Op) + 7) & ~(size_t)7;
	}
	return at == size ? heap : 0;
}

static int parse(struct mt_unwind_rules_file *f, const uint8_t *b, size_t len,
		 const uint8_t *id, size_t id_len, uint64_t source)
{
	if (len < HEADER || memcmp(b, MAGIC, 8) != 0 || mt_ld32(b + 8) != VERSION ||
	    mt_ld32(b + 12) != MT_UNWIND_NREGS)
		return -1;
	uint64_t n = mt_ld64(b + 16), rec = mt_ld64(b + 24);
	if (mt_ld64(b + 40) != source || mt_ld32(b + 48) != id_len || mt_ld32(b + 52) ||
	    memcmp(b + 56, id, id_len) != 0)
		return -1;
	for (size_t i = 56 + id_len; i < HEADER; i++)	/* padding, as written */
		if (b[i])
			return -1;
	if (n > len / ROW || rec > len || HEADER + ROW * n + rec != len)
		return -1;
	if (mt_fnv(b + HEADER, len - HEADER) != mt_ld64(b + 32))
		return -1;
	const struct mt_unwind_rules_row *rows = (const void *)(b + HEADER);
	const uint8_t *records = b + HEADER + ROW * n;
	for (size_t i = 0; i < n; i++) {
		const struct mt_unwind_rules_row *r = &rows[i];
		if (r->lo >= r->hi || (i && rows[i - 1].hi > r->lo) || r->off % 8 ||
		    r->off > rec || r->size > rec - r->off ||
		    !record_check(records + r->off, r->size))
			return -1;
	}
	f->rows = rows;
	f->n = (size_t)n;
	f->records = records;
	f->records_len = (size_t)rec;
	return 1;
}

int mt_unwind_rules_file_read(const char *dir, const uint8_t *id, size_t id_len,
			      uint64_t source, struct mt_unwind_rules_file *f)
{
	memset(f, 0, sizeof(*f));
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "rules");
	if (!path)
		return 0;
	void *p;
	size_t len;
	int rc = mt_unwind_cache_file_map(path, HEADER, MAX_FILE, &p, &len);
	free(path);
	if (rc <= 0)
		return rc;
	f->map = p;
	f->map_len = len;
	rc = parse(f, p, len, id, id_len, source);
	if (rc < 0)
		mt_unwind_rules_file_release(f);
	return rc;
}

const struct mt_unwind_rules_row *mt_unwind_rules_file_find(const struct mt_unwind_rules_file *f,
							    uint64_t vaddr)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {	/* first row with lo > vaddr */
		size_t mid = (lo + hi) / 2;
		if (f->rows[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && vaddr < f->rows[lo - 1].hi ? &f->rows[lo - 1] : NULL;
}

/* A record's bytes as a hash map key (never the empty slot's). */
static uint64_t record_key(const uint8_t *p, size_t n)
{
	uint64_t sum = mt_fnv(p, n);
	return sum == MT_UNWIND_HASH_EMPTY ? sum - 1 : sum;
}

/* Make the rule of row from its record. */
static struct mt_unwind_rule *make_rule(const struct mt_unwind_rules_file *f,
					const struct mt_unwind_rules_row *row)
{
	const uint8_t *p = f->records + row->off;
	/* The record was checked whole when the file was read: its size. */
	size_t heap = (sizeof(struct mt_unwind_rule) + 7) & ~(size_t)7;
	for (size_t at = REC_HEAD; at < row->size;) {
		uint32_t nops = mt_ld32(p + at);
		heap += (sizeof(struct mt_unwind_expr) + nops * sizeof(Dwarf_Op) + 7) & ~(size_t)7;
		at += 8 + (size_t)OP * nops;
	}
	struct mt_unwind_rule *rule = calloc(1, heap);
	if (!rule)
		return NULL;
	rule->signal = p[0];
	rule->cfa_is_expr = p[1];
	rule->cfa_reg = p[1] ? 0 : p[2];
	rule->cfa_off = p[1] ? 0 : (int64_t)mt_ld64(p + 8);
	char *h = (char *)rule + ((sizeof(*rule) + 7) & ~(size_t)7);
	size_t at = REC_HEAD;
	for (int r = -1; r < MT_UNWIND_NREGS; r++) {
		if (r >= 0) {
			const uint8_t *q = p + 16 + 16 * r;
			rule->kind[r] = q[0];
			rule->off[r] = (int64_t)mt_ld64(q + 8);
		}
		if (r < 0 ? !rule->cfa_is_expr : !is_expr_kind(rule->kind[r]))
			continue;
		uint32_t nops = mt_ld32(p + at);
		struct mt_unwind_expr *e = (void *)h;
		e->nops = nops;
		for (uint32_t k = 0; k < nops; k++) {
			const uint8_t *o = p + at + 8 + (size_t)OP * k;
			e->ops[k] = (Dwarf_Op){ .atom = o[0], .number = mt_ld64(o + 8),
						.number2 = mt_ld64(o + 16), .offset = mt_ld64(o + 24) };
		}
		if (r < 0)
			rule->cfa_expr = e;
		else
			rule->expr[r] = e;
		h += (sizeof(*e) + nops * sizeof(Dwarf_Op) + 7) & ~(size_t)7;
		at += 8 + (size_t)OP * nops;
	}
	rule->status = MT_UNWIND_RULE_OK;
	mt_unwind_rule_finish(rule);
	return rule;
}

const struct mt_unwind_rule *mt_unwind_rules_file_rule(struct mt_unwind_rules_file *f,
						       const struct mt_unwind_rules_row *row)
{
	/* One per record's bytes, not per pc: a row holds for many pcs, many
	 * rows have the same record, and a rule is a heap block of its own
	 * (fresh pages to fault in). */
	uint64_t v;
	if (mt_unwind_hashmap_get(&f->by_off, row->off, &v))
		return (const void *)(uintptr_t)v;
	const uint8_t *p = f->records + row->off;
	uint64_t sum = record_key(p, row->size);
	struct mt_unwind_rule *rule = NULL;
	if (mt_unwind_hashmap_get(&f->by_sum, sum, &v)) {
		const struct mt_unwind_rules_row *o = &f->rows[v];
		if (o->size == row->size && memcmp(f->records + o->off, p, row->size) == 0 &&
		    mt_unwind_hashmap_get(&f->by_off, o->off, &v))
			rule = (void *)(uintptr_t)v;
	}
	int made = !rule;
	if (made) {
		if (f->nr_made == f->cap_made) {
			size_t cap = f->cap_made ? 2 * f->cap_made : 64;
			struct mt_unwind_rule **m = realloc(f->made, cap * sizeof(*m));
			if (!m)
				return NULL;
			f->made = m;
			f->cap_made = cap;
		}
		if (!(rule = make_rule(f, row)))
			return NULL;
		f->made[f->nr_made++] = rule;
	}
	/* Out of memory in a put: the rule is kept in made all the same. */
	if (mt_unwind_hashmap_put(&f->by_off, row->off, (uintptr_t)rule) != 0)
		return NULL;
	if (made)
		(void)mt_unwind_hashmap_put(&f->by_sum, sum, (uint64_t)(row - f->rows));
	return rule;
}

/* Append rule's record to b.  @return : 0, or -1 (ENOMEM). */
static int record_put(struct mt_buf *b, const struct mt_unwind_rule *rule)
{
	size_t size = REC_HEAD;
	uint32_t nexpr = rule->cfa_is_expr;
	if (rule->cfa_is_expr)
		size += 8 + (size_t)OP * rule->cfa_expr->nops;
	for (int r = 0; r < MT_UNWIND_NREGS; r++)
		if (is_expr_kind(rule->kind[r])) {
			size += 8 + (size_t)OP * rule->expr[r]->nops;
			nexpr++;
		}
	if (mt_buf_reserve(b, size) != 0)
		return -1;
	uint8_t *p = b->data + b->len;
	memset(p, 0, size);
	p[0] = rule->signal;
	p[1] = rule->cfa_is_expr;
	p[2] = rule->cfa_is_expr ? 0 : rule->cfa_reg;
	mt_st32(p + 4, nexpr);
	mt_st64(p + 8, rule->cfa_is_expr ? 0 : (uint64_t)rule->cfa_off);
	for (int r = 0; r < MT_UNWIND_NREGS; r++) {
		p[16 + 16 * r] = rule->kind[r];
		mt_st64(p + 16 + 16 * r + 8, (uint64_t)rule->off[r]);
	}
	size_t at = REC_HEAD;
	for (int r = -1; r < MT_UNWIND_NREGS; r++) {
		const struct mt_unwind_expr *e = r < 0 ? (rule->cfa_is_expr ? rule->cfa_expr : NULL)
					       : is_expr_kind(rule->kind[r]) ? rule->expr[r] : NULL;
		if (!e)
			continue;
		mt_st32(p + at, e->nops);
		for (uint32_t k = 0; k < e->nops; k++) {
			uint8_t *o = p + at + 8 + (size_t)OP * k;
			o[0] = e->ops[k].atom;
			mt_st64(o + 8, e->ops[k].number);
			mt_st64(o + 16, e->ops[k].number2);
			mt_st64(o + 24, e->ops[k].offset);
		}
		at += 8 + (size_t)OP * e->nops;
	}
	b->len += size;
	return 0;
}

/* The record just appended to rec for row r: when one before has the
 * same bytes, drop it and point r at that one (rows share records: the
 * file is a third of the size).  same: FNV of a record's bytes -> its
 * size << 32 | offset.  @return : 0, or -1 (ENOMEM). */
static int share_record(struct mt_unwind_hashmap *same, struct mt_buf *rec,
			struct mt_unwind_rules_row *r)
{
	const uint8_t *p = rec->data + r->off;
	uint64_t sum = record_key(p, r->size), v;
	if (mt_unwind_hashmap_get(same, sum, &v)) {
		uint32_t off = (uint32_t)v;
		if (v >> 32 == r->size && memcmp(rec->data + off, p, r->size) == 0) {
			rec->len = r->off;
			r->off = off;
		}
		return 0;	/* (a different record of that sum: not shared) */
	}
	return mt_unwind_hashmap_put(same, sum, (uint64_t)r->size << 32 | r->off) == 0 ? 0 : -1;
}

static int new_cmp(const void *a, const void *b)
{
	const struct mt_unwind_rules_new *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int mt_unwind_rules_file_write(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t source, const struct mt_unwind_rules_file *old,
			       struct mt_unwind_rules_new *add, size_t n)
{
	char *path = mt_unwind_cache_file_path(dir, id, id_len, "rules");
	if (!path)
		return MT_UNWIND_EIO;
	qsort(add, n, sizeof(*add), new_cmp);
	size_t nold = old ? old->n : 0, i = 0, k = 0;
	struct mt_buf rows = { 0 }, rec = { 0 };
	struct mt_unwind_hashmap same = { 0 };
	uint64_t last_hi = 0;
	int oom = 0, any = 0;
	while (!oom && (i < nold || k < n)) {
		/* the next row by lo: an old one, else a new one */
		int take_old = i < nold && (k >= n || old->rows[i].lo <= add[k].lo);
		uint64_t lo = take_old ? old->rows[i].lo : add[k].lo;
		uint64_t hi = take_old ? old->rows[i].hi : add[k].hi;
		if (any && lo < last_hi) {	/* a duplicate, or an overlap */
			if (take_old)
				i++;
			else
				k++;
			continue;
		}
		struct mt_unwind_rules_row r = { .lo = lo, .hi = hi, .off = (uint32_t)rec.len };
		if (rec.len > UINT32_MAX - (1u << 20))
			break;	/* 4 GiB of records: the rest is not kept */
		if (take_old) {
			const struct mt_unwind_rules_row *o = &old->rows[i++];
			oom = mt_buf_reserve(&rec, o->size) != 0;
			if (!oom)
				mt_buf_put(&rec, old->records + o->off, o->size);
		} else {
			oom = record_put(&rec, add[k++].rule) != 0;
		}
		r.size = (uint32_t)(rec.len - r.off);
		if (!oom)
			oom = share_record(&same, &rec, &r) != 0;
		oom = oom || mt_buf_reserve(&rows, ROW) != 0;
		if (!oom)
			mt_buf_put(&rows, &r, ROW);
		last_hi = hi;
		any = 1;
	}
	int ok = 0;
	if (!oom) {
		uint8_t h[HEADER] = MAGIC;
		mt_st32(h + 8, VERSION);
		mt_st32(h + 12, MT_UNWIND_NREGS);
		mt_st64(h + 16, rows.len / ROW);
		mt_st64(h + 24, rec.len);
		/* rows.len is a multiple of 8: the records continue the words */
		uint64_t sum = mt_fnv_from(MT_FNV_BASIS, rows.data, 0, rows.len);
		mt_st64(h + 32, mt_fnv_from(sum, rec.data, 0, rec.len));
		mt_st64(h + 40, source);
		mt_st32(h + 48, (uint32_t)id_len);
		memcpy(h + 56, id, id_len);
		struct iovec parts[] = { { h, HEADER }, { rows.data, rows.len },
					 { rec.data, rec.len } };
		ok = mt_unwind_cache_file_write(dir, path, parts, 3) == 0;
	}
	mt_buf_release(&rows);
	mt_buf_release(&rec);
	mt_unwind_hashmap_release(&same);
	free(path);
	return ok ? 0 : oom ? MT_UNWIND_ENOMEM : MT_UNWIND_EIO;
}

void mt_unwind_rules_file_release(struct mt_unwind_rules_file *f)
{
	for (size_t i = 0; i < f->nr_made; i++)
		free(f->made[i]);
	free(f->made);
	mt_unwind_hashmap_release(&f->by_off);
	mt_unwind_hashmap_release(&f->by_sum);
	if (f->map)
		munmap(f->map, f->map_len);
	memset(f, 0, sizeof(*f));
}
