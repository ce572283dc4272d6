/* mt: the unwound text of a capture, from mt-unwind or the cache (see
 * unwound.h; the entry format and the bounds: docs/front.md). */
#include "front/unwound.h"
#include "front/run.h"
#include "common/io.h"
#include "common/cache_dir.h"
#include "common/cli.h"
#include "common/filekind.h"
#include "common/fnv.h"
#include "common/trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* What mt-unwind is run with: part of the key. */
/* Source lines for the report; modules, addresses and first lines for
 * mt report --pprof (mt-fold drops them for its other outputs): one cached
 * text serves every subcommand. */
static char *const unwind_opts[] = { "--srcline", "--pprof-info", NULL };

#define ENTRY_MAGIC "mt unwound cache 1\n"
#define ENTRY_SUFFIX ".unwound.zst"
#define ZSTD_LEVEL 3
/* Text per zstd frame: a frame's text reaches the readers only once its
 * checksum held, so a damaged entry feeds them nothing false. */
#define FRAME_TEXT (1u << 20)

/* Bounds, checked after each new entry (docs/front.md): entries unused for
 * MAX_AGE are removed, then the least recently used until the rest fit in
 * MAX_BYTES (MT_UNWOUND_CACHE_MAX_BYTES overrides it, for tests). */
#define MAX_AGE_S (30 * 86400)
#define MAX_BYTES (1ull << 30)
#define TMP_AGE_S 86400

/* The source's exit codes besides 0. */
enum {
	SRC_DAMAGED = 90,	/* the cached entry is damaged: readers killed */
	SRC_GONE = 91,		/* every reader closed its input early */
	SRC_NO_CACHE = 92,	/* the new entry could not be written (said) */
	SRC_FAILED = 93,	/* cannot read the input (said) */
};

enum src_mode { SRC_HIT, SRC_MISS, SRC_UNWIND, SRC_TEXT };

struct mt_unwound {
	const char *path;
	enum src_mode mode;
	int verbose;
	int in_fd;		/* the capture, then mt-unwind's output; the text file; the entry */
	char *unwind;		/* mt-unwind's path */
	char *dir, *entry, *tmp;	/* cache directory, entry, its temp name */
	char *key;
	int tmp_fd;
	int n, wfd[MT_UNWOUND_MAX_READERS];
	int meta[2], go[2];
	pid_t unwind_pid, src_pid;
	struct mt_unwound_first first;
};

/* ---- the key ----------------------------------------------------------- */

