/* A memfd holding the input: the readers under test take file descriptors. */
#include "tests/fuzz/fuzz.h"

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
