/* Parsing SAMPLE records and the kernel records mt uses, every field
 * bounds-checked against the record. */
#include "codec/perf_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Newer kernels' branch counters change the branch stack layout. */
#define MT_PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)

/* A cursor over a record's bytes. */
struct cur {
	const uint8_t *base, *p, *end;
	const char *field;	/* the field being read, for messages */
};

static int need(struct cur *c, size_t n, const char *field, char *why, size_t whylen)
{
	if ((size_t)(c->end - c->p) < n) {
		mt_perf__why(why, whylen, "%s at byte %zu needs %zu bytes but the record "
			     "(size %zu) has %zu left", field, (size_t)(c->p - c->base), n,
			     (size_t)(c->end - c->base), (size_t)(c->end - c->p));
		return MT_PERF_EFORMAT;
	}
	return 0;
}

static uint64_t u64(struct cur *c)
{
	uint64_t v;

	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static uint32_t u32(struct cur *c)
{
	uint32_t v;

	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

#define NEED(n, field) do { \
		int e_ = need(&c, (n), (field), why, whylen); \
		if (e_) \
			return e_; \
	} while (0)

size_t mt_perf__trailer_size(uint64_t t)
{
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

const struct mt_perf_evsel *mt_perf__sample_evsel(const struct mt_perf_reader *r,
						   const struct perf_event_header *rec,
						   int *code, char *why, size_t whylen)
{
	const struct mt_perf_evsel *e0 = mt_perf_reader_evsel(r, 0), *e;
	const uint8_t *p = (const uint8_t *)rec;
	uint64_t t, id;
	size_t pos;

	*code = MT_PERF_ENOATTR;
	if (!e0) {
		mt_perf__why(why, whylen, "no attr precedes the sample");
		return NULL;
	}
	if (mt_perf__nr_evsels(r) == 1)
		return e0;
	t = e0->attr.sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		pos = 8;
	} else if (t & PERF_SAMPLE_ID) {
		pos = 8 + 8 * (!!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) +
			       !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR));
	} else {
		mt_perf__why(why, whylen, "%zu attrs but samples carry no id",
			     mt_perf__nr_evsels(r));
		return NULL;
	}
	if (rec->size < pos + 8) {
		mt_perf__why(why, whylen, "sample id at byte %zu lies past the record (size %u)",
			     pos, rec->size);
		*code = MT_PERF_EFORMAT;
		return NULL;
	}
	memcpy(&id, p + pos, 8);
	e = mt_perf__evsel_by_id(r, id);
	if (!e)
		mt_perf__why(why, whylen, "sample id %llu matches no attr", (unsigned long long)id);
	return e;
}

const struct mt_perf_evsel *mt_perf__other_evsel(const struct mt_perf_reader *r,
						  const struct perf_event_header *rec)
{
	const struct mt_perf_evsel *e0 = mt_perf_reader_evsel(r, 0);
	const uint8_t *p = (const uint8_t *)rec;
	uint64_t t, id;
	size_t back;

	if (!e0 || mt_perf__nr_evsels(r) == 1)
		return e0;
	if (!e0->attr.sample_id_all)
		return NULL;
	t = e0->attr.sample_type;
	if (t & PERF_SAMPLE_IDENTIFIER)
		back = 8;
	else if (t & PERF_SAMPLE_ID)
		back = 8 * (1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU));
	else
		return NULL;
	if (rec->size < sizeof(*rec) + back)
		return NULL;
	memcpy(&id, p + rec->size - back, 8);
	return mt_perf__evsel_by_id(r, id);
}

