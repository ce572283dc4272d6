/* Uncompressed copies of separate debug files; see debug_cache.h. */
#include "symbolize/debug_cache.h"
#include "common/buf.h"
#include "common/cache_dir.h"
#include "common/fnv.h"
#include "common/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

char *mt_unwind_debug_cache_default_dir(void)
{
	return mt_cache_dir("debug");
}

static int note_has_id(Elf_Scn *scn, const uint8_t *id, size_t id_len)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0)
			return nh.n_descsz == id_len &&
			       memcmp((const char *)d->d_buf + desc_off, id, id_len) == 0;
		off = next;
	}
	return 0;
}

/* Whether @e (a file of @file_size bytes) carries build-id @id and every
 * section lies inside the file; *compressed counts SHF_COMPRESSED sections.
 * @return : 0 if so, -1 if not. */
static int check_elf(Elf *e, off_t file_size, const uint8_t *id, size_t id_len, int *compressed)
{
	GElf_Ehdr eh;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -1;
	int has_id = 0;
	*compressed = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > (uint64_t)file_size || sh.sh_size > (uint64_t)file_size - sh.sh_offset))
			return -1;
		if (sh.sh_flags & SHF_COMPRESSED)
			(*compressed)++;
		if (sh.sh_type == SHT_NOTE && !has_id)
			has_id = note_has_id(scn, id, id_len);
	}
	return has_id ? 0 : -1;
}

/* Whether the file open on @fd checks out (see check_elf).
 * @return : 0 and *compressed, or -1. */
static int check_fd(int fd, const uint8_t *id, size_t id_len, int *compressed)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = check_elf(e, st.st_size, id, id_len, compressed);
	elf_end(e);
	return rc;
}

int mt_unwind_cache_mkdirs(const char *dir)
{
	char why[8192];
	return mt_mkdirs_trusted(dir, why, sizeof(why)) == 1 ? 0 : MT_UNWIND_EIO;
}

/* The source a copy was made from, in a trailer after the copy's ELF
 * (libelf reads by section and ignores it): the source's identity (device,
 * inode, size, modification and change times: the kernel sets the last,
 * no one can) and a hash of its content.  A copy serves only the file it
 * was made from, or one with the same content. */
#define TRAILER 64
static const char trailer_magic[8] = "MTDCSRC1";

struct source {
	uint64_t dev, ino, size, mtime_ns, ctime_ns, content;
};

static void source_identity(const struct stat *st, struct source *s)
{
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->size = (uint64_t)st->st_size;
	s->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	s->ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

/* FNV over the whole file open on fd.  @return : 0, or -1. */
static int content_hash(int fd, uint64_t *h)
{
	unsigned char buf[1 << 16];
	uint64_t v = MT_FNV_BASIS;
	for (off_t off = 0;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		/* Whole buffers keep the word alignment mt_fnv_from needs. */
		v = mt_fnv_from(v, buf, 0, (size_t)n);
		off += n;
	}
	*h = v;
	return 0;
}

static void trailer_put(uint8_t *t, const struct source *s)
{
	memcpy(t, trailer_magic, 8);
	const uint64_t f[6] = { s->dev, s->ino, s->size, s->mtime_ns, s->ctime_ns, s->content };
	for (int i = 0; i < 6; i++)
		mt_st64(t + 8 + 8 * i, f[i]);
	mt_st64(t + 56, mt_fnv(t, 56));
}

/* The trailer of the copy open on fd, of size bytes.  @return : 0, or -1
 * when it has none or a damaged one. */
static int trailer_get(int fd, off_t size, struct source *s)
{
	uint8_t t[TRAILER];
	if (size < TRAILER || pread(fd, t, TRAILER, size - TRAILER) != TRAILER ||
	    memcmp(t, trailer_magic, 8) || mt_ld64(t + 56) != mt_fnv(t, 56))
		return -1;
	uint64_t *f[6] = { &s->dev, &s->ino, &s->size, &s->mtime_ns, &s->ctime_ns, &s->content };
	for (int i = 0; i < 6; i++)
		*f[i] = mt_ld64(t + 8 + 8 * i);
	return 0;
}

uint64_t mt_unwind_debug_cache_copy_source(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	struct source s;
	uint64_t h = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && trailer_get(fd, st.st_size, &s) == 0) {
		const uint64_t f[6] = { s.dev, s.ino, s.size, s.mtime_ns, s.ctime_ns, s.content };
		h = mt_fnv(f, sizeof(f));
		h = h ? h : 1;
	}
	close(fd);
	return h;
}

