/* .mtz file header and frame headers: layout, limits, packing and checks
 * (codec internal; docs/formats/mtz.md is the reference). */
#ifndef MTZ_FRAME_H
#define MTZ_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Version 2 lets a delta name one of the thread's last MTZ_REFS samples;
 * version 1 files are version 2 files whose deltas all name the last one,
 * so a reader takes both.  Version 3 puts the words of delta-coded heads in
 * column order (mtz_headcols.h); nothing else changed. */
#define MTZ_VERSION 4
/* Version 4 writes frame 0 (the stream's header part alone) twice; files
 * of version 3 and before have it once. */
#define MTZ_VERSION_FRAME0_COPY 4
#define MTZ_VERSION_MIN 1
#define MTZ_FLAG_RAW 1u			/* written with --raw: no SAMPLE entries */
#define MTZ_FLAG_HASH32 2u		/* stack hashes are 32-bit (--hash-bits 32) */
#define MTZ_FLAGS_KNOWN (MTZ_FLAG_RAW | MTZ_FLAG_HASH32)
#define MTZ_FILE_HEADER_SIZE 16

#define MTZ_FRAME_HEADER_SIZE 48
#define MTZ_FRAME_MAGIC "MTZF"		/* a frame */
#define MTZ_END_MAGIC "MTZE"		/* the end marker */

/* The encoder closes a frame once it holds frame_size bytes of input or of
 * entries; one item (at most 64 KiB + 64) can overshoot that. */
#define MTZ_FRAME_SIZE_DEFAULT (32u << 20)
#define MTZ_FRAME_SIZE_MIN 4096u
#define MTZ_FRAME_SIZE_MAX (64u << 20)
/* What a decoder accepts: anything above is damage, never an allocation. */
#define MTZ_FRAME_DATA_MAX (MTZ_FRAME_SIZE_MAX + (1u << 20))

struct mtz_frame_header {
	int end;		/* 1: end marker (no payload) */
	uint32_t frame_no;	/* frame: its number from 0; end: frames written */
	uint32_t comp_size;	/* zstd payload bytes after the header */
	uint32_t raw_size;	/* entry bytes once decompressed */
	uint32_t out_size;	/* original bytes the entries rebuild */
	uint64_t out_offset;	/* frame: offset of those in the original;
				 * end: total original bytes */
	uint64_t payload_hash;	/* mt_fnv of the payload */
};

void mtz_file_header_pack(uint8_t out[MTZ_FILE_HEADER_SIZE], unsigned flags);

/* @return : 0, MTZ_EMAGIC or MTZ_EVERSION; *flags and *version receive the
 *           flags and the version (MTZ_VERSION_MIN..MTZ_VERSION). */
int mtz_file_header_check(const uint8_t in[MTZ_FILE_HEADER_SIZE], unsigned *flags,
			  unsigned *version);

void mtz_frame_header_pack(uint8_t out[MTZ_FRAME_HEADER_SIZE],
			   const struct mtz_frame_header *h);

/* Accepts a header only when its magic and hash match and its sizes are
 * within the limits above.  @return : 1 valid, 0 not a header. */
int mtz_frame_header_parse(const uint8_t in[MTZ_FRAME_HEADER_SIZE],
			   struct mtz_frame_header *h);

#endif
