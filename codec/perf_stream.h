/* Reading and writing perf's formats: pipe-mode streams and perf.data files.
 *
 * A reader turns its input into a sequence of items that, concatenated, are
 * the input's bytes exactly: opaque blobs (the pipe header; a file's header,
 * attr section and everything else before the data section; the bytes after
 * it) and records.  Writing every item's bytes back therefore reproduces the
 * input bit for bit, whatever its format.  Memory stays constant: blobs come
 * in chunks of at most MT_PERF_BLOB_CHUNK bytes and records one at a time.
 *
 * Attrs are collected as they appear (HEADER_ATTR records, or a file's attr
 * section) together with their sample ids and names (EVENT_UPDATE NAME,
 * HEADER_FEATURE EVENT_DESC), so that samples can be parsed.
 *
 * Errors: functions return 0 (or a positive count) on success and a negative
 * MT_PERF_E* code on failure; mt_perf_strerror() names it, and
 * mt_perf_reader_error() gives the reader's full message with the byte offset
 * and record type, e.g. "record at offset 4120 (SAMPLE): stack size 9000
 * overruns the record (size 512)".  Only programs print.
 */
#ifndef MT_PERF_STREAM_H
#define MT_PERF_STREAM_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	MT_PERF_OK = 0,
	MT_PERF_EIO = -1,	/* read or write failed; errno kept in the message */
	MT_PERF_ETRUNC = -2,	/* input ends inside a header or record */
	MT_PERF_EMAGIC = -3,	/* not a perf stream or file */
	MT_PERF_EFORMAT = -4,	/* a size or offset is inconsistent */
	MT_PERF_ENOMEM = -5,
	MT_PERF_ENOATTR = -6,	/* a sample whose id matches no attr */
};

/* @return : a static message for an MT_PERF_E* code. */
const char *mt_perf_strerror(int err);

/* Record types of perf's user space (tools/lib/perf/include/perf/event.h);
 * the kernel's own stop below 64. */
enum {
	MT_PERF_RECORD_HEADER_ATTR = 64,
	MT_PERF_RECORD_HEADER_EVENT_TYPE = 65,
	MT_PERF_RECORD_HEADER_TRACING_DATA = 66,
	MT_PERF_RECORD_HEADER_BUILD_ID = 67,
	MT_PERF_RECORD_FINISHED_ROUND = 68,
	MT_PERF_RECORD_ID_INDEX = 69,
	MT_PERF_RECORD_AUXTRACE_INFO = 70,
	MT_PERF_RECORD_AUXTRACE = 71,
	MT_PERF_RECORD_AUXTRACE_ERROR = 72,
	MT_PERF_RECORD_THREAD_MAP = 73,
	MT_PERF_RECORD_CPU_MAP = 74,
	MT_PERF_RECORD_STAT_CONFIG = 75,
	MT_PERF_RECORD_STAT = 76,
	MT_PERF_RECORD_STAT_ROUND = 77,
	MT_PERF_RECORD_EVENT_UPDATE = 78,
	MT_PERF_RECORD_TIME_CONV = 79,
	MT_PERF_RECORD_HEADER_FEATURE = 80,
	MT_PERF_RECORD_COMPRESSED = 81,
	MT_PERF_RECORD_FINISHED_INIT = 82,
	MT_PERF_RECORD_COMPRESSED2 = 83,	/* u64 data_size, data, padding to 8 */
};

/* The sizes of a pipe stream's header and of a perf.data file's. */
#define MT_PERF_PIPE_HEADER_SIZE 16
#define MT_PERF_FILE_HEADER_SIZE 104

#define MT_PERF_BLOB_CHUNK 65536
#define MT_PERF_MAX_REGS 64

/* ---- reading ---------------------------------------------------------- */

/* Functions that read bytes: like read(2), returning the count (0 at end of
 * input) or -1 with errno set.  Lets a reader sit on a decoder (.mtz). */
typedef ssize_t (*mt_perf_read_fn)(void *ctx, void *buf, size_t len);

