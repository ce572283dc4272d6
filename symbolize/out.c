/* Buffered output; see out.h. */
#include "symbolize/out.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define OUT_CHUNK (256 * 1024)

void mt_unwind_out_init_fd(struct mt_unwind_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
}

void mt_unwind_out_init_mem(struct mt_unwind_out *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = -2;
}

int mt_unwind_out_flush(struct mt_unwind_out *o)
{
	if (o->fd == -1)
		o->len = 0;
	if (o->fd < 0)
		return o->error ? MT_UNWIND_EIO : 0;
	size_t done = 0;
	while (done < o->len && !o->error) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->error = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	o->len = 0;
	return o->error ? MT_UNWIND_EIO : 0;
}

void mt_unwind_out_grow(struct mt_unwind_out *o, size_t n)
{
	if (o->error)
		return;
	if (o->fd != -2 && o->len)
		mt_unwind_out_flush(o);
	if (o->cap - o->len >= n)
		return;
	size_t cap = o->cap ? o->cap : (o->fd == -2 ? 256 : OUT_CHUNK);
	while (cap - o->len < n)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b) {
		o->error = ENOMEM;
		return;
	}
	o->buf = b;
	o->cap = cap;
}

char *mt_unwind_out_detach(struct mt_unwind_out *o)
{
	if (o->cap - o->len < 1)	/* room for the NUL */
		mt_unwind_out_grow(o, 1);
	if (o->error) {
		free(o->buf);
		return NULL;
	}
	o->buf[o->len] = '\0';
	char *s = o->buf;
	memset(o, 0, sizeof(*o));
	return s;
}

void mt_unwind_out_release(struct mt_unwind_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

/* Two digits per division: a line has three to five numbers, and the
 * nanosecond times have 14-16 digits. */
static const char two_digits[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

void mt_unwind_out_u64(struct mt_unwind_out *o, uint64_t v)
{
	char tmp[20];
	char *p = tmp + sizeof(tmp);
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		memcpy(p, two_digits + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, two_digits + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	mt_unwind_out_add(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

void mt_unwind_out_x64(struct mt_unwind_out *o, uint64_t v)
{
	char tmp[20];
	int i = sizeof(tmp);
	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	mt_unwind_out_add(o, tmp + i, sizeof(tmp) - (size_t)i);
}
