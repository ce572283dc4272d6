/* symbolize/error.h: the library's error messages. */
#include "symbolize/error.h"

const char *mt_unwind_strerror(int err)
{
	switch (err) {
	case MT_UNWIND_OK: return "no error";
	case MT_UNWIND_ENOMEM: return "out of memory";
	case MT_UNWIND_EIO: return "input/output error";
	case MT_UNWIND_EFORMAT: return "unsupported or malformed data";
	case MT_UNWIND_ERANGE: return "address out of range";
	}
	return "unknown error";
}