/* Was the copy open on cfd (size bytes) made from the file open on src? */
static int made_from(int cfd, off_t size, int src)
{
	struct source have, is;
	struct stat st;
	if (trailer_get(cfd, size, &have) != 0 || fstat(src, &st) != 0)
		return 0;
	source_identity(&st, &is);
	if (is.dev == have.dev && is.ino == have.ino && is.size == have.size &&
	    is.mtime_ns == have.mtime_ns && is.ctime_ns == have.ctime_ns)
		return 1;
	/* Another file (reinstalled, copied): the same only by content. */
	return is.size == have.size && content_hash(src, &is.content) == 0 &&
	       is.content == have.content;
}

static int copy_fd(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		for (ssize_t w = 0; w < n;) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return -1;
			w += k;
		}
		off += n;
	}
}

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Is the compression header of a section of @packed bytes one to inflate?
 * The file may be hostile (a profiled program's own, since module.c asks
 * for copies of those): the alignment is written out as zeros, and the
 * size is memory and disk.  DWARF compresses 3 to 10 times. */
static int chdr_sound(const GElf_Chdr *ch, uint64_t packed)
{
	return ch->ch_addralign <= 4096 && !(ch->ch_addralign & (ch->ch_addralign - 1)) &&
	       ch->ch_size <= ((uint64_t)1 << 32) && ch->ch_size / 64 <= packed + (1 << 14);
}

/* A zstd-compressed section (binutils 2.40 and gcc 13 write them), which
 * libelf reads only from elfutils 0.189 on, with its compression header
 * ch (checked sound): its data replaced by the inflated bytes, kept in
 * *keep until the file is written.  @return : 0, or -1. */
static int inflate_zstd(Elf *e, Elf_Scn *scn, const GElf_Chdr *ch, GElf_Shdr *sh, void **keep)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t head = gelf_fsize(e, ELF_T_CHDR, 1, EV_CURRENT);	/* 24, or 12 in ELF32 */
	if (ch->ch_type != ELFCOMPRESS_ZSTD || !d || !d->d_buf || !head || d->d_size < head)
		return -1;
	void *buf = malloc(ch->ch_size ? ch->ch_size : 1);
	if (!buf)
		return -1;
	size_t n = ZSTD_decompress(buf, ch->ch_size, (const char *)d->d_buf + head, d->d_size - head);
	if (ZSTD_isError(n) || n != ch->ch_size) {
		free(buf);
		return -1;
	}
	*keep = buf;
	d->d_buf = buf;
	d->d_size = ch->ch_size;
	d->d_type = ELF_T_BYTE;
	d->d_align = ch->ch_addralign ? ch->ch_addralign : 1;
	sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
	sh->sh_size = ch->ch_size;
	sh->sh_addralign = d->d_align;
	if (!gelf_update_shdr(scn, sh) || !elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY) ||
	    !elf_flagshdr(scn, ELF_C_SET, ELF_F_DIRTY))
		return -1;
	return 0;
}

/* Inflate every compressed section of the copy open on @fd, in place.
 * libelf lays the file out again and truncates it to its new size.  (All
 * sections move, the loaded ones too, and the program headers do not: the
 * copy serves libdw's reading by section, which is all it is for.) */
static int inflate_fd(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
	size_t nscn = 0;
	int rc = e && elf_getshdrnum(e, &nscn) == 0 ? 0 : -1;
	void **keep = rc == 0 ? calloc(nscn ? nscn : 1, sizeof(*keep)) : NULL;
	if (!keep)
		rc = -1;
	for (Elf_Scn *scn = NULL; rc == 0 && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		if (!gelf_getshdr(scn, &sh))
			rc = -1;
		else if (!(sh.sh_flags & SHF_COMPRESSED))
			continue;
		else if (!gelf_getchdr(scn, &ch) || !chdr_sound(&ch, sh.sh_size))
			rc = -1;
		else if (elf_compress(scn, 0, 0) < 0 &&
			 (elf_ndxscn(scn) >= nscn ||
			  inflate_zstd(e, scn, &ch, &sh, &keep[elf_ndxscn(scn)])))
			rc = -1;
	}
	if (rc == 0 && elf_update(e, ELF_C_WRITE) < 0)
		rc = -1;
	elf_end(e);
	for (size_t i = 0; keep && i < nscn; i++)
		free(keep[i]);
	free(keep);
	return rc;
}

