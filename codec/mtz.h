/* .mtz: a perf stream (pipe or perf.data file) compressed losslessly.
 *
 * An .mtz file is a 16-byte header (magic, version, flags) followed by
 * independent frames, each a zstd frame of bounded size with its own header
 * (resync marker, sizes, FNV-1a 64 checksums), and an end marker.  Inside a
 * frame, each sample's user stack dump is delta-coded against the most
 * alike of the same thread's last 16 samples in that frame, aligned by
 * absolute address, and its registers against the thread's last sample;
 * everything else is kept as it is.  Frame 0, the stream's header part
 * alone, is written twice.  Files of version 1 to 3 are read, version 4 is
 * written.  Decoding gives the
 * original bytes back exactly.  The full layout is in docs/formats/mtz.md.
 *
 * A damaged or truncated frame loses that frame only: the reader reports it
 * (offset, frame number, cause) through its warning callback, counts it, and
 * continues at the next frame.  The reader hands a frame's records out in
 * pieces while it rebuilds the rest, after the frame's checksum held; so
 * when an entry then fails to decode (a file written wrongly or on purpose),
 * the records handed out before it stay out and the rest of the frame is
 * reported lost.
 *
 * Errors: functions return 0 (or a count) on success and a negative MTZ_E*
 * code on failure; mtz_strerror() names the code, and the object's _error()
 * function gives the full message.  Only programs print.
 */
#ifndef MTZ_H
#define MTZ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec/perf_stream.h"

enum {
	MTZ_OK = 0,
	MTZ_EIO = -1,		/* read or write failed; errno kept in the message */
	MTZ_ETRUNC = -2,	/* input ends inside a header or frame */
	MTZ_EMAGIC = -3,	/* not an .mtz file */
	MTZ_EVERSION = -4,	/* an .mtz version or flag this build does not know */
	MTZ_EFORMAT = -5,	/* a size, offset or field is out of bounds */
	MTZ_ENOMEM = -6,
	MTZ_EHASH = -7,		/* a checksum or stack hash does not match */
	MTZ_EREF = -8,		/* a delta names a reference the decoder does not hold */
	MTZ_EZSTD = -9,		/* zstd refused to compress or decompress */
	MTZ_EINPUT = -10,	/* the perf input could not be read or parsed */
};

/* @return : a static message for an MTZ_E* code. */
const char *mtz_strerror(int err);

/* The first bytes of every .mtz file. */
#define MTZ_MAGIC "\x89MTZ\r\n\x1a\n"
#define MTZ_MAGIC_SIZE 8

/* @return : 1 when buf (n bytes, n may be less than MTZ_MAGIC_SIZE) starts
 *           with the .mtz magic, else 0.  Eight bytes are enough to tell an
 *           .mtz from a perf stream ("PERFILE2"). */
int mtz_is_mtz(const void *buf, size_t n);

/* Counters kept by writers and readers (fields that do not apply stay 0). */
struct mtz_stats {
	uint64_t bytes_in;		/* bytes consumed (perf stream, or .mtz) */
	uint64_t bytes_out;		/* bytes produced (.mtz, or perf stream) */
	uint64_t records;		/* perf records */
	uint64_t samples;		/* of which SAMPLE records */
	uint64_t coded;			/* samples whose stack/regs were coded */
	uint64_t keyframes;		/* coded samples sent without a reference */
	uint64_t fallbacks;		/* keyframes sent because a delta failed to verify */
	uint64_t stack_bytes;		/* valid stack bytes (dyn_size) of coded samples */
	uint64_t pad_bytes;		/* dump bytes past dyn_size (stale ring bytes) */
	uint64_t pad_matched;		/* of which coded against earlier output */
	uint64_t frames;		/* frames written, or read intact */
	uint64_t frames_beside;		/* writer: frames whose largest section was
					 * compressed on a helper thread */
	uint64_t frames_lost;		/* frames skipped as damaged or truncated,
					 * or missing (reader) */
	uint64_t frames_skipped;	/* reader: intact frames skipped as
					 * repeats or out of order */
	uint64_t bytes_lost;		/* .mtz bytes skipped (reader) */
};

/* ---- writing ---------------------------------------------------------- */

struct mtz_writer;

struct mtz_options {
	int level;		/* zstd level; default 9 */
	int raw;		/* 1: no delta coding, zstd only (kill switch) */
	size_t frame_size;	/* target bytes of perf input per frame */
	int threads;		/* frames encoded in parallel; 0: in the caller's
				 * thread only; default 2 */
	int hash_bits;		/* of each stack hash: 64 (default) or 32 */
};

/* Fills o with the defaults. */
void mtz_options_init(struct mtz_options *o);

