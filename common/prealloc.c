/* Blocks of a regular output file allocated ahead of its writes. */
#include "common/prealloc.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PREALLOC_STEP (8u << 20)

void mt_prealloc_init(struct mt_prealloc *pa, int fd)
{
	struct stat st;
	struct statfs fs;
	int fl = fcntl(fd, F_GETFL);
	off_t pos = lseek(fd, 0, SEEK_CUR);
	*pa = (struct mt_prealloc){ .fd = fd };
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fl < 0 || (fl & O_APPEND) || pos < 0)
		return;
	/* tmpfs and memfds allocate nothing lazily: ahead would only take
	 * their memory sooner */
	if (fstatfs(fd, &fs) || fs.f_type == TMPFS_MAGIC)
		return;
	pa->on = 1;
	pa->pos = pa->start = pa->allocated = (uint64_t)pos;
}

void mt_prealloc_ahead(struct mt_prealloc *pa, size_t n)
{
	if (pa->on && pa->pos + n > pa->allocated) {
		uint64_t len = pa->pos + n - pa->allocated;
		if (len < PREALLOC_STEP)
			len = PREALLOC_STEP;
		if (fallocate(pa->fd, FALLOC_FL_KEEP_SIZE, (off_t)pa->allocated, (off_t)len))
			pa->on = 0;
		else
			pa->allocated += len;
	}
	pa->pos += n;
}

void mt_prealloc_end(struct mt_prealloc *pa)
{
	struct stat st;
	off_t pos = lseek(pa->fd, 0, SEEK_CUR);	/* a failed write may have moved it */
	if (pa->allocated > pa->start && pos >= 0 && (uint64_t)pos < pa->allocated &&
	    !fstat(pa->fd, &st) && st.st_size == pos)
		(void)!ftruncate(pa->fd, pos);	/* else only space is lost */
}
