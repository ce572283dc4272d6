/* What a user hands an mt tool: a file or stdin, told apart by its first
 * bytes (.mtz, perf.data file, perf pipe stream, mt-unwind text), and read
 * on through the right reader with the sniffed bytes replayed.
 *
 * Errors are the perf stream library's MT_PERF_E* codes (codec/perf_stream.h);
 * mt_input_error() gives the full message of the last one.  Only programs
 * print.
 */
#ifndef MT_INPUT_H
#define MT_INPUT_H

#include <stdint.h>

#include "codec/mtz.h"
#include "codec/perf_stream.h"
#include "common/filekind.h"


struct mt_input;

/* Open path ("-": stdin, named "<stdin>") and read its first bytes.
 * @return : 0, MT_PERF_EIO (the file cannot be opened or read: errno kept,
 *           mt_input_error says which) or MT_PERF_ENOMEM (*out NULL).  *out
 *           is set but for ENOMEM, even on failure: free it. */
int mt_input_open(struct mt_input **out, const char *path);

/* Closes the file (not stdin) and frees the readers made here.  Accepts NULL. */
void mt_input_free(struct mt_input *in);

/* What the first bytes say it is (common/filekind.h). */
enum mt_file_kind mt_input_kind(const struct mt_input *in);

/* The name for messages: the path, or "<stdin>".  Valid while in lives. */
const char *mt_input_name(const struct mt_input *in);

/* The file descriptor (0 for stdin), and whether it is a regular file. */
int mt_input_fd(const struct mt_input *in);
int mt_input_is_regular(const struct mt_input *in);

/* After mt_input_perf_reader: does the perf reader read the file itself
 * (a regular perf file given by name), so that its item offsets are file
 * offsets and records can be read again there with pread? */
int mt_input_rereadable(const struct mt_input *in);

/* How the .mtz reader of an .mtz input is set up before it reads. */
struct mt_input_mtz_opts {
	int threads;		/* mtz_reader_set_threads */
	mtz_warn_fn warn;	/* damage reports, or NULL */
	void *warn_ctx;
};

/* The perf stream inside: for an .mtz through its decoder (mtz may be
 * NULL: the reader's defaults), for a regular perf file mapped, else read
 * through with the sniffed bytes first; COMPRESSED records unpacked.  Once
 * per input; the reader belongs to in.
 * @return : 0 with *out set, or a negative MT_PERF_E* code (mt_input_error
 *           says which and where; *out NULL): an .mtz whose header is
 *           refused gives MT_PERF_EFORMAT, or MT_PERF_ENOMEM. */
int mt_input_perf_reader(struct mt_input *in, const struct mt_input_mtz_opts *mtz,
			 struct mt_perf_reader **out);

/* The .mtz reader behind mt_input_perf_reader, or NULL. */
struct mtz_reader *mt_input_mtz(const struct mt_input *in);

/* The feature sections (codec/perf_stream.h) of a perf.data file given by
 * name, or of the perf.data file inside a regular .mtz file (decoded apart,
 * from where they begin), read before the data.  After mt_input_perf_reader.
 * @return : 0 with *out set, or NULL when the input has none that can be
 *           read first (a pipe stream; a perf.data file or .mtz read from a
 *           pipe); MT_PERF_EFORMAT when the .mtz's end does not decode;
 *           MT_PERF_ENOMEM. */
int mt_input_features(struct mt_input *in, struct mt_perf_features **out);

/* Input bytes consumed so far (from any thread), for a progress line. */
uint64_t mt_input_bytes_read(const struct mt_input *in);

/* The message of the last error, "" when there was none. */
const char *mt_input_error(const struct mt_input *in);

#endif