/* A writer that sends .mtz to fd (not closed by the writer).  name labels
 * messages; opt may be NULL for the defaults.  Nothing is written before the
 * first item.
 * @return : 0, or MTZ_ENOMEM / MTZ_EFORMAT (bad option) with *out NULL. */
int mtz_writer_new(struct mtz_writer **out, int fd, const char *name,
		   const struct mtz_options *opt);

/* Encodes one item of r (as returned by mt_perf_reader_next).  Samples are
 * parsed with r's attrs; a sample that does not parse is kept as it is.
 * Items that lie in r's mapping of a file (mt_perf_reader_mapping) are read
 * from there, not copied: r must outlive mtz_writer_finish (or _free).
 * @return : 0, or a negative code (message in mtz_writer_error). */
int mtz_writer_item(struct mtz_writer *w, const struct mt_perf_reader *r,
		    const struct mt_perf_item *item);

/* Writes the last frame and the end marker.  Call once, after the last item;
 * without it the file reads as truncated.
 * @return : 0, or a negative code. */
int mtz_writer_finish(struct mtz_writer *w);

void mtz_writer_stats(const struct mtz_writer *w, struct mtz_stats *st);

/* @return : the last error's full message, "" when there was none. */
const char *mtz_writer_error(const struct mtz_writer *w);

/* Frees w (does not finish it).  Accepts NULL. */
void mtz_writer_free(struct mtz_writer *w);

/* ---- reading ---------------------------------------------------------- */

struct mtz_reader;

/* Opens a reader on fd, which it does not close, and checks the .mtz
 * header.  @return : 0, or a negative code with *out NULL: MTZ_EIO (errno
 *           set), MTZ_EMAGIC, MTZ_EVERSION, MTZ_ETRUNC, MTZ_ENOMEM. */
int mtz_reader_fdopen(struct mtz_reader **out, int fd, const char *name);

/* Same on a read function (e.g. one that first replays bytes a caller read
 * to sniff the magic); ctx must stay valid while the reader lives. */
int mtz_reader_new(struct mtz_reader **out, mt_perf_read_fn read, void *ctx,
		   const char *name);

/* Damage reports: fn(ctx, msg) is called once per lost frame, with a message
 * such as "'s.mtz': frame 3 at offset 81920: checksum mismatch; frame
 * skipped (original bytes 1048576..2097152 lost)".  Without a callback the
 * reader stays silent; the count is in the stats either way. */
typedef void (*mtz_warn_fn)(void *ctx, const char *msg);
void mtz_reader_set_warn(struct mtz_reader *r, mtz_warn_fn fn, void *ctx);

/* Frames are read ahead and decoded by worker threads (default 2, at most
 * 8), each frame handed out in pieces while it is decoded; 0 decodes in the
 * caller's thread, a whole frame before handing it out.  Set before the first read.  The
 * output and the messages are the same whatever the count. */
void mtz_reader_set_threads(struct mtz_reader *r, int threads);

/* Random access, before the first read: position r at the frame holding
 * original byte @orig (frame headers are read with pread, payloads
 * skipped), so that reading resumes at original offset *start <= orig.
 * Needs a reader on a seekable fd (mtz_reader_fdopen).
 * @return : 0; MTZ_EFORMAT when the fd cannot seek, reading has begun, or no
 *           sound frame holds orig (a damaged header stops the search: random
 *           access gives up where sequential reading would resynchronise);
 *           MTZ_EIO. */
int mtz_reader_seek(struct mtz_reader *r, uint64_t orig, uint64_t *start);

/* Reads decoded perf stream bytes: an mt_perf_read_fn, so a perf reader can
 * sit on it:  mt_perf_reader_new(&pr, mtz_reader_read, mtz, name).
 * ctx is the struct mtz_reader *.  Damaged frames are skipped (see above).
 * @return : bytes read, 0 at the end of the file (or of what could be read
 *           of a truncated one), -1 with errno set (EIO, ENOMEM) on a read
 *           failure of the underlying input; mtz_reader_error says more. */
ssize_t mtz_reader_read(void *ctx, void *buf, size_t len);

/* Same without a copy: *data points at the next decoded bytes (part of the
 * current frame: a piece of about 256 KiB while a worker rebuilds the rest,
 * else up to the frame's end), valid until the next call on r.
 * @return : as mtz_reader_read. */
ssize_t mtz_reader_chunk(struct mtz_reader *r, const void **data);

/* @return : the number of damage events (lost frames, truncation, missing
 *           end marker) seen so far; nonzero means the output is incomplete. */
uint64_t mtz_reader_damage(const struct mtz_reader *r);

void mtz_reader_stats(const struct mtz_reader *r, struct mtz_stats *st);

/* @return : the last error or damage message, "" when there was none. */
const char *mtz_reader_error(const struct mtz_reader *r);

/* Accepts NULL. */
void mtz_reader_free(struct mtz_reader *r);

#endif