/* Skip a read_format value. */
static int skip_read(struct cur *c_, uint64_t rf, char *why, size_t whylen)
{
	struct cur c = *c_;
	size_t per = 8 + 8 * (!!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
	size_t times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			    !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));

	if (rf & ~(uint64_t)(PERF_FORMAT_ID | PERF_FORMAT_LOST | PERF_FORMAT_GROUP |
			     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)) {
		mt_perf__why(why, whylen, "unknown read_format bits 0x%llx",
			     (unsigned long long)rf);
		return MT_PERF_EFORMAT;
	}
	if (rf & PERF_FORMAT_GROUP) {
		uint64_t nr;

		NEED(8 + times, "READ group header");
		nr = u64(&c);
		c.p += times;
		if (nr > (size_t)(c.end - c.p) / per) {
			mt_perf__why(why, whylen, "READ group of %llu values overruns the record "
				     "(size %zu)", (unsigned long long)nr, (size_t)(c.end - c.base));
			return MT_PERF_EFORMAT;
		}
		c.p += nr * per;
	} else {
		NEED(per + times, "READ value");
		c.p += per + times;
	}
	*c_ = c;
	return 0;
}

static int read_regs(struct cur *c_, uint64_t mask, uint64_t *abi, unsigned *nr,
		     uint64_t *regs, const char *what, char *why, size_t whylen)
{
	struct cur c = *c_;
	unsigned i, n = (unsigned)__builtin_popcountll(mask);

	NEED(8, what);
	*abi = u64(&c);
	*nr = 0;
	if (*abi) {
		NEED(8 * (size_t)n, what);
		for (i = 0; i < n; i++) {
			uint64_t v = u64(&c);

			if (regs)
				regs[i] = v;
		}
		*nr = n;
	}
	*c_ = c;
	return 0;
}