/* Functions that lend bytes: *data points at the next count bytes, which
 * stay valid until the next call; 0 at end of input, or -1 with errno set.
 * The reader then copies nothing but records cut by a chunk's end. */
typedef ssize_t (*mt_perf_chunk_fn)(void *ctx, const void **data);

struct mt_perf_reader;

enum mt_perf_format { MT_PERF_PIPE, MT_PERF_FILE };

enum mt_perf_item_kind {
	MT_PERF_ITEM_BLOB,	/* bytes that are not a record, passed through */
	MT_PERF_ITEM_RECORD,	/* one perf record, header included */
};

struct mt_perf_item {
	enum mt_perf_item_kind kind;
	const void *data;	/* owned by the reader, valid until the next call */
	size_t size;		/* bytes at data (a record's header.size) */
	uint64_t offset;	/* byte offset of data in the input */
	/* Records only: data as a header (8-byte aligned). */
	const struct perf_event_header *header;
	/* Records only: for samples the matching attr; for other kernel records
	 * the attr their sample_id trailer names (or the only attr); else NULL. */
	const struct mt_perf_evsel *evsel;
	/* Taken out of a COMPRESSED record (mt_perf_reader_unpack): offset is
	 * that record's, and the bytes are not the input's. */
	int unpacked;
};

/* Open path ("-" for stdin) for reading; the format is detected from the
 * magic (PERFILE2, with the header size telling pipe from file).  A file's
 * attrs (and, when seekable, its EVENT_DESC names) are read here: by pread
 * when the input is a regular file, else from the bytes before the data
 * section (kept in memory, at most 16 MiB).
 * @return : 0, or a negative code (with *out NULL; the message is then in
 *           mt_perf_reader_error(NULL), per thread, and errno is kept). */
int mt_perf_reader_open(struct mt_perf_reader **out, const char *path);

/* Same on an open fd; the reader does not close it.  name labels messages. */
int mt_perf_reader_fdopen(struct mt_perf_reader **out, int fd, const char *name);

/* Same on a read function; ctx must stay valid while the reader lives. */
int mt_perf_reader_new(struct mt_perf_reader **out, mt_perf_read_fn read,
		       void *ctx, const char *name);

/* Same on a chunk function (a decoder's output buffers, read in place). */
int mt_perf_reader_new_chunked(struct mt_perf_reader **out, mt_perf_chunk_fn chunk,
			       void *ctx, const char *name);

/* Accepts NULL. */
void mt_perf_reader_free(struct mt_perf_reader *r);

/* From now on, a COMPRESSED or COMPRESSED2 record (perf record -z) is not
 * returned: the records it holds are, in order, each checked as any record
 * is, with item->unpacked set.  Items then no longer concatenate to the
 * input.  An error about a COMPRESSED record's payload (it does not
 * decompress) comes with that record as the item; one about what it holds
 * as a whole (bytes that cannot be cut into records, the input ending
 * inside one of them) fills no item: there is no record to pass on.
 * @return : 0, or MT_PERF_ENOMEM. */
int mt_perf_reader_unpack(struct mt_perf_reader *r);

enum mt_perf_format mt_perf_reader_format(const struct mt_perf_reader *r);

/* The next item.  Records are checked before they are returned: size at
 * least the header and within the input (a file's data section); a
 * HEADER_ATTR's attr size; a SAMPLE's fields and attr (mt_perf_sample_parse);
 * the fields, strings and trailer of MMAP, MMAP2, COMM, FORK, EXIT, LOST and
 * LOST_SAMPLES (their parsers below).  So callers may parse any returned
 * record of those types without checking again.
 * @return : 1 with *item filled, 0 at the end of input, or a negative code
 *           (the message is in mt_perf_reader_error). */
int mt_perf_reader_next(struct mt_perf_reader *r, struct mt_perf_item *item);

