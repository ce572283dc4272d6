/* Files of the debug cache named by build-id: see cache_file.h. */
#include "symbolize/cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/trust.h"
#include "symbolize/debug_cache.h"

char *mt_unwind_cache_file_path(const char *dir, const uint8_t *id, size_t id_len,
				const char *suffix)
{
	char hex[2 * MT_UNWIND_CACHE_MAX_ID + 1], *path;
	if (!dir || !*dir || id_len == 0 || id_len > MT_UNWIND_CACHE_MAX_ID)
		return NULL;
	mt_build_id_hex(hex, id, id_len);
	return asprintf(&path, "%s/%s.%s", dir, hex, suffix) < 0 ? NULL : path;
}

int mt_unwind_cache_file_open(const char *path, uint64_t max, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)	/* none yet, or no directory: nothing to read */
		return errno == ENOENT || errno == ENOTDIR ? -1 : -2;
	char why[64];
	/* Another user's file, in a shared cache directory, is unusable too. */
	if (fstat(fd, st) == 0 && mt_file_trusted(st, why, sizeof(why)) &&
	    (uint64_t)st->st_size <= max)
		return fd;
	close(fd);
	return -2;
}

int mt_unwind_cache_file_map(const char *path, size_t min, uint64_t max, void **map,
			     size_t *len)
{
	struct stat st;
	int fd = mt_unwind_cache_file_open(path, max, &st);
	if (fd < 0)
		return fd == -1 ? 0 : -1;
	void *p = MAP_FAILED;
	if ((uint64_t)st.st_size >= min && st.st_size > 0)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	*map = p;
	*len = (size_t)st.st_size;
	return 1;
}

int mt_unwind_cache_file_write(const char *dir, const char *path, const struct iovec *parts,
			       int n)
{
	char *tmp = NULL;
	int fd = -1;
	int ok = mt_unwind_cache_mkdirs(dir) == 0 && asprintf(&tmp, "%s.XXXXXX", path) >= 0;
	if (ok && (fd = mkstemp(tmp)) < 0) {
		free(tmp);
		tmp = NULL;
	}
	FILE *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (fd >= 0 && !out)
		close(fd);
	ok = out && fchmod(fd, 0644) == 0;
	for (int i = 0; ok && i < n; i++)
		ok = !parts[i].iov_len ||
		     fwrite(parts[i].iov_base, 1, parts[i].iov_len, out) == parts[i].iov_len;
	ok = out && fclose(out) == 0 && ok && rename(tmp, path) == 0;
	if (!ok && tmp)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}