static int identity(char *buf, size_t len, const char *label, const char *path,
		    const struct stat *st)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return -1;
	int n = snprintf(buf, len, "%s %s\ndev %llu ino %llu size %lld mtime %lld.%09ld ctime %lld.%09ld\n",
			 label, real, (unsigned long long)st->st_dev,
			 (unsigned long long)st->st_ino, (long long)st->st_size,
			 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
			 (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Sets u->key, u->entry, u->tmp.  @return : 0, or -1 (no cache: warned). */
static int make_key(struct mt_unwound *u)
{
	struct stat cst, ust;
	char cap[PATH_MAX + 256], unw[PATH_MAX + 256], opts[256] = "";
	if (fstat(u->in_fd, &cst) != 0 || stat(u->unwind, &ust) != 0 ||
	    identity(cap, sizeof(cap), "capture", u->path, &cst) ||
	    identity(unw, sizeof(unw), "mt-unwind", u->unwind, &ust)) {
		mt_warn("not using the unwound cache: cannot examine '%s': %s", u->path,
			strerror(errno));
		return -1;
	}
	for (char *const *o = unwind_opts; *o; o++) {
		strcat(opts, " ");
		strcat(opts, *o);
	}
	if (asprintf(&u->key, "%soptions%s\n%s", cap, opts, unw) < 0)
		return u->key = NULL, -1;
	/* One entry per capture path and options: a changed capture or a new
	 * mt-unwind replaces its old entry. */
	size_t plen = strchr(cap, '\n') - cap;
	uint64_t h = mt_fnv(cap, plen) ^ mt_fnv(opts, strlen(opts)) * 31;
	if (asprintf(&u->entry, "%s/%016llx" ENTRY_SUFFIX, u->dir, (unsigned long long)h) < 0 ||
	    asprintf(&u->tmp, "%s/%016llx.tmp.%d", u->dir, (unsigned long long)h, (int)getpid()) < 0)
		return -1;
	return 0;
}

/* Reads the entry's header.  @return : the entry's fd positioned after it
 * when it holds u->key, else -1. */
static int open_entry(const struct mt_unwound *u)
{
	int fd = open(u->entry, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct stat st;
	char why[512];
	if (fstat(fd, &st) != 0 || !mt_file_trusted(&st, why, sizeof(why))) {
		close(fd);
		return -1;
	}
	size_t klen = strlen(u->key), mlen = strlen(ENTRY_MAGIC), want = mlen + klen + 1;
	char *buf = malloc(want);
	ssize_t got = buf ? pread(fd, buf, want, 0) : -1;
	int ok = got == (ssize_t)want && memcmp(buf, ENTRY_MAGIC, mlen) == 0 &&
		 memcmp(buf + mlen, u->key, klen) == 0 && buf[want - 1] == '\n';
	free(buf);
	if (!ok || lseek(fd, (off_t)want, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	futimens(fd, NULL);	/* used now: the bound removes the least recently used */
	return fd;
}

/* ---- planning ---------------------------------------------------------- */

/* What a file that is not a capture is, when it is another of mt's outputs:
 * "WHAT, not a capture: WHAT TO DO", or NULL. */
static const char *looks_like(int fd)
{
	char b[4096];
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);
	if (n <= 0)
		return NULL;
	b[n] = 0;
	if (!strncmp(b, "<?xml", 5) || !strncmp(b, "<svg", 4))
		return "an SVG, not a capture: open it in a browser";
	if (b[0] == '{' && strstr(b, "\"mt-fold-report\""))
		return "mt-fold --json output, not a capture: mt report reads the capture it came from";
	return NULL;
}

static int not_a_capture(const char *path, enum mt_file_kind k, int fd)
{
	const char *what = k == MT_FILE_EMPTY ? NULL : looks_like(fd);
	if (k == MT_FILE_EMPTY)
		mt_error("'%s' is empty: not a capture", path);
	else if (k == MT_FILE_FOLDED)
		mt_error("'%s' is %s, not a capture: draw them with mt-flamegraph", path,
			 mt_file_kind_str(k));
	else if (what)
		mt_error("'%s' is %s", path, what);
	else
		mt_error("'%s' is not a capture: mt reads .mtz files (mt record), perf.data "
			 "files, perf pipe streams and mt-unwind output", path);
	return MT_EXIT_DATA;
}

int mt_unwound_open(struct mt_unwound **out, const char *path, int no_cache, int verbose)
{
	*out = NULL;
	struct mt_unwound *u = calloc(1, sizeof(*u));
	if (!u)
		return mt_error("out of memory"), MT_EXIT_ENV;
	u->path = path;
	u->verbose = verbose;
	u->tmp_fd = u->meta[0] = u->meta[1] = u->go[0] = u->go[1] = -1;
	u->unwind_pid = u->src_pid = -1;
	if ((u->in_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		mt_error("cannot open '%s': %s", path, strerror(errno));
		free(u);
		return MT_EXIT_ENV;
	}
	*out = u;
	struct stat st;
	if (fstat(u->in_fd, &st) == 0 && S_ISDIR(st.st_mode))
		return mt_error("cannot read '%s': Is a directory", path), MT_EXIT_ENV;
	enum mt_file_kind k;
	if (mt_file_kind_peek(path, &k) != 0) {
		/* a pipe or device: mt-unwind reads it as a stream, uncached */
		k = MT_FILE_PERF_PIPE;
		no_cache = 1;
	}
	if (k == MT_FILE_EMPTY || k == MT_FILE_OTHER || k == MT_FILE_FOLDED)
		return not_a_capture(path, k, u->in_fd);
	if (k == MT_FILE_UNWIND_TEXT) {
		u->mode = SRC_TEXT;
		if (verbose)
			mt_info("unwound: '%s' is mt-unwind output already", path);
		return 0;
	}
	if (!(u->unwind = mt_front_stage("mt-unwind")))
		return MT_EXIT_ENV;
	u->mode = SRC_UNWIND;
	if (no_cache) {
		if (verbose)
			mt_info("unwound: running mt-unwind (no cache)");
		return 0;
	}
	char why[512];
	if (!(u->dir = mt_cache_dir("unwound"))) {
		mt_warn("not using the unwound cache: neither XDG_CACHE_HOME nor HOME "
			"is an absolute path");
		return 0;
	}
	int t = mt_mkdirs_trusted(u->dir, why, sizeof(why));
	if (t != 1) {
		mt_warn("not using the unwound cache '%s': %s", u->dir, why);
		return 0;
	}
	if (make_key(u))
		return 0;
	int fd = open_entry(u);
	if (fd >= 0) {
		close(u->in_fd);
		u->in_fd = fd;
		u->mode = SRC_HIT;
		if (verbose)
			mt_info("unwound: cached in '%s'", u->entry);
		return 0;
	}
	u->tmp_fd = open(u->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (u->tmp_fd < 0) {
		mt_warn("not using the unwound cache: cannot create '%s': %s", u->tmp,
			strerror(errno));
		return 0;
	}
	u->mode = SRC_MISS;
	if (verbose)
		mt_info("unwound: running mt-unwind, to be cached in '%s'", u->entry);
	return 0;
}

int mt_unwound_pipes(struct mt_unwound *u, int n, int *fds)
{
	for (int i = 0; i < n; i++) {
		int p[2];
		if (mt_front_pipe(p))
			return MT_EXIT_ENV;
		fds[i] = p[0];
		u->wfd[u->n++] = p[1];
	}
	return 0;
}

/* ---- the source (a forked child of mt) ----------------------------------- */

struct src {
	struct mt_unwound *u;
	const pid_t *pids;
	int npids;
	int live;		/* readers still reading */
	ZSTD_CCtx *cctx;
	int cache_ok;
	size_t in_frame;	/* text in the frame being written */
	char first[4096];
	size_t first_len;
	int at_line_start, comment, first_done;
};


/* The first line that is not a comment (its first 4 KiB). */
static void scan_first(struct src *s, const char *p, size_t n)
{
	for (size_t i = 0; i < n && !s->first_done; i++) {
		char c = p[i];
		if (s->at_line_start) {
			s->at_line_start = 0;
			s->comment = c == '#';
			s->first_len = 0;
		}
		if (c == '\n') {
			s->at_line_start = 1;
			s->first_done = !s->comment;
			continue;
		}
		if (!s->comment && s->first_len < sizeof(s->first) - 1)
			s->first[s->first_len++] = c;
	}
}

/* n bytes (mode ZSTD_e_continue), or the end of a frame (ZSTD_e_end). */
static void compress(struct src *s, const void *p, size_t n, ZSTD_EndDirective mode)
{
	static char obuf[1 << 17];
	ZSTD_inBuffer in = { p, n, 0 };
	for (;;) {
		ZSTD_outBuffer out = { obuf, sizeof(obuf), 0 };
		size_t r = ZSTD_compressStream2(s->cctx, &out, &in, mode);
		if (ZSTD_isError(r)) {
			mt_warn("cannot write the unwound cache '%s': %s", s->u->tmp, ZSTD_getErrorName(r));
			s->cache_ok = 0;
			return;
		}
		if (mt_write_all(s->u->tmp_fd, obuf, out.pos)) {
			mt_warn("cannot write the unwound cache '%s': %s", s->u->tmp, strerror(errno));
			s->cache_ok = 0;
			return;
		}
		if (mode == ZSTD_e_end ? r == 0 : in.pos == in.size)
			return;
	}
}

/* The text into the new entry, FRAME_TEXT bytes per frame; end: the last
 * frame (always one, so that an entry cut short is told from an empty text). */
static void cache_write(struct src *s, const char *p, size_t n, int end)
{
	while (s->cache_ok && n) {
		size_t m = FRAME_TEXT - s->in_frame < n ? FRAME_TEXT - s->in_frame : n;
		compress(s, p, m, ZSTD_e_continue);
		p += m;
		n -= m;
		if ((s->in_frame += m) == FRAME_TEXT) {
			compress(s, NULL, 0, ZSTD_e_end);
			s->in_frame = 0;
		}
	}
	if (s->cache_ok && end)
		compress(s, NULL, 0, ZSTD_e_end);
}

/* The text's next n bytes to every reader still reading.  @return : 0, or
 * -1 when none is. */
static int deliver(struct src *s, const char *p, size_t n)
{
	if (!s->first_done)
		scan_first(s, p, n);
	for (int i = 0; i < s->u->n; i++) {
		if (s->u->wfd[i] < 0)
			continue;
		if (mt_write_all(s->u->wfd[i], p, n)) {
			mt_front_close(&s->u->wfd[i]);
			s->live--;
		}
	}
	if (s->u->mode == SRC_MISS)
		cache_write(s, p, n, 0);
	return s->live ? 0 : -1;
}

static void kill_readers(const pid_t *pids, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], sig);
}

static int src_damaged(struct src *s, const char *why)
{
	kill_readers(s->pids, s->npids, SIGKILL);
	mt_warn("the unwound cache entry '%s' is damaged (%s): unwinding again",
		s->u->entry, why);
	unlink(s->u->entry);
	return SRC_DAMAGED;
}

static int src_copy(struct src *s)
{
	static char buf[1 << 17];
	for (;;) {
		ssize_t n = read(s->u->in_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			mt_error("cannot read '%s': %s", s->u->path, strerror(errno));
			return SRC_FAILED;
		}
		if (n == 0)
			return 0;
		if (deliver(s, buf, (size_t)n))
			return SRC_GONE;
	}
}

static int src_decompress(struct src *s)
{
	static char ibuf[1 << 17];
	char *obuf = malloc(FRAME_TEXT + 1);
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (!d || !obuf) {
		free(obuf);
		ZSTD_freeDCtx(d);
		return src_damaged(s, "out of memory");
	}
	size_t last = 1;	/* nonzero: inside a frame (none seen yet) */
	ZSTD_outBuffer out = { obuf, FRAME_TEXT + 1, 0 };
	int rc = 0;
	for (;;) {
		ssize_t n = read(s->u->in_fd, ibuf, sizeof(ibuf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = src_damaged(s, strerror(errno));
			break;
		}
		if (n == 0) {
			if (last != 0)
				rc = src_damaged(s, "it ends inside a zstd frame");
			break;
		}
		ZSTD_inBuffer in = { ibuf, (size_t)n, 0 };
		while (in.pos < in.size) {
			last = ZSTD_decompressStream(d, &out, &in);
			if (ZSTD_isError(last)) {
				rc = src_damaged(s, ZSTD_getErrorName(last));
				goto out;
			}
			if (last == 0) {	/* a whole frame, its checksum checked */
				if (out.pos && deliver(s, obuf, out.pos)) {
					rc = SRC_GONE;
					goto out;
				}
				out.pos = 0;
			} else if (out.pos == out.size) {
				rc = src_damaged(s, "a frame holds more than mt writes in one");
				goto out;
			}
		}
	}
out:
	ZSTD_freeDCtx(d);
	free(obuf);
	return rc;
}

/* Closes every fd but stdio and keep[0..n). */
static void close_others(const int *keep, int n)
{
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++) {
		int k = 0;
		for (int i = 0; i < n && !k; i++)
			k = keep[i] == fd;
		if (!k)
			close(fd);
	}
}

static noreturn void source_main(struct mt_unwound *u, const pid_t *pids, int npids)
{
	int keep[MT_UNWOUND_MAX_READERS + 4], nk = 0;
	for (int i = 0; i < u->n; i++)
		keep[nk++] = u->wfd[i];
	keep[nk++] = u->in_fd;
	keep[nk++] = u->meta[1];
	keep[nk++] = u->go[0];
	if (u->tmp_fd >= 0)
		keep[nk++] = u->tmp_fd;
	close_others(keep, nk);
	signal(SIGPIPE, SIG_IGN);

	struct src s = { .u = u, .pids = pids, .npids = npids, .live = u->n, .at_line_start = 1 };
	if (u->mode == SRC_MISS) {
		s.cache_ok = 1;
		if (!(s.cctx = ZSTD_createCCtx()) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s.cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s.cctx, ZSTD_c_checksumFlag, 1)) ||
		    mt_write_all(u->tmp_fd, ENTRY_MAGIC, strlen(ENTRY_MAGIC)) ||
		    mt_write_all(u->tmp_fd, u->key, strlen(u->key)) || mt_write_all(u->tmp_fd, "\n", 1)) {
			mt_warn("cannot write the unwound cache '%s': %s", u->tmp, strerror(errno));
			s.cache_ok = 0;
		}
	}
	int rc = u->mode == SRC_HIT ? src_decompress(&s) : src_copy(&s);
	if (rc == SRC_DAMAGED)
		_exit(rc);
	if (u->mode == SRC_MISS && rc == 0) {
		cache_write(&s, "", 0, 1);
		if (s.cache_ok && close(u->tmp_fd) != 0) {
			mt_warn("cannot write the unwound cache '%s': %s", u->tmp, strerror(errno));
			s.cache_ok = 0;
		}
		if (!s.cache_ok)
			rc = SRC_NO_CACHE;
	}
	/* mt-unwind must not wait on a reader that stopped reading */
	mt_front_close(&u->in_fd);
	if (rc == SRC_GONE)	/* no reader is left to see an end */
		_exit(rc);
	/* The first event line, then wait for mt before the readers see the end. */
	if (!s.first_done)
		s.first_len = 0;	/* a comment line, or none */
	s.first[s.first_len] = 0;
	if (mt_write_all(u->meta[1], s.first, s.first_len + 1) == 0) {
		char c;
		while (read(u->go[0], &c, 1) < 0 && errno == EINTR)
			;
	}
	_exit(rc);
}

int mt_unwound_start(struct mt_unwound *u, const pid_t *pids, int n)
{
	if (u->mode == SRC_UNWIND || u->mode == SRC_MISS) {
		int p[2];
		if (mt_front_pipe(p))
			return MT_EXIT_ENV;
		char *argv[8] = { u->unwind };
		int a = 1;
		for (char *const *o = unwind_opts; *o; o++)
			argv[a++] = *o;
		if (!u->verbose)	/* its summary; warnings still come */
			argv[a++] = "-q";
		argv[a++] = (char *)u->path;
		argv[a] = NULL;
		u->unwind_pid = mt_front_spawn(argv, -1, p[1], NULL, 0, NULL, 0);
		close(p[1]);
		if (u->unwind_pid < 0) {
			close(p[0]);
			return MT_EXIT_ENV;
		}
		close(u->in_fd);
		u->in_fd = p[0];
	}
	if (mt_front_pipe(u->meta) || mt_front_pipe(u->go))
		return MT_EXIT_ENV;
	fflush(stdout);
	fflush(stderr);
	u->src_pid = fork();
	if (u->src_pid < 0)
		return mt_error("cannot fork: %s", strerror(errno)), MT_EXIT_ENV;
	if (u->src_pid == 0)
		source_main(u, pids, n);
	for (int i = 0; i < u->n; i++)
		mt_front_close(&u->wfd[i]);
	mt_front_close(&u->in_fd);
	mt_front_close(&u->tmp_fd);
	mt_front_close(&u->meta[1]);
	mt_front_close(&u->go[0]);
	return 0;
}

/* ---- the end ----------------------------------------------------------- */

struct entry {
	char *name;
	off_t size;
	time_t used;
};

static int by_use(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Applies the bounds (see MAX_AGE_S, MAX_BYTES), keeping keep. */
static void prune(const char *dir, const char *keep)
{
	unsigned long long max = MAX_BYTES;
	const char *env = getenv("MT_UNWOUND_CACHE_MAX_BYTES");
	if (env && *env >= '0' && *env <= '9')
		max = strtoull(env, NULL, 10);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct entry *e = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;
	time_t now = time(NULL);
	const char *keep_base = strrchr(keep, '/') + 1;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(ENTRY_SUFFIX);
		int is_entry = len > sl && strcmp(de->d_name + len - sl, ENTRY_SUFFIX) == 0;
		int is_tmp = strstr(de->d_name, ".tmp.") != NULL;
		struct stat st;
		if ((!is_entry && !is_tmp) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (is_tmp) {	/* left by a run that was killed */
			if (now - st.st_mtime > TMP_AGE_S)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (strcmp(de->d_name, keep_base) == 0)
			continue;
		if (now - st.st_mtime > MAX_AGE_S) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (n == cap) {
			struct entry *ne = realloc(e, (cap = cap ? 2 * cap : 16) * sizeof(*e));
			if (!ne)
				break;
			e = ne;
		}
		if (!(e[n].name = strdup(de->d_name)))
			break;
		e[n].size = st.st_size;
		e[n].used = st.st_mtime;
		total += (unsigned long long)st.st_size;
		n++;
	}
	struct stat kst;
	if (fstatat(dirfd(d), keep_base, &kst, AT_SYMLINK_NOFOLLOW) == 0)
		total += (unsigned long long)kst.st_size;
	if (n)
		qsort(e, n, sizeof(*e), by_use);
	for (size_t i = 0; i < n; i++) {
		if (total > max && unlinkat(dirfd(d), e[i].name, 0) == 0)
			total -= (unsigned long long)e[i].size;
		free(e[i].name);
	}
	free(e);
	closedir(d);
}

/* KIND, COMM and event= of an event line (docs/formats/unwind-text.md). */
static void parse_first(struct mt_unwound_first *f, char *line)
{
	char *field[6] = { NULL };
	int n = 0;
	for (char *p = line; n < 6 && p; n++) {
		field[n] = p;
		if ((p = strchr(p, '\t')))
			*p++ = 0;
	}
	snprintf(f->kind, sizeof(f->kind), "%s", n > 0 ? field[0] : "");
	snprintf(f->comm, sizeof(f->comm), "%s", n > 3 ? field[3] : "");
	f->event[0] = 0;
	if (n > 4) {
		for (char *w = strtok(field[4], " "); w; w = strtok(NULL, " "))
			if (!strncmp(w, "event=", 6))
				snprintf(f->event, sizeof(f->event), "%s", w + 6);
	}
}

int mt_unwound_finish(struct mt_unwound *u, const pid_t *pids, int n,
		      int (*hook)(void *ctx, const struct mt_unwound_first *f), void *ctx)
{
	/* the first event line, once the source has the whole text */
	char line[4096];
	size_t got = 0;
	int have = 0;	/* the source got to the end of the text */
	for (;;) {
		ssize_t k = read(u->meta[0], line + got, sizeof(line) - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if ((have = memchr(line + got - k, 0, (size_t)k) != NULL) || got == sizeof(line) - 1)
			break;
	}
	line[got] = 0;
	parse_first(&u->first, line);
	int ustatus = 0;
	if (u->unwind_pid > 0) {
		/* its output has ended: it has or is about to */
		ustatus = mt_front_wait(u->unwind_pid, "mt-unwind", 1);
		u->unwind_pid = -1;
		if (ustatus >= 2)	/* no text worth a report: the readers go */
			kill_readers(pids, n, SIGTERM);
	}
	int hstatus = 0;
	if (hook && have && ustatus < 2 && (hstatus = hook(ctx, &u->first)))
		kill_readers(pids, n, SIGTERM);	/* hook said why */
	mt_front_close(&u->go[1]);	/* go */
	int sstatus = mt_front_wait(u->src_pid, "mt (source)", 0);
	u->src_pid = -1;
	if (u->mode == SRC_MISS) {
		if (sstatus == 0 && ustatus == 0 && rename(u->tmp, u->entry) == 0)
			prune(u->dir, u->entry);
		else
			unlink(u->tmp);
	}
	if (sstatus == SRC_DAMAGED)
		return MT_UNWOUND_RETRY;
	if (hstatus)
		return hstatus;
	if (ustatus == 128 + SIGPIPE && sstatus == SRC_GONE)
		ustatus = 0;	/* the readers stopped first: they say why */
	if (ustatus)
		return ustatus >= 128 ? MT_EXIT_ENV : ustatus;
	if (sstatus == SRC_FAILED)
		return MT_EXIT_ENV;
	return 0;
}

const struct mt_unwound_first *mt_unwound_first(const struct mt_unwound *u)
{
	return &u->first;
}

const char *mt_unwound_path(const struct mt_unwound *u)
{
	return u->path;
}

void mt_unwound_free(struct mt_unwound *u)
{
	if (!u)
		return;
	mt_front_close(&u->in_fd);
	mt_front_close(&u->tmp_fd);
	for (int i = 0; i < u->n; i++)
		mt_front_close(&u->wfd[i]);
	mt_front_close(&u->meta[0]);
	mt_front_close(&u->meta[1]);
	mt_front_close(&u->go[0]);
	mt_front_close(&u->go[1]);
	if (u->tmp)
		unlink(u->tmp);
	free(u->unwind);
	free(u->dir);
	free(u->entry);
	free(u->tmp);
	free(u->key);
	free(u);
}
