/* The input, handed to the readers under test as they take it: a file
 * descriptor, or a read function. */
#include "tests/fuzz/fuzz.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int mt_fuzz_memfd(const char *name, const void *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	const char *p = data;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		size -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

ssize_t mt_fuzz_read(void *ctx, void *buf, size_t len)
{
	struct mt_fuzz_source *s = ctx;
	size_t n = s->len - s->pos < len ? s->len - s->pos : len;
	if (s->max && n > s->max)
		n = s->max;
	memcpy(buf, s->p + s->pos, n);
	s->pos += n;
	return (ssize_t)n;
}
