/* mt archive FILE -o DIR: a symbol archive of a capture.
 *
 * mt-unwind --srcline --list-modules unwinds FILE once and lists the
 * modules it used: the file it opened for each (with its device and inode)
 * and the separate debug file its symbols and DWARF came from.  Each is
 * copied into DIR's build-id tree, keyed by the module's build-id:
 * DIR/.build-id/XX/REST (the ELF file itself: unwind tables, symbol
 * tables, its own DWARF if any) and DIR/.build-id/XX/REST.debug (its
 * separate debug file), the layout of /usr/lib/debug/.build-id.  DIR/index
 * lists what is there.  mt-unwind --symfs DIR then finds them by the
 * build-ids the capture recorded, without the original files
 * (docs/unwind.md, "Symbol archives"). */
#include "front/run.h"
#include "front/sub.h"
#include "common/cli.h"
#include "common/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYNOPSIS "mt archive FILE -o DIR"

void mt_help_archive(FILE *f)
{
	fputs("usage: " SYNOPSIS "\n"
	      "Gather into DIR what unwinding and symbolising FILE need from every module\n"
	      "its stacks touched, keyed by build-id: each module's ELF file as\n"
	      "DIR/.build-id/XX/REST and its separate debug file as .../REST.debug; DIR/index\n"
	      "lists them with their sizes and original paths.  On another machine, without\n"
	      "the binaries: mt-unwind --symfs DIR FILE gives the same output.  FILE is a\n"
	      "capture (.mtz, perf.data, perf pipe stream).  An existing DIR is added to.\n"
	      "\n"
	      "  -o, --output DIR  the archive (created mode 0700; files 0600)\n"
	      "  -q, --quiet       no summary on stderr (warnings and errors still)\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "Debug files are those mt-unwind finds: in /usr/lib/debug, and through\n"
	      "debuginfod when DEBUGINFOD_URLS is set.  The vdso is not archived (the\n"
	      "running kernel's is used).\n"
	      "\n"
	      "exit status: 0 ok; 1 data problem (FILE damaged: what mt-unwind could read\n"
	      "is archived); 2 usage; 3 environment (FILE or a module cannot be read, DIR\n"
	      "cannot be written).\n", f);
}

struct entry {			/* a line of DIR/index */
	char id[129];
	char kind[8];		/* elf, debug, dwz */
	uint64_t bytes;
	char *path;		/* original path, escaped as in the index */
};

struct archive {
	const char *dir;
	struct entry *v;
	size_t n;
	uint64_t added[3], added_bytes[3], there, failed;
};

static const char *const kinds[3] = { "elf", "debug", "dwz" };

/* Undo mt-unwind's \t \n \\ escapes in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Escape for the index: the same escapes.  @return : malloc'd, or NULL. */
static char *escape(const char *s)
{
	char *o = malloc(2 * strlen(s) + 1), *p = o;
	if (!o)
		return NULL;
	for (; *s; s++) {
		if (*s == '\t' || *s == '\n' || *s == '\\') {
			*p++ = '\\';
			*p++ = *s == '\t' ? 't' : *s == '\n' ? 'n' : '\\';
		} else {
			*p++ = *s;
		}
	}
	*p = '\0';
	return o;
}

static int entry_put(struct archive *a, const char *id, const char *kind, uint64_t bytes,
		     char *path)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].id, id) && !strcmp(a->v[i].kind, kind)) {
			free(a->v[i].path);
			a->v[i].path = path;
			a->v[i].bytes = bytes;
			return 0;
		}
	struct entry *v = realloc(a->v, (a->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	a->v = v;
	snprintf(v[a->n].id, sizeof(v[a->n].id), "%s", id);
	snprintf(v[a->n].kind, sizeof(v[a->n].kind), "%s", kind);
	v[a->n].bytes = bytes;
	v[a->n].path = path;
	a->n++;
	return 0;
}

/* The index an earlier run left, if any (its lines are kept unless this
 * run replaces them). */
static void index_read(struct archive *a)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/index", a->dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#')
			continue;
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		char *id = strtok(line, "\t"), *kind = strtok(NULL, "\t"),
		     *bytes = strtok(NULL, "\t"), *orig = strtok(NULL, "");
		char *dup;
		if (!id || !kind || !bytes || !orig || strlen(id) > 128 || strlen(kind) > 7 ||
		    !(dup = strdup(orig)))
			continue;
		if (entry_put(a, id, kind, strtoull(bytes, NULL, 10), dup) != 0)
			free(dup);
	}
	free(line);
	fclose(f);
}