/* Errors that break the framing (ETRUNC, EIO, a bad record size, a bad file
 * header) are fatal: next returns them again.  Errors inside a record whose
 * size is sound (EFORMAT, ENOATTR) are not: *item is still filled with the
 * record (for callers that pass records through) and the following call
 * goes on after it.  mt_perf_reader_fatal() tells the two apart.
 * Messages name the byte offset and record type but not the input (the
 * caller names it), e.g. "record at offset 4120 (SAMPLE): ...".
 * @return : the last error's full message, "" when there was none; with r
 *           NULL, the message of this thread's last failed open. */
const char *mt_perf_reader_error(const struct mt_perf_reader *r);

/* Something odd in the input's header that does not stop reading (feature
 * bits of a perf.data file that this build does not know), for the caller
 * to print once after opening; no input named, as for errors.
 * @return : the message, "" when there is none. */
const char *mt_perf_reader_warning(const struct mt_perf_reader *r);

/* @return : the fatal error code (negative) once the reader cannot go on,
 *           else 0: a tolerant caller may count a record-level error and
 *           call next again. */
int mt_perf_reader_fatal(const struct mt_perf_reader *r);

/* After a fatal error in the records (a size that breaks the framing, the
 * input ending inside a record), pass the rest of the input on unread:
 * next returns it as blobs, from the offset of the record at fault to the
 * end, so that the items still concatenate to the input (mt-encode keeps a
 * damaged recording whole).  @return : 0, or the fatal code when the error
 * was of another kind (reading failed, out of memory, a header, the
 * records of a COMPRESSED one), which stays. */
int mt_perf_reader_salvage(struct mt_perf_reader *r);

/* A regular file is read through a read-only mapping of the whole file (not
 * copied by read(2)); the file must not be truncated meanwhile (SIGBUS).
 * @return : that mapping and its length in *len, or NULL when the input is
 *           read otherwise.  Callers may prefetch it and drop the pages
 *           behind the records read (madvise), nothing more. */
const void *mt_perf_reader_mapping(const struct mt_perf_reader *r, size_t *len);

/* ---- perf's generic event names ------------------------------------- */

/* The type and config of a generic event (cpu-clock, cycles, ...).
 * @return : 1, or 0 when name is not one. */
int mt_perf_event_by_name(const char *name, uint32_t *type, uint64_t *config);

/* @return : the generic name of type and config, or NULL. */
const char *mt_perf_event_name(uint32_t type, uint64_t config);

/* @return : the i-th generic name, NULL past the last (for messages). */
const char *mt_perf_event_nth(size_t i);

/* ---- attrs ------------------------------------------------------------ */

struct mt_perf_evsel {
	struct perf_event_attr attr;	/* normalized to this header's size */
	const uint64_t *ids;		/* sample ids that map to this attr */
	size_t nr_ids;
	const char *name;		/* "" when the stream names none */
	int index;			/* order of appearance, from 0 */
};

/* The attrs seen so far, in order of appearance; more may come with each
 * call to next (HEADER_ATTR), names too (EVENT_UPDATE, EVENT_DESC).  Each
 * evsel stays at the same address while the reader lives.
 * @return : the count. */
size_t mt_perf_reader_nr_evsels(const struct mt_perf_reader *r);
const struct mt_perf_evsel *mt_perf_reader_evsel(const struct mt_perf_reader *r, size_t i);

/* ---- samples and other records ----------------------------------------- */

/* A parsed PERF_RECORD_SAMPLE.  Pointers point into the record's bytes and
 * live as long as they do.  Fields absent from sample_type are 0. */
struct mt_perf_sample {
	const struct mt_perf_evsel *evsel;
	uint64_t sample_type;
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	/* CALLCHAIN: nr u64 entries (read them with memcpy), kernel and user
	 * parts each after a PERF_CONTEXT_* marker; NULL when absent. */
	uint64_t nr_callchain;
	const void *callchain;
	/* REGS_USER: abi 0 means no registers were taken (kernel thread). */
	uint64_t regs_abi;
	uint64_t regs_mask;		/* attr.sample_regs_user */
	unsigned nr_regs;		/* bits set in the mask (when abi != 0) */
	size_t regs_offset;		/* byte offset of regs within the record */
	/* STACK_USER: size bytes copied, of which dyn_size are valid. */
	uint64_t stack_size;
	uint64_t stack_dyn_size;
	const uint8_t *stack;		/* NULL when stack_size is 0 */
	size_t stack_offset;		/* byte offset of stack within the record */
	/* Last, so that a copy may end after the nr_regs used (mt-unwind's
	 * time-ordering queue: ~17 of 64). */
	uint64_t regs[MT_PERF_MAX_REGS];/* in mask bit order */
};

