/* A copy of the sampler by build-id (see capture_keep.h).  A copy, not a
 * hard link: a later `cp` over the installed file would change both. */
#include "capture/capture_keep.h"
#include "common/cache_dir.h"
#include "common/trust.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

/* The build-id of the open ELF file fd, as lowercase hex in hex (room for
 * 129 bytes).  @return : its length in bytes, 0 when it has none. */
static int build_id_hex(int fd, char *hex)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const unsigned char *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	if (n > 64)
		n = 0;
	if (n > 0)
		mt_build_id_hex(hex, id, (size_t)n);
	elf_end(elf);
	return n > 0 ? (int)n : 0;
}

/* Has the file at path the build-id hex?  (A copy cut short by a crash, or
 * written over, must not stand for it.) */
static int has_build_id(const char *path, const char *hex)
{
	char have[129];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	int ok = build_id_hex(fd, have) && !strcmp(have, hex);
	close(fd);
	return ok;
}

/* Copy in (size bytes) to dir/name through a temporary file, renamed into
 * place once written, synced and checked to have the build-id hex. */
static int copy_to(int in, const char *dir, const char *name, off_t size, const char *hex)
{
	char tmp[4300], dst[4300];
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	int out = mkostemp(tmp, O_CLOEXEC);	/* the command must not inherit it */
	if (out < 0)
		return -1;
	off_t off = 0;
	int err = 0;
	while (off < size && !err) {
		ssize_t w = sendfile(out, in, &off, (size_t)(size - off));
		if (w < 0 && errno != EINTR)
			err = errno;
		else if (w == 0)
			err = EIO;	/* the file shrank under us */
	}
	if (!err && (fchmod(out, 0755) != 0 || fsync(out) != 0))
		err = errno;
	if (close(out) != 0 && !err)
		err = errno;
	if (!err && !has_build_id(tmp, hex))
		err = EIO;	/* the file changed while it was copied */
	if (!err && rename(tmp, dst) != 0)
		err = errno;
	if (err) {
		unlink(tmp);
		errno = err;
		return -1;
	}
	return 0;
}

int mt_capture_keep_by_build_id(const char *path, struct mt_capture_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mt_capture_err_set(err, MT_CAPTURE_EKEEP, errno, path, NULL);
	char hex[129], *root = NULL, *dir = NULL, why[8400];
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	struct stat st;
	int rc = 0, untrusted = 0;
	if (fstat(fd, &st) != 0) {
		rc = -1;
	} else if (S_ISREG(st.st_mode) && build_id_hex(fd, hex) && (root = mt_cache_dir("build-id"))) {
		if (asprintf(&dir, "%s/%s", root, hex) < 0) {
			dir = NULL;
			rc = -1;
		} else {
			char have[4300];
			snprintf(have, sizeof(have), "%s/%s", dir, base);
			/* Only in directories no one else can change: root with
			 * another user's HOME must not write where that user says. */
			int t = mt_mkdirs_trusted(dir, why, sizeof(why));
			if (t == 0)
				untrusted = 1;
			else if (t < 0)
				rc = -1;
			else if (!has_build_id(have, hex))
				rc = copy_to(fd, dir, base, st.st_size, hex);
		}
	}
	int e = errno;
	free(root);
	free(dir);
	close(fd);
	if (untrusted)
		return mt_capture_err_set(err, MT_CAPTURE_EKEEP, 0, path, why);
	return rc ? mt_capture_err_set(err, MT_CAPTURE_EKEEP, e, path, NULL) : 0;
}
