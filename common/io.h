/* Writing a whole buffer to a descriptor. */
#ifndef MT_IO_H
#define MT_IO_H

#include <stddef.h>

/* Write all n bytes of p to fd, again after EINTR and short writes, in
 * writes of at most 256 KiB: one huge write of a buffer cold in the cache
 * made the kernel's copy to the page cache much slower than the same bytes
 * in 256 KiB writes (bench/codec.sh times mt-encode's decoding).
 * @return : 0, or -1 (errno). */
int mt_write_all(int fd, const void *p, size_t n);

#endif