/* Make DIR/<hex>.debug from @fd.  @return : an fd on it, or -1. */
static int make_copy(const char *dir, const char *final, const char *hex, int fd,
		     const uint8_t *id, size_t id_len)
{
	char *tmp;
	if (mt_unwind_cache_mkdirs(dir) != 0 || asprintf(&tmp, "%s/.%s.XXXXXX", dir, hex) < 0)
		return -1;
	int t = mkstemp(tmp);
	int ok = t >= 0 && fchmod(t, 0644) == 0 && copy_fd(fd, t) == 0 && inflate_fd(t) == 0;
	int compressed = 1;
	struct source src;
	struct stat st, cst;
	uint8_t trailer[TRAILER];
	ok = ok && fstat(fd, &st) == 0 && content_hash(fd, &src.content) == 0 &&
	     fstat(t, &cst) == 0;
	if (ok) {
		source_identity(&st, &src);
		trailer_put(trailer, &src);
		ok = pwrite(t, trailer, TRAILER, cst.st_size) == TRAILER;
	}
	ok = ok && check_fd(t, id, id_len, &compressed) == 0 && compressed == 0 &&
	     rename(tmp, final) == 0;
	if (!ok && t >= 0)
		unlink(tmp);
	if (t >= 0)
		close(t);
	free(tmp);
	return ok ? open(final, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
}

static char *copy_path(const char *dir, const uint8_t *id, size_t id_len, char *hex)
{
	char *final;
	mt_build_id_hex(hex, id, id_len);
	return asprintf(&final, "%s/%s.debug", dir, hex) < 0 ? NULL : final;
}

int mt_unwind_debug_cache_lookup(const char *dir, const uint8_t *id, size_t id_len, int src,
				 char **path_out, struct mt_unwind_debug_cache_stats *st)
{
	char hex[129], *final, why[64];
	*path_out = NULL;
	if (!dir || src < 0 || id_len == 0 || id_len > 64 ||
	    !(final = copy_path(dir, id, id_len, hex)))
		return -1;
	/* Only a regular file no one else can have written: a shared cache
	 * directory holds other users' files too. */
	int compressed, c = open(final, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	struct stat cst;
	if (c >= 0 && (fstat(c, &cst) != 0 || !mt_file_trusted(&cst, why, sizeof(why)))) {
		close(c);
		free(final);
		__atomic_add_fetch(&st->untrusted, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (c >= 0 && check_fd(c, id, id_len, &compressed) == 0 && compressed == 0 &&
	    made_from(c, cst.st_size, src)) {
		__atomic_add_fetch(&st->hits, 1, __ATOMIC_RELAXED);
		*path_out = final;
		return c;
	}
	if (c >= 0) {
		close(c);
		__atomic_add_fetch(&st->bad, 1, __ATOMIC_RELAXED);
	}
	free(final);
	return -1;
}

int mt_unwind_debug_cache_add(const char *dir, int fd, const uint8_t *id, size_t id_len,
			      char **path_out, struct mt_unwind_debug_cache_stats *st)
{
	char hex[129], *final;
	int compressed;
	*path_out = NULL;
	if (!dir || id_len == 0 || id_len > 64 || check_fd(fd, id, id_len, &compressed) != 0 ||
	    compressed == 0)
		return -1;	/* nothing to gain, or not the file it should be */
	int c = (final = copy_path(dir, id, id_len, hex)) ?
		make_copy(dir, final, hex, fd, id, id_len) : -1;
	if (c < 0) {
		__atomic_add_fetch(&st->failed, 1, __ATOMIC_RELAXED);
		free(final);
		return -1;
	}
	__atomic_add_fetch(&st->written, 1, __ATOMIC_RELAXED);
	*path_out = final;
	return c;
}
