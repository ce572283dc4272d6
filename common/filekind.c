/* common/filekind.h: telling mt's files apart by their first bytes. */
#include "common/filekind.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"

/* A whole first line "STACK COUNT": printable, no TAB, a space, digits. */
static int is_folded(const char *s, size_t n)
{
	const char *nl = memchr(s, '\n', n);
	if (!nl)
		return 0;
	const char *d = nl;
	while (d > s && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == nl || d - s < 2 || d[-1] != ' ')
		return 0;
	for (const char *c = s; c < d - 1; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return 0;
	return 1;
}

enum mt_file_kind mt_file_kind(const void *p, size_t n)
{
	static const char mtz[8] = "\x89MTZ\r\n\x1a\n", perf[8] = "PERFILE2";
	static const char text[] = "# mt-unwind ";
	if (n == 0)
		return MT_FILE_EMPTY;
	if (n >= sizeof(mtz) && memcmp(p, mtz, sizeof(mtz)) == 0)
		return MT_FILE_MTZ;
	if (n >= 16 && memcmp(p, perf, sizeof(perf)) == 0)	/* then the header's size */
		return mt_ld64((const char *)p + 8) == 16 ? MT_FILE_PERF_PIPE : MT_FILE_PERF_DATA;
	if (n >= sizeof(text) - 1 && memcmp(p, text, sizeof(text) - 1) == 0)
		return MT_FILE_UNWIND_TEXT;
	return is_folded(p, n) ? MT_FILE_FOLDED : MT_FILE_OTHER;
}

int mt_file_kind_peek(const char *path, enum mt_file_kind *kind)
{
	unsigned char head[MT_FILE_KIND_LINE];
	struct stat st;
	if (strcmp(path, "-") == 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof(head), 0)
							       : -1;
	close(fd);
	if (n < 0)
		return -1;
	*kind = mt_file_kind(head, (size_t)n);
	return 0;
}

const char *mt_file_kind_str(enum mt_file_kind kind)
{
	switch (kind) {
	case MT_FILE_EMPTY: return "an empty file";
	case MT_FILE_MTZ: return "an .mtz file";
	case MT_FILE_PERF_DATA: return "a perf.data file";
	case MT_FILE_PERF_PIPE: return "a perf pipe stream";
	case MT_FILE_UNWIND_TEXT: return "mt-unwind output";
	case MT_FILE_FOLDED: return "collapsed stacks (mt-fold output)";
	case MT_FILE_OTHER: break;
	}
	return "not a file mt reads";
}