int mt_perf__sample_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
			  struct mt_perf_sample *s, char *why, size_t whylen)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)(rec + 1),
			 (const uint8_t *)rec + rec->size, NULL };
	const struct mt_perf_evsel *e;
	const struct perf_event_attr *a;
	uint64_t t, abi;
	unsigned nr;
	int err;

	memset(s, 0, offsetof(struct mt_perf_sample, regs));
	s->regs_offset = 0;
	s->stack_size = s->stack_dyn_size = 0;
	s->stack = NULL;
	s->stack_offset = 0;
	e = mt_perf__sample_evsel(r, rec, &err, why, whylen);
	if (!e)
		return err;
	a = &e->attr;
	t = a->sample_type;
	s->evsel = e;
	s->sample_type = t;
	if (t & ~(uint64_t)(PERF_SAMPLE_MAX - 1)) {
		mt_perf__why(why, whylen, "unknown sample_type bits 0x%llx",
			     (unsigned long long)(t & ~(uint64_t)(PERF_SAMPLE_MAX - 1)));
		return MT_PERF_EFORMAT;
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "IDENTIFIER");
		s->id = u64(&c);
	}
	if (t & PERF_SAMPLE_IP) {
		NEED(8, "IP");
		s->ip = u64(&c);
	}
	if (t & PERF_SAMPLE_TID) {
		NEED(8, "TID");
		s->pid = u32(&c);
		s->tid = u32(&c);
	}
	if (t & PERF_SAMPLE_TIME) {
		NEED(8, "TIME");
		s->time = u64(&c);
	}
	if (t & PERF_SAMPLE_ADDR) {
		NEED(8, "ADDR");
		s->addr = u64(&c);
	}
	if (t & PERF_SAMPLE_ID) {
		NEED(8, "ID");
		s->id = u64(&c);
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		NEED(8, "STREAM_ID");
		s->stream_id = u64(&c);
	}
	if (t & PERF_SAMPLE_CPU) {
		NEED(8, "CPU");
		s->cpu = u32(&c);
		c.p += 4;
	}
	if (t & PERF_SAMPLE_PERIOD) {
		NEED(8, "PERIOD");
		s->period = u64(&c);
	}
	if (t & PERF_SAMPLE_READ) {
		err = skip_read(&c, a->read_format, why, whylen);
		if (err)
			return err;
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t n;

		NEED(8, "CALLCHAIN");
		n = u64(&c);
		if (n > (size_t)(c.end - c.p) / 8) {
			mt_perf__why(why, whylen, "CALLCHAIN of %llu entries overruns the record "
				     "(size %u)", (unsigned long long)n, rec->size);
			return MT_PERF_EFORMAT;
		}
		s->nr_callchain = n;
		s->callchain = c.p;
		c.p += 8 * n;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t n;

		NEED(4, "RAW");
		n = u32(&c);
		NEED(n, "RAW data");
		c.p += n;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t n;

		if (a->branch_sample_type & MT_PERF_SAMPLE_BRANCH_COUNTERS) {
			mt_perf__why(why, whylen, "branch stacks with counters are not supported");
			return MT_PERF_EFORMAT;
		}
		NEED(8, "BRANCH_STACK");
		n = u64(&c);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "BRANCH_STACK hw_idx");
			c.p += 8;
		}
		if (n > (size_t)(c.end - c.p) / 24) {
			mt_perf__why(why, whylen, "BRANCH_STACK of %llu entries overruns the record "
				     "(size %u)", (unsigned long long)n, rec->size);
			return MT_PERF_EFORMAT;
		}
		c.p += 24 * n;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_mask = a->sample_regs_user;
		if (__builtin_popcountll(s->regs_mask) > MT_PERF_MAX_REGS) {
			mt_perf__why(why, whylen, "too many user registers");
			return MT_PERF_EFORMAT;
		}
		s->regs_offset = (size_t)(c.p - c.base) + 8;
		err = read_regs(&c, a->sample_regs_user, &s->regs_abi, &s->nr_regs, s->regs,
				"REGS_USER", why, whylen);
		if (err)
			return err;
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size;

		NEED(8, "STACK_USER size");
		size = u64(&c);
		if (size > (size_t)(c.end - c.p)) {
			mt_perf__why(why, whylen, "stack size %llu at byte %zu overruns the record "
				     "(size %u)", (unsigned long long)size,
				     (size_t)(c.p - c.base) - 8, rec->size);
			return MT_PERF_EFORMAT;
		}
		if (size) {
			s->stack_size = size;
			s->stack = c.p;
			s->stack_offset = (size_t)(c.p - c.base);
			c.p += size;
			NEED(8, "STACK_USER dyn_size");
			s->stack_dyn_size = u64(&c);
			if (s->stack_dyn_size > size) {
				mt_perf__why(why, whylen, "stack dyn_size %llu exceeds its size %llu",
					     (unsigned long long)s->stack_dyn_size,
					     (unsigned long long)size);
				return MT_PERF_EFORMAT;
			}
		}
	}
	/* The rest is only bounds-checked. */
	{
		static const struct { uint64_t bit; const char *name; } tail1[] = {
			{ PERF_SAMPLE_WEIGHT_TYPE, "WEIGHT" },
			{ PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
			{ PERF_SAMPLE_TRANSACTION, "TRANSACTION" },
		}, tail2[] = {
			{ PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" },
			{ PERF_SAMPLE_CGROUP, "CGROUP" },
			{ PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" },
			{ PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE" },
		};
		size_t i;

		for (i = 0; i < sizeof(tail1) / sizeof(tail1[0]); i++)
			if (t & tail1[i].bit) {
				NEED(8, tail1[i].name);
				c.p += 8;
			}
		if (t & PERF_SAMPLE_REGS_INTR) {
			err = read_regs(&c, a->sample_regs_intr, &abi, &nr, NULL, "REGS_INTR",
					why, whylen);
			if (err)
				return err;
		}
		for (i = 0; i < sizeof(tail2) / sizeof(tail2[0]); i++)
			if (t & tail2[i].bit) {
				NEED(8, tail2[i].name);
				c.p += 8;
			}
	}
	if (t & PERF_SAMPLE_AUX) {
		uint64_t n;

		NEED(8, "AUX");
		n = u64(&c);
		if (n > (size_t)(c.end - c.p)) {
			mt_perf__why(why, whylen, "AUX size %llu overruns the record (size %u)",
				     (unsigned long long)n, rec->size);
			return MT_PERF_EFORMAT;
		}
	}
	return 0;
}

int mt_perf_sample_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
			 struct mt_perf_sample *s)
{
	return mt_perf__sample_parse(r, rec, s, NULL, 0);
}

/* ---- other records ------------------------------------------------------ */

/* Split a record into its body and sample_id_all trailer.
 * @return : 0 with *body_end set, or MT_PERF_EFORMAT. */
static int trailer(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		   size_t body_min, struct mt_perf_sample_id *sid, const uint8_t **body_end,
		   char *why, size_t whylen)
{
	const struct mt_perf_evsel *e = mt_perf__other_evsel(r, rec);
	struct cur c;
	uint64_t t;
	size_t ts;

	memset(sid, 0, sizeof(*sid));
	*body_end = (const uint8_t *)rec + rec->size;
	if (rec->size < sizeof(*rec) + body_min) {
		mt_perf__why(why, whylen, "size %u is too small for its %zu bytes of fields",
			     rec->size, body_min);
		return MT_PERF_EFORMAT;
	}
	if (!e || !e->attr.sample_id_all)
		return 0;
	t = e->attr.sample_type;
	ts = mt_perf__trailer_size(t);
	if (rec->size < sizeof(*rec) + body_min + ts) {
		mt_perf__why(why, whylen, "size %u is too small for %zu bytes of fields and a "
			     "%zu-byte sample_id trailer", rec->size, body_min, ts);
		return MT_PERF_EFORMAT;
	}
	c.base = (const uint8_t *)rec;
	c.end = c.base + rec->size;
	c.p = c.end - ts;
	*body_end = c.p;
	sid->present = 1;
	if (t & PERF_SAMPLE_TID) {
		sid->pid = u32(&c);
		sid->tid = u32(&c);
	}
	if (t & PERF_SAMPLE_TIME)
		sid->time = u64(&c);
	if (t & PERF_SAMPLE_ID)
		sid->id = u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		sid->stream_id = u64(&c);
	if (t & PERF_SAMPLE_CPU) {
		sid->cpu = u32(&c);
		c.p += 4;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		sid->id = u64(&c);
	return 0;
}

/* A NUL-terminated string in [p, end). */
static const char *string(const uint8_t *p, const uint8_t *end, const char *what,
			  char *why, size_t whylen)
{
	if (p >= end || !memchr(p, 0, (size_t)(end - p))) {
		mt_perf__why(why, whylen, "%s is not NUL-terminated inside the record", what);
		return NULL;
	}
	return (const char *)p;
}

static int mmap_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		      struct mt_perf_mmap *m, char *why, size_t whylen)
{
	int two = rec->type == PERF_RECORD_MMAP2;
	size_t fixed = two ? 56 : 32;
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)(rec + 1), NULL, NULL };
	const uint8_t *body_end;
	int err;

	memset(m, 0, sizeof(*m));
	err = trailer(r, rec, fixed, &m->sid, &body_end, why, whylen);
	if (err)
		return err;
	c.end = body_end;
	m->pid = u32(&c);
	m->tid = u32(&c);
	m->start = u64(&c);
	m->len = u64(&c);
	m->pgoff = u64(&c);
	if (two) {
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			uint8_t n = c.p[0];

			if (n > sizeof(m->build_id)) {
				mt_perf__why(why, whylen, "build-id size %u exceeds %zu", n,
					     sizeof(m->build_id));
				return MT_PERF_EFORMAT;
			}
			m->build_id_size = n;
			memcpy(m->build_id, c.p + 4, n);
			c.p += 24;
		} else {
			m->maj = u32(&c);
			m->min = u32(&c);
			m->ino = u64(&c);
			m->ino_generation = u64(&c);
		}
		m->prot = u32(&c);
		m->flags = u32(&c);
		m->executable = !!(m->prot & PROT_EXEC);
	} else {
		m->executable = !(rec->misc & PERF_RECORD_MISC_MMAP_DATA);
	}
	m->filename = string(c.p, body_end, "filename", why, whylen);
	return m->filename ? 0 : MT_PERF_EFORMAT;
}

