/* .mtz error messages, magic sniffing and options. */
#include "codec/mtz.h"

#include <string.h>

#include "codec/mtz_frame.h"

const char *mtz_strerror(int err)
{
	switch (err) {
	case MTZ_OK: return "success";
	case MTZ_EIO: return "input/output error";
	case MTZ_ETRUNC: return "truncated";
	case MTZ_EMAGIC: return "not an .mtz file";
	case MTZ_EVERSION: return "unsupported .mtz version or flags";
	case MTZ_EFORMAT: return "malformed data";
	case MTZ_ENOMEM: return "out of memory";
	case MTZ_EHASH: return "checksum mismatch";
	case MTZ_EREF: return "delta against a reference the decoder does not hold";
	case MTZ_EZSTD: return "zstd error";
	case MTZ_EINPUT: return "bad perf input";
	}
	return "unknown error";
}

int mtz_is_mtz(const void *buf, size_t n)
{
	return n >= MTZ_MAGIC_SIZE && memcmp(buf, MTZ_MAGIC, MTZ_MAGIC_SIZE) == 0;
}

void mtz_options_init(struct mtz_options *o)
{
	o->level = 9;
	o->raw = 0;
	o->frame_size = MTZ_FRAME_SIZE_DEFAULT;
	o->threads = 2;
	o->hash_bits = 64;
}
