/* Internals shared by the perf stream reader and its record parsers.  Not
 * part of the library's API: only codec/perf_*.c include this. */
#ifndef MT_PERF_INTERNAL_H
#define MT_PERF_INTERNAL_H

#include "codec/perf_stream.h"

#include <stdarg.h>

/* EVENT_UPDATE types and the feature number of EVENT_DESC (perf's header.h). */
#define MT_PERF_EVENT_UPDATE_NAME 2
#define MT_PERF_FEAT_BUILD_ID 2
#define MT_PERF_FEAT_EVENT_DESC 12
/* The last feature perf defines (PMU_CAPS, perf 5.12 to 6.x); bit 0 is
 * reserved. */
#define MT_PERF_FEAT_LAST 31

/* The EVENT_DESC feature: u32 nr, u32 attr_size, then per event the attr,
 * u32 nr_ids, a string (u32 len, len bytes, NUL-padded), nr_ids u64 ids.
 * fn is called for each event whose bytes lie within the section, with its
 * index, name (len bytes, not necessarily terminated) and ids (nr_ids
 * unaligned u64); the walk stops at the first event that does not fit.
 * @return : 0, or the first nonzero value of fn (the walk stops there). */
typedef int (*mt_perf_event_desc_fn)(void *ctx, uint32_t index, const char *name, size_t len,
				     const uint8_t *ids, uint32_t nr_ids);
int mt_perf_event_desc_each(const uint8_t *p, size_t n, mt_perf_event_desc_fn fn, void *ctx);

#define MT_PERF_MAGIC 0x32454c4946524550ULL	/* "PERFILE2" little-endian */

struct mt_perf_evsel_priv {
	struct mt_perf_evsel pub;
	uint64_t *ids;
	size_t cap_ids;
	char *name;
};

/* Where a sample's or trailer's id sits, derived from the attrs. */
struct mt_perf_id_map {
	uint64_t *keys;		/* open addressing; 0 keys are kept aside */
	struct mt_perf_evsel_priv **vals;
	size_t cap, count;
	struct mt_perf_evsel_priv *zero;	/* owner of id 0, if any */
};

/* Size of the fixed sample_id_all trailer for a sample_type. */
size_t mt_perf__trailer_size(uint64_t sample_type);

/* The evsel for a sample / a non-sample record, or NULL.  For samples,
 * *code (ENOATTR or EFORMAT) and why (may be NULL) say why there is none. */
const struct mt_perf_evsel *mt_perf__sample_evsel(const struct mt_perf_reader *r,
						   const struct perf_event_header *rec,
						   int *code, char *why, size_t whylen);
const struct mt_perf_evsel *mt_perf__other_evsel(const struct mt_perf_reader *r,
						  const struct perf_event_header *rec);

/* Lookup of an id among the reader's attrs; NULL when none owns it. */
const struct mt_perf_evsel *mt_perf__evsel_by_id(const struct mt_perf_reader *r,
						  uint64_t id);
size_t mt_perf__nr_evsels(const struct mt_perf_reader *r);

/* Parsers with a reason for the failure written into why. */
int mt_perf__sample_parse(const struct mt_perf_reader *r, const struct perf_event_header *rec,
			  struct mt_perf_sample *s, char *why, size_t whylen);
int mt_perf__check_record(const struct mt_perf_reader *r, const struct perf_event_header *rec,
			  const struct mt_perf_evsel **evsel, char *why, size_t whylen);

__attribute__((format(printf, 3, 4)))
void mt_perf__why(char *why, size_t whylen, const char *fmt, ...);

/* The records inside COMPRESSED records (perf_unpack.c): one zstd stream
 * across all of them.  feed appends what a payload decompresses to (an
 * error breaks the stream: later feeds fail too); next gives the next
 * complete record, 8-aligned and valid until the next call, or NULL when
 * fewer bytes than a record are left (*bad: bytes that cannot be cut into
 * records, dropped); drop_rest drops an incomplete record's bytes and
 * returns their count; break stops the stream (a payload that could not be
 * fed: what follows would decompress wrongly), saying so at the end of why. */
struct mt_perf_unpack;
int mt_perf__unpack_new(struct mt_perf_unpack **out);
void mt_perf__unpack_free(struct mt_perf_unpack *u);
int mt_perf__unpack_feed(struct mt_perf_unpack *u, const void *data, size_t len, char *why,
			 size_t whylen);
const struct perf_event_header *mt_perf__unpack_next(struct mt_perf_unpack *u, int *bad);
size_t mt_perf__unpack_drop_rest(struct mt_perf_unpack *u);
void mt_perf__unpack_break(struct mt_perf_unpack *u, char *why, size_t whylen);

#endif
