/* Fuzz target: the .mtz frame decoder, past the container's checks.
 *
 * A fuzzer that mutates whole .mtz files is stopped by the checksums and
 * by zstd: nearly every mutation is a damaged frame.  So the input here is
 * the decompressed content of one frame, and this target makes a sound
 * container around it (compressed sections, right sizes and hashes): the
 * entries meet the decoder as a file written on purpose would bring them.
 * Input:
 *   byte 0      bit 0: version 1 (else 2); bit 1: one decoding worker (else
 *               none); bit 2: the frame twice (frames 0 and 1); bit 3: read
 *               with mtz_reader_read in small pieces (else mtz_reader_chunk);
 *               bit 4: 32-bit stack hashes (the file flag MTZ_FLAG_HASH32);
 *               bit 5: version 3 (head words in column order), unless bit 0
 *   bytes 1-3   out_size, little-endian (at most 16 MiB)
 *   then, for each section but the last (ops, hash, head, code, pass, pad;
 *   version 1 has no pad): a u16 length and that many bytes; the last
 *   section takes what is left.
 * The decoder must end without a crash, a hang or a sanitizer report; what
 * it hands out must be at most out_size bytes per frame. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec/mtz.h"
#include "common/buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "common/fnv.h"

/* The payload of a frame whose sections are sec[i] (len[i] bytes each). */
static uint8_t *payload_of(const uint8_t *const *sec, const size_t *len, unsigned nsec,
			   size_t *comp, size_t *raw)
{
	size_t cap = 8 * nsec;
	for (unsigned i = 0; i < nsec; i++)
		cap += ZSTD_compressBound(len[i]);
	uint8_t *out = malloc(cap);
	if (!out)
		return NULL;
	size_t at = 8 * nsec;
	*raw = 0;
	for (unsigned i = 0; i < nsec; i++) {
		size_t z = 0;
		if (len[i]) {
			z = ZSTD_compress(out + at, cap - at, sec[i], len[i], 1);
			if (ZSTD_isError(z)) {
				free(out);
				return NULL;
			}
		}
		mt_st32(out + 8 * i, (uint32_t)len[i]);
		mt_st32(out + 8 * i + 4, (uint32_t)z);
		at += z;
		*raw += len[i];
	}
	*comp = at;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	unsigned opt = data[0];
	unsigned version = opt & 1 ? 1 : opt & 32 ? 3 : 2;
	unsigned nsec = version == 1 ? MTZ_NSEC_V1 : MTZ_NSEC;
	unsigned nframes = opt & 4 ? 2 : 1;
	uint32_t out_size = mt_ld32(data) >> 8;	/* bytes 1-3 */
	const uint8_t *sec[MTZ_NSEC];
	size_t len[MTZ_NSEC], at = 4;
	for (unsigned i = 0; i < nsec; i++) {
		size_t n = size - at;
		if (i + 1 < nsec) {
			n = 0;
			if (size - at >= 2) {
				n = mt_ld16(data + at);
				at += 2;
			}
			if (n > size - at)
				n = size - at;
		}
		sec[i] = data + at;
		len[i] = n;
		at += n;
	}
	size_t comp, raw;
	uint8_t *payload = payload_of(sec, len, nsec, &comp, &raw);
	if (!payload)
		return 0;
	size_t flen = MTZ_FILE_HEADER_SIZE + nframes * (MTZ_FRAME_HEADER_SIZE + comp) +
		      MTZ_FRAME_HEADER_SIZE;
	uint8_t *file = malloc(flen);
	if (!file) {
		free(payload);
		return 0;
	}
	mtz_file_header_pack(file, 0);
	/* the version field (u16) and flags (u16) */
	mt_st32(file + 8, version | (opt & 16 ? MTZ_FLAG_HASH32 : 0) << 16);
	size_t w = MTZ_FILE_HEADER_SIZE;
	for (unsigned k = 0; k < nframes; k++) {
		struct mtz_frame_header h = {
			.frame_no = k, .comp_size = (uint32_t)comp, .raw_size = (uint32_t)raw,
			.out_size = out_size, .out_offset = (uint64_t)k * out_size,
			.payload_hash = mt_fnv(payload, comp),
		};
		mtz_frame_header_pack(file + w, &h);
		memcpy(file + w + MTZ_FRAME_HEADER_SIZE, payload, comp);
		w += MTZ_FRAME_HEADER_SIZE + comp;
	}
	struct mtz_frame_header end = { .end = 1, .frame_no = nframes,
					.out_offset = (uint64_t)nframes * out_size };
	mtz_frame_header_pack(file + w, &end);
	free(payload);

	struct mt_fuzz_source src = { .p = file, .len = flen };
	struct mtz_reader *r;
	if (mtz_reader_new(&r, mt_fuzz_read, &src, "fuzz.mtz") == 0) {
		mtz_reader_set_threads(r, opt & 2 ? 1 : 0);
		uint64_t total = 0;
		for (;;) {
			ssize_t n;
			if (opt & 8) {
				uint8_t buf[777];
				n = mtz_reader_read(r, buf, sizeof(buf));
			} else {
				const void *p;
				n = mtz_reader_chunk(r, &p);
			}
			if (n <= 0)
				break;
			total += (uint64_t)n;
		}
		/* no more than the frames rebuild */
		MT_FUZZ_CHECK(total <= (uint64_t)nframes * out_size);
		mtz_reader_free(r);
	}
	free(file);
	return 0;
}