int mt_perf_mmap_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		       struct mt_perf_mmap *m)
{
	if (rec->type != PERF_RECORD_MMAP && rec->type != PERF_RECORD_MMAP2)
		return MT_PERF_EFORMAT;
	return mmap_parse(r, rec, m, NULL, 0);
}

static int comm_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		      struct mt_perf_comm *cm, char *why, size_t whylen)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)(rec + 1), NULL, NULL };
	const uint8_t *body_end;
	int err;

	memset(cm, 0, sizeof(*cm));
	err = trailer(r, rec, 8, &cm->sid, &body_end, why, whylen);
	if (err)
		return err;
	cm->pid = u32(&c);
	cm->tid = u32(&c);
	cm->exec = !!(rec->misc & PERF_RECORD_MISC_COMM_EXEC);
	cm->comm = string(c.p, body_end, "comm", why, whylen);
	return cm->comm ? 0 : MT_PERF_EFORMAT;
}

int mt_perf_comm_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		       struct mt_perf_comm *cm)
{
	if (rec->type != PERF_RECORD_COMM)
		return MT_PERF_EFORMAT;
	return comm_parse(r, rec, cm, NULL, 0);
}

static int task_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		      struct mt_perf_task *tk, char *why, size_t whylen)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)(rec + 1), NULL, NULL };
	const uint8_t *body_end;
	int err;

	memset(tk, 0, sizeof(*tk));
	err = trailer(r, rec, 24, &tk->sid, &body_end, why, whylen);
	if (err)
		return err;
	tk->pid = u32(&c);
	tk->ppid = u32(&c);
	tk->tid = u32(&c);
	tk->ptid = u32(&c);
	tk->time = u64(&c);
	return 0;
}