/* Parse a SAMPLE record using the reader's attrs (identified by IDENTIFIER,
 * ID, or the only attr).  Every field is bounds-checked against the record.
 * @return : 0, MT_PERF_ENOATTR, or MT_PERF_EFORMAT (overrun). */
int mt_perf_sample_parse(const struct mt_perf_reader *r,
			 const struct perf_event_header *rec,
			 struct mt_perf_sample *s);

/* The sample_id_all trailer of a non-sample record (pid/tid/time/id/cpu). */
struct mt_perf_sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id;
	int present;			/* 0: the attr has no sample_id_all */
};

struct mt_perf_mmap {			/* MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min, prot, flags;
	uint64_t ino, ino_generation;
	uint8_t build_id[20];
	uint8_t build_id_size;		/* 0 unless the MMAP2 build-id form */
	int executable;			/* MMAP: !(misc & DATA); MMAP2: prot & PROT_EXEC */
	const char *filename;		/* NUL-terminated, inside the record */
	struct mt_perf_sample_id sid;
};

struct mt_perf_comm {
	uint32_t pid, tid;
	int exec;			/* misc & PERF_RECORD_MISC_COMM_EXEC */
	const char *comm;
	struct mt_perf_sample_id sid;
};

struct mt_perf_task {			/* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
	struct mt_perf_sample_id sid;
};

struct mt_perf_lost {			/* LOST (id, lost) and LOST_SAMPLES (lost) */
	uint64_t id, lost;
	struct mt_perf_sample_id sid;
};

/* Each: @return 0, or MT_PERF_EFORMAT when the record is too short or a
 * string is not terminated inside it. */
int mt_perf_mmap_parse(const struct mt_perf_reader *r,
		       const struct perf_event_header *rec, struct mt_perf_mmap *m);
int mt_perf_comm_parse(const struct mt_perf_reader *r,
		       const struct perf_event_header *rec, struct mt_perf_comm *c);
int mt_perf_task_parse(const struct mt_perf_reader *r,
		       const struct perf_event_header *rec, struct mt_perf_task *t);
int mt_perf_lost_parse(const struct mt_perf_reader *r,
		       const struct perf_event_header *rec, struct mt_perf_lost *l);

/* @return : "SAMPLE", "MMAP2", "HEADER_ATTR", ... or "type 77". Not
 * reentrant for unknown types. */
const char *mt_perf_record_name(uint32_t type);

/* ---- perf.data feature sections --------------------------------------- */

/* A HEADER_BUILD_ID record (in a pipe stream, or one of those the BUILD_ID
 * feature section of a perf.data file holds): the build-id of filename as
 * it was mapped by pid.  Pointers point into the record. */
struct mt_perf_build_id {
	uint32_t pid;
	const uint8_t *id;
	size_t id_len;			/* at most 20 */
	const char *filename;		/* NUL-terminated, inside the record */
};

/* Parse size bytes at rec (8-aligned or not) as a HEADER_BUILD_ID record.
 * @return : 0, or MT_PERF_EFORMAT when it is too short or its file name is
 *           not terminated inside it. */
int mt_perf_build_id_parse(const void *rec, size_t size, struct mt_perf_build_id *b);

/* What a perf.data file keeps after its data: its events' names
 * (EVENT_DESC) and the build-ids of the files it mapped (BUILD_ID).  A
 * reader on a seekable file reads the names itself; these are for a caller
 * that needs the build-ids, or that reads the file through a decoder (an
 * .mtz of a perf.data file), whose reader cannot seek. */
struct mt_perf_features;

/* Reads like pread(2) from the perf.data file: exactly n bytes at off.
 * @return : 0, or -1 when they cannot be had. */
