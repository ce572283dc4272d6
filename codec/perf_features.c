/* perf.data feature sections: EVENT_DESC names and BUILD_ID records
 * (codec/perf_stream.h). */
#include <stdlib.h>
#include <string.h>

#include "codec/perf_internal.h"
#include "common/buf.h"

#define MISC_BUILD_ID_SIZE (1 << 15)	/* the id's length is in the record */
#define SECTION_MAX ((uint64_t)64 << 20)

struct event_name {
	uint64_t id;		/* UINT64_MAX: an event described without ids */
	char *name;
};

struct mt_perf_features {
	struct event_name *names;
	size_t nr_names;
	uint8_t *build_id_section;	/* the records below point into it */
	struct mt_perf_build_id *build_ids;
	size_t nr_build_ids;
};

int mt_perf_build_id_parse(const void *rec, size_t size, struct mt_perf_build_id *b)
{
	/* header (8), pid (4), build_id[24] (20 + size byte + padding), filename */
	const uint8_t *p = rec;
	if (size < 8 + 4 + 24 + 1)
		return MT_PERF_EFORMAT;
	uint16_t misc = mt_ld16(p + 4);	/* header: type, misc, size */
	const char *name = (const char *)p + 36;
	if (!memchr(name, '\0', size - 36))
		return MT_PERF_EFORMAT;
	b->pid = mt_ld32(p + 8);
	b->id = p + 12;
	b->id_len = (misc & MISC_BUILD_ID_SIZE) ? p[8 + 4 + 20] : 20;
	if (b->id_len > 20)
		b->id_len = 20;
	b->filename = name;
	return 0;
}

int mt_perf_features_offset(const uint8_t hdr[MT_PERF_FILE_HEADER_SIZE], uint64_t *off)
{
	if (mt_ld64(hdr) != MT_PERF_MAGIC || mt_ld64(hdr + 8) < MT_PERF_FILE_HEADER_SIZE)
		return MT_PERF_EMAGIC;	/* no perf stream, or a pipe header */
	uint64_t data_off = mt_ld64(hdr + 40), data_size = mt_ld64(hdr + 48);
	if (data_off + data_size < data_off)
		return MT_PERF_EMAGIC;
	*off = data_off + data_size;
	return 0;
}

/* The section of feature bit, read whole.  @return : 0 with *buf (malloc'd)
 * and *n set, 1 when absent or unreadable, or MT_PERF_ENOMEM. */
static int read_section(const uint8_t *hdr, uint64_t feat_off, int bit, mt_perf_pread_fn pread,
			void *ctx, uint8_t **buf, uint64_t *n)
{
	const uint8_t *bits = hdr + 72;
	if (!(bits[bit / 8] & (1u << (bit % 8))))
		return 1;
	int idx = 0;
	for (int b = 0; b < bit; b++)
		idx += (bits[b / 8] >> (b % 8)) & 1;
	uint64_t sec[2];	/* offset, size */
	if (pread(ctx, sec, sizeof(sec), feat_off + 16 * (uint64_t)idx) != 0 ||
	    sec[1] > SECTION_MAX)
		return 1;
	if (!(*buf = malloc(sec[1] ? sec[1] : 1)))
		return MT_PERF_ENOMEM;
	if (pread(ctx, *buf, sec[1], sec[0]) != 0) {
		free(*buf);
		*buf = NULL;
		return 1;
	}
	*n = sec[1];
	return 0;
}

static int add_name(struct mt_perf_features *f, uint64_t id, const char *name)
{
	struct event_name *v = realloc(f->names, (f->nr_names + 1) * sizeof(*v));
	if (!v)
		return MT_PERF_ENOMEM;
	f->names = v;
	if (!(v[f->nr_names].name = strdup(name)))
		return MT_PERF_ENOMEM;
	v[f->nr_names++].id = id;
	return 0;
}

