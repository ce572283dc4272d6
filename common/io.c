/* Writing a whole buffer to a descriptor (see io.h). */
#include "common/io.h"

#include <errno.h>
#include <unistd.h>

#define WRITE_CHUNK (256u << 10)

int mt_write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n) {
		ssize_t k = write(fd, b, n < WRITE_CHUNK ? n : WRITE_CHUNK);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}