static int index_write(struct archive *a)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/index", a->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = mt_open_output(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		mt_error("cannot create '%s': %s", tmp, mt_open_output_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fputs("# mt archive 1\n# build-id\tkind\tbytes\toriginal path\n", f);
	for (size_t i = 0; i < a->n; i++)
		fprintf(f, "%s\t%s\t%" PRIu64 "\t%s\n", a->v[i].id, a->v[i].kind, a->v[i].bytes,
			a->v[i].path);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		mt_error("cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		mt_error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Open src for reading if it is a regular file (symbolic links resolved
 * first, the file itself not followed; under /proc only the kernel can
 * follow them), the one of device dev and inode ino when ino is not 0.
 * @return : the fd, or -1 (said). */
static int open_source(const char *src, uint64_t dev, uint64_t ino, struct stat *st)
{
	char *real = NULL;
	int proc = strncmp(src, "/proc/", 6) == 0;
	if (!proc && !(real = realpath(src, NULL))) {
		mt_error("cannot open '%s': %s", src, strerror(errno));
		return -1;
	}
	int fd = open(real ? real : src, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
		      (proc ? 0 : O_NOFOLLOW));
	int err = errno;
	free(real);
	if (fd < 0) {
		mt_error("cannot open '%s': %s", src, strerror(err));
		return -1;
	}
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		mt_error("cannot archive '%s': not a regular file", src);
		close(fd);
		return -1;
	}
	if (ino && ((uint64_t)st->st_dev != dev || (uint64_t)st->st_ino != ino)) {
		mt_error("cannot archive '%s': replaced since mt-unwind read it", src);
		close(fd);
		return -1;
	}
	return fd;
}

/* Copy src into DIR/.build-id/XX/REST[suffix], where id is XXREST.
 * @return : 1 copied, 0 already there, -1 failed (said). */
static int copy_in(struct archive *a, const char *id, const char *suffix, int kind,
		   const char *src, uint64_t dev, uint64_t ino)
{
	char dir[PATH_MAX + 16], dst[PATH_MAX + 160], tmp[PATH_MAX + 176], why[8192];
	if (snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", a->dir, id) >= (int)sizeof(dir) ||
	    snprintf(dst, sizeof(dst), "%s/%s%s", dir, id + 2, suffix) >= (int)sizeof(dst))
		return mt_error("'%s': path too long", a->dir);
	struct stat st, dst_st;
	int in = open_source(src, dev, ino, &st);
	if (in < 0)
		return -1;
	if (lstat(dst, &dst_st) == 0 && S_ISREG(dst_st.st_mode) &&
	    dst_st.st_size == st.st_size) {
		close(in);
		a->there++;
		goto indexed;
	}
	int r = mt_mkdirs_trusted(dir, why, sizeof(why));
	if (r != 1) {
		close(in);
		return mt_error("cannot use '%s': %s", dir, why);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	int out = mt_open_output(tmp);
	if (out < 0) {
		close(in);
		return mt_error("cannot create '%s': %s", tmp, mt_open_output_strerror(errno));
	}
	char buf[1 << 16];
	ssize_t n;
	uint64_t done = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				int e = errno;
				close(in);
				close(out);
				unlink(tmp);
				return mt_error("cannot write '%s': %s", tmp, strerror(e));
			}
			off += w;
		}
		done += (uint64_t)n;
	}
	int rerr = n < 0 ? errno : 0;
	close(in);
	if (rerr || done != (uint64_t)st.st_size) {
		close(out);
		unlink(tmp);
		return mt_error("cannot read '%s': %s", src,
				rerr ? strerror(rerr) : "its size changed while it was copied");
	}
	if (close(out) != 0 || rename(tmp, dst) != 0) {
		int e = errno;
		unlink(tmp);
		return mt_error("cannot write '%s': %s", dst, strerror(e));
	}
	a->added[kind]++;
	a->added_bytes[kind] += done;
indexed:;
	char *esc = escape(src);
	if (!esc || entry_put(a, id, kinds[kind], (uint64_t)st.st_size, esc) != 0) {
		free(esc);
		return mt_error("out of memory");
	}
	return 1;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