int mt_perf_event_desc_each(const uint8_t *p, size_t n, mt_perf_event_desc_fn fn, void *ctx)
{
	if (n < 8)
		return 0;
	uint32_t nr = mt_ld32(p), asz = mt_ld32(p + 4);
	uint64_t off = 8;
	for (uint32_t i = 0; i < nr; i++) {
		if (off + asz + 8 > n)
			return 0;
		off += asz;
		uint32_t nids = mt_ld32(p + off), len = mt_ld32(p + off + 4);
		off += 8;
		if (len > n - off || (uint64_t)nids * 8 > n - off - len)
			return 0;
		const char *name = (const char *)p + off;
		off += len;
		int err = fn(ctx, i, name, len, p + off, nids);
		if (err)
			return err;
		off += 8 * (uint64_t)nids;
	}
	return 0;
}

static int on_event_desc(void *ctx, uint32_t index, const char *name, size_t len,
			 const uint8_t *ids, uint32_t nr_ids)
{
	struct mt_perf_features *f = ctx;
	(void)index;
	if (!memchr(name, '\0', len))
		return 1;	/* stop: malformed */
	for (uint32_t k = 0; k < nr_ids; k++)
		if (add_name(f, mt_ld64(ids + 8 * k), name) != 0)
			return MT_PERF_ENOMEM;
	if (nr_ids == 0 && add_name(f, UINT64_MAX, name) != 0)
		return MT_PERF_ENOMEM;
	return 0;
}

static int parse_build_ids(struct mt_perf_features *f, const uint8_t *p, uint64_t n)
{
	for (uint64_t off = 0; off + 8 <= n;) {
		uint16_t size = mt_ld16(p + off + 6);
		if (size < 8 || off + size > n)
			break;
		struct mt_perf_build_id b;
		if (mt_perf_build_id_parse(p + off, size, &b) == 0) {
			struct mt_perf_build_id *v = realloc(f->build_ids,
							     (f->nr_build_ids + 1) * sizeof(*v));
			if (!v)
				return MT_PERF_ENOMEM;
			f->build_ids = v;
			v[f->nr_build_ids++] = b;
		}
		off += size;
	}
	return 0;
}

int mt_perf_features_read(struct mt_perf_features **out,
			  const uint8_t hdr[MT_PERF_FILE_HEADER_SIZE],
			  mt_perf_pread_fn pread, void *ctx)
{
	uint64_t feat_off, n;
	uint8_t *buf = NULL;
	*out = NULL;
	int err = mt_perf_features_offset(hdr, &feat_off);
	if (err)
		return err;
	struct mt_perf_features *f = calloc(1, sizeof(*f));
	if (!f)
		return MT_PERF_ENOMEM;
	err = read_section(hdr, feat_off, MT_PERF_FEAT_EVENT_DESC, pread, ctx, &buf, &n);
	if (err == 0) {
		err = mt_perf_event_desc_each(buf, n, on_event_desc, f);
		free(buf);
	}
	if (err < 0)
		goto fail;
	err = read_section(hdr, feat_off, MT_PERF_FEAT_BUILD_ID, pread, ctx, &f->build_id_section, &n);
	if (err == 0)
		err = parse_build_ids(f, f->build_id_section, n);
	if (err < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	mt_perf_features_free(f);
	return err;
}

void mt_perf_features_free(struct mt_perf_features *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_names; i++)
		free(f->names[i].name);
	free(f->names);
	free(f->build_id_section);
	free(f->build_ids);
	free(f);
}

const char *mt_perf_features_event_name(const struct mt_perf_features *f,
					const struct mt_perf_evsel *e, size_t nr_evsels)
{
	if (!f)
		return "";
	for (size_t i = 0; i < f->nr_names; i++)
		for (size_t k = 0; k < e->nr_ids; k++)
			if (f->names[i].id == e->ids[k])
				return f->names[i].name;
	if (f->nr_names && nr_evsels == 1)
		return f->names[0].name;
	return "";
}

size_t mt_perf_features_nr_build_ids(const struct mt_perf_features *f)
{
	return f ? f->nr_build_ids : 0;
}

const struct mt_perf_build_id *mt_perf_features_build_id(const struct mt_perf_features *f,
							 size_t i)
{
	return &f->build_ids[i];
}