typedef int (*mt_perf_pread_fn)(void *ctx, void *buf, uint64_t n, uint64_t off);

/* Where the feature sections of the perf.data file whose first
 * MT_PERF_FILE_HEADER_SIZE bytes are hdr begin (the end of its data).
 * @return : 0 with *off set, or MT_PERF_EMAGIC when hdr is not a perf.data
 *           file's header (a pipe stream's, or none). */
int mt_perf_features_offset(const uint8_t hdr[MT_PERF_FILE_HEADER_SIZE], uint64_t *off);

/* Read the EVENT_DESC and BUILD_ID sections of the perf.data file whose
 * header is hdr, through pread (ctx passed on; used only during the call).
 * A section that is absent, unreadable or malformed is left out: it costs
 * the names or build-ids, nothing else.
 * @return : 0 with *out set (free with mt_perf_features_free), MT_PERF_EMAGIC
 *           when hdr is not a perf.data file's header, or MT_PERF_ENOMEM. */
int mt_perf_features_read(struct mt_perf_features **out,
			  const uint8_t hdr[MT_PERF_FILE_HEADER_SIZE],
			  mt_perf_pread_fn pread, void *ctx);

/* Accepts NULL. */
void mt_perf_features_free(struct mt_perf_features *f);

/* The name EVENT_DESC gives the event of e (matched by sample id, or the
 * only one when the file has one event), or "" when it gives none.  Valid
 * while f lives. */
const char *mt_perf_features_event_name(const struct mt_perf_features *f,
					const struct mt_perf_evsel *e, size_t nr_evsels);

/* The BUILD_ID section's records, in file order: i from 0 to the count.
 * Each stays valid while f lives. */
size_t mt_perf_features_nr_build_ids(const struct mt_perf_features *f);
const struct mt_perf_build_id *mt_perf_features_build_id(const struct mt_perf_features *f,
							 size_t i);

/* ---- writing ---------------------------------------------------------- */

struct mt_perf_writer;

/* Buffered writes to fd (not closed by the writer); name is kept for the
 * caller (messages do not include it, as with readers).
 * Every writing function below returns 0, MT_PERF_EIO once a write(2)
 * failed (sticky; see mt_perf_writer_error), or MT_PERF_EFORMAT for a record
 * that cannot exist (size below 8 or above 65535, attr size not a multiple
 * of 8 or larger than this header's struct). */
int mt_perf_writer_new(struct mt_perf_writer **out, int fd, const char *name);

/* Flushes; accepts NULL.  @return : 0 or MT_PERF_EIO from the last flush. */
int mt_perf_writer_free(struct mt_perf_writer *w);

/* Raw bytes: an item from a reader, a prepared record. */
int mt_perf_writer_write(struct mt_perf_writer *w, const void *data, size_t size);

/* The 16-byte pipe header (PERFILE2, size 16). */
int mt_perf_writer_pipe_header(struct mt_perf_writer *w);

/* A HEADER_ATTR record: attr (attr->size bytes, 0 meaning
 * PERF_ATTR_SIZE_VER0) followed by ids. */
int mt_perf_writer_attr(struct mt_perf_writer *w, const struct perf_event_attr *attr,
			const uint64_t *ids, size_t nr_ids);

/* An EVENT_UPDATE record of type NAME for the attr that owns id, which is
 * how perf script learns an event's name. */
int mt_perf_writer_event_name(struct mt_perf_writer *w, uint64_t id, const char *name);

/* A record as it is, header->size bytes. */
int mt_perf_writer_record(struct mt_perf_writer *w, const struct perf_event_header *rec);

/* Writes out what is buffered (the writer buffers 256 KiB). */
int mt_perf_writer_flush(struct mt_perf_writer *w);

/* @return : the message of the first failed write ("" when none); errors
 *           are sticky: every later call returns the same code. */
const char *mt_perf_writer_error(const struct mt_perf_writer *w);

/* @return : total bytes accepted so far. */
uint64_t mt_perf_writer_bytes(const struct mt_perf_writer *w);

#endif
