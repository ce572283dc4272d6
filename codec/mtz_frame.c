/* .mtz headers (see mtz_frame.h). */
#include "codec/mtz_frame.h"

#include <string.h>
#include <zstd.h>

#include "codec/mtz.h"
#include "common/buf.h"
#include "common/fnv.h"

void mtz_file_header_pack(uint8_t out[MTZ_FILE_HEADER_SIZE], unsigned flags)
{
	memcpy(out, MTZ_MAGIC, MTZ_MAGIC_SIZE);
	mt_st16(out + 8, MTZ_VERSION);
	mt_st16(out + 10, (uint16_t)flags);
	mt_st32(out + 12, 0);
}

int mtz_file_header_check(const uint8_t in[MTZ_FILE_HEADER_SIZE], unsigned *flags,
			  unsigned *version)
{
	if (memcmp(in, MTZ_MAGIC, MTZ_MAGIC_SIZE))
		return MTZ_EMAGIC;
	*flags = mt_ld16(in + 10);
	*version = mt_ld16(in + 8);
	if (*version < MTZ_VERSION_MIN || *version > MTZ_VERSION || (*flags & ~MTZ_FLAGS_KNOWN) ||
	    mt_ld32(in + 12) != 0)
		return MTZ_EVERSION;
	return 0;
}

void mtz_frame_header_pack(uint8_t out[MTZ_FRAME_HEADER_SIZE],
			   const struct mtz_frame_header *h)
{
	memcpy(out, h->end ? MTZ_END_MAGIC : MTZ_FRAME_MAGIC, 4);
	mt_st32(out + 4, h->frame_no);
	mt_st32(out + 8, h->comp_size);
	mt_st32(out + 12, h->raw_size);
	mt_st32(out + 16, h->out_size);
	mt_st32(out + 20, 0);
	mt_st64(out + 24, h->out_offset);
	mt_st64(out + 32, h->payload_hash);
	mt_st64(out + 40, mt_fnv(out, 40));
}

int mtz_frame_header_parse(const uint8_t in[MTZ_FRAME_HEADER_SIZE],
			   struct mtz_frame_header *h)
{
	if (memcmp(in, MTZ_FRAME_MAGIC, 4) == 0)
		h->end = 0;
	else if (memcmp(in, MTZ_END_MAGIC, 4) == 0)
		h->end = 1;
	else
		return 0;
	if (mt_ld64(in + 40) != mt_fnv(in, 40) || mt_ld32(in + 20) != 0)
		return 0;
	h->frame_no = mt_ld32(in + 4);
	h->comp_size = mt_ld32(in + 8);
	h->raw_size = mt_ld32(in + 12);
	h->out_size = mt_ld32(in + 16);
	h->out_offset = mt_ld64(in + 24);
	h->payload_hash = mt_ld64(in + 32);
	if (h->end)
		return h->comp_size == 0 && h->raw_size == 0 && h->out_size == 0;
	if (h->raw_size > MTZ_FRAME_DATA_MAX || h->out_size > MTZ_FRAME_DATA_MAX ||
	    h->comp_size == 0 || h->comp_size > ZSTD_compressBound(h->raw_size) + 1024)
		return 0;
	return 1;
}