int mt_perf_task_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		       struct mt_perf_task *tk)
{
	if (rec->type != PERF_RECORD_FORK && rec->type != PERF_RECORD_EXIT)
		return MT_PERF_EFORMAT;
	return task_parse(r, rec, tk, NULL, 0);
}

static int lost_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		      struct mt_perf_lost *l, char *why, size_t whylen)
{
	struct cur c = { (const uint8_t *)rec, (const uint8_t *)(rec + 1), NULL, NULL };
	int two = rec->type == PERF_RECORD_LOST;
	const uint8_t *body_end;
	int err;

	memset(l, 0, sizeof(*l));
	err = trailer(r, rec, two ? 16 : 8, &l->sid, &body_end, why, whylen);
	if (err)
		return err;
	if (two)
		l->id = u64(&c);
	l->lost = u64(&c);
	return 0;
}

int mt_perf_lost_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
		       struct mt_perf_lost *l)
{
	if (rec->type != PERF_RECORD_LOST && rec->type != PERF_RECORD_LOST_SAMPLES)
		return MT_PERF_EFORMAT;
	return lost_parse(r, rec, l, NULL, 0);
}

int mt_perf__check_record(const struct mt_perf_reader *r, const struct perf_event_header *rec,
			  const struct mt_perf_evsel **evsel, char *why, size_t whylen)
{
	union {
		struct mt_perf_sample s;
		struct mt_perf_mmap m;
		struct mt_perf_comm c;
		struct mt_perf_task t;
		struct mt_perf_lost l;
	} u;
	int err = 0;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		err = mt_perf__sample_parse(r, rec, &u.s, why, whylen);
		*evsel = u.s.evsel;
		return err;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		err = mmap_parse(r, rec, &u.m, why, whylen);
		break;
	case PERF_RECORD_COMM:
		err = comm_parse(r, rec, &u.c, why, whylen);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		err = task_parse(r, rec, &u.t, why, whylen);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		err = lost_parse(r, rec, &u.l, why, whylen);
		break;
	}
	*evsel = rec->type < MT_PERF_RECORD_HEADER_ATTR ? mt_perf__other_evsel(r, rec) : NULL;
	return err;
}