int mt_cmd_archive(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL;
	int quiet = 0, c;
	while ((c = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': mt_help_archive(stdout); return MT_EXIT_OK;
		default: return mt_usage_hint(SYNOPSIS);
		}
	}
	if (optind + 1 != argc) {
		mt_error("%s", optind >= argc ? "no capture given" : "more than one capture given");
		return mt_usage_hint(SYNOPSIS);
	}
	if (!out || !*out) {
		mt_error("no archive directory given (-o DIR)");
		return mt_usage_hint(SYNOPSIS);
	}
	const char *file = argv[optind];
	char why[8192], abs[PATH_MAX - 64];
	if (mt_path_absolute(out, abs, sizeof(abs)) < 0) {
		if (errno == ENAMETOOLONG)
			mt_error("'%s': path too long", out);
		else
			mt_error("cannot find the current directory: %s", strerror(errno));
		return MT_EXIT_ENV;
	}
	int r = mt_mkdirs_trusted(abs, why, sizeof(why));
	if (r != 1) {
		mt_error("cannot use '%s': %s", out, why);
		return MT_EXIT_ENV;
	}
	char *unwind = mt_front_stage("mt-unwind");
	if (!unwind)
		return MT_EXIT_ENV;
	char list[PATH_MAX + 64];
	snprintf(list, sizeof(list), "%s/.modules.%ld.tmp", abs, (long)getpid());
	char *uargv[] = { unwind, "--srcline", "-q", "--list-modules", list, "-o", "/dev/null",
			  (char *)file, NULL };
	pid_t pid = mt_front_spawn(uargv, -1, -1, NULL, 0, NULL, 0);
	int status = pid < 0 ? MT_EXIT_ENV : mt_front_wait(pid, "mt-unwind", 0);
	free(unwind);
	FILE *f = fopen(list, "re");
	if (!f) {
		if (status == MT_EXIT_OK) {
			mt_error("mt-unwind wrote no module list '%s': %s", list, strerror(errno));
			status = MT_EXIT_ENV;
		}
		return status;	/* mt-unwind said why */
	}
	unlink(list);
	struct archive a = { .dir = abs };
	index_read(&a);
	unsigned modules = 0, failed = 0, unusable = 0, no_id = 0, vdso = 0, anon = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[0] == '#')
			continue;
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		char *fld[9];
		int nf = 0;
		for (char *p = line; nf < 9; nf++) {
			fld[nf] = p;
			char *t = strchr(p, '\t');
			if (!t) {
				nf++;
				break;
			}
			*t = '\0';
			p = t + 1;
		}
		if (nf != 9) {
			mt_error("'%s': a line of mt-unwind's module list has %d fields, not 9",
				 file, nf);
			failed++;
			continue;
		}
		for (int i = 4; i < 9; i++)
			unescape(fld[i]);
		const char *id = fld[0], *state = fld[1], *path = fld[4], *opened = fld[5],
			   *debug = fld[6], *alt_id = fld[7], *alt = fld[8];
		uint64_t dev = strtoull(fld[2], NULL, 10), ino = strtoull(fld[3], NULL, 10);
		if (!strcmp(path, "[vdso]")) {
			vdso++;
			continue;
		}
		if (path[0] != '/' || !strncmp(path, "//anon", 6)) {
			anon++;		/* no file: JIT code, [vsyscall] */
			continue;
		}
		if (strcmp(state, "ok") != 0) {
			mt_warn("'%s' not archived: mt-unwind cannot use it (%s)", path, state);
			unusable++;
			continue;
		}
		if (strlen(id) < 3) {
			mt_warn("'%s' not archived: it has no build-id, by which mt-unwind --symfs"
				" finds modules", path);
			no_id++;
			continue;
		}
		modules++;
		if (copy_in(&a, id, "", 0, opened, dev, ino) < 0)
			failed++;
		if (*debug && copy_in(&a, id, ".debug", 1, debug, 0, 0) < 0)
			failed++;
		if (*alt_id && !*alt) {
			mt_warn("'%s': its DWARF refers to a dwz file of build-id %s that was not"
				" found: not archived", path, alt_id);
			failed++;
		} else if (*alt_id && strlen(alt_id) > 2 &&
			   copy_in(&a, alt_id, ".debug", 2, alt, 0, 0) < 0) {
			failed++;
		}
	}
	free(line);
	fclose(f);
	if (index_write(&a) != 0)
		failed++;
	uint64_t total = 0;
	for (size_t i = 0; i < a.n; i++)
		total += a.v[i].bytes;
	if (!quiet) {
		char dwz[96] = "";
		if (a.added[2])
			snprintf(dwz, sizeof(dwz), ", %" PRIu64 " dwz files (%.1f MiB)", a.added[2],
				 mib(a.added_bytes[2]));
		mt_info("'%s': %u modules of '%s': copied %" PRIu64 " ELF files (%.1f MiB), %"
			PRIu64 " debug files (%.1f MiB)%s, %" PRIu64 " there already; the"
			" archive holds %zu files, %.1f MiB", out, modules, file, a.added[0],
			mib(a.added_bytes[0]), a.added[1], mib(a.added_bytes[1]), dwz, a.there,
			a.n, mib(total));
		if (unusable || no_id || vdso || anon)
			mt_info("not archived: %u modules mt-unwind cannot use, %u without a"
				" build-id, %u vdso (mt-unwind uses the running kernel's), %u"
				" mappings of no file", unusable, no_id, vdso, anon);
	}
	for (size_t i = 0; i < a.n; i++)
		free(a.v[i].path);
	free(a.v);
	if (failed) {
		mt_error("%u files could not be archived", failed);
		return MT_EXIT_ENV;
	}
	return status;
}
