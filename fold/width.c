/* Fitting text to a width: see width.h. */
#include "fold/width.h"

#include <stdarg.h>

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

size_t mt_fold_text_width(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* Byte length of the first `cols` columns of s[0..len). */
static size_t prefix_bytes(const char *s, size_t len, size_t cols)
{
	size_t i = 0, w = 0;
	while (i < len) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == cols)
				break;
			w++;
		}
		i++;
	}
	return i;
}

/* Does s[0..i) end with "operator"? */
static int after_operator(const char *s, size_t i)
{
	return i >= 8 && memcmp(s + i - 8, "operator", 8) == 0;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

size_t mt_fold_collapse_templates(char *out, const char *s, size_t len)
{
	size_t o = 0, i = 0;
	while (i < len) {
		char c = s[i];
		if ((c == '<' || c == '>') && after_operator(s, i)) {
			/* operator<, <<, <=, <=>, >, >>, >= : copy the operator */
			while (i < len && (s[i] == '<' || s[i] == '>' || s[i] == '='))
				out[o++] = s[i++];
			continue;
		}
		if (c == '>' && i > 0 && s[i - 1] == '-') {	/* operator-> */
			out[o++] = s[i++];
			continue;
		}
		if (c != '<') {
			out[o++] = s[i++];
			continue;
		}
		/* a template argument list: find its matching '>' */
		size_t j = i + 1;
		int depth = 1;
		while (j < len && depth) {
			if (s[j] == '<')
				depth++;
			else if (s[j] == '>' && !(s[j - 1] == '-'))
				depth--;
			j++;
		}
		if (depth) {	/* unbalanced: keep the rest as it is */
			memcpy(out + o, s + i, len - i);
			o += len - i;
			break;
		}
		out[o++] = '<';
		out[o++] = '>';
		i = j;
	}
	out[o] = 0;
	return o;
}

size_t mt_fold_drop_params(char *out, const char *s, size_t len)
{
	size_t o = 0, i = 0;
	while (i < len) {
		char c = s[i];
		int starts = c == '(' && i > 0 && (is_ident(s[i - 1]) || s[i - 1] == '>' ||
						    s[i - 1] == ']' ||
						    (i >= 10 && memcmp(s + i - 10, "operator()", 10) == 0));
		if (starts && after_operator(s, i)) {	/* operator() */
			starts = 0;
		}
		if (!starts) {
			out[o++] = s[i++];
			continue;
		}
		size_t j = i + 1;
		int depth = 1;
		while (j < len && depth) {
			depth += s[j] == '(';
			depth -= s[j] == ')';
			j++;
		}
		if (depth) {
			memcpy(out + o, s + i, len - i);
			o += len - i;
			break;
		}
		i = j;
	}
	out[o] = 0;
	return o;
}

size_t mt_fold_cut_end(char *out, const char *s, size_t len, size_t width)
{
	if (mt_fold_text_width(s, len) <= width) {
		memcpy(out, s, len);
		out[len] = 0;
		return len;
	}
	size_t keep = width > 3 ? prefix_bytes(s, len, width - 3) : 0;
	memcpy(out, s, keep);
	memcpy(out + keep, "...", 3);
	out[keep + 3] = 0;
	return keep + 3;
}

size_t mt_fold_elide_middle(char *out, const char *s, size_t len, size_t width)
{
	size_t w = mt_fold_text_width(s, len);
	if (w <= width || width <= 3)
		return width <= 3 && w > width ? mt_fold_cut_end(out, s, len, width)
					       : mt_fold_cut_end(out, s, len, w);
	size_t room = width - 3, head = (room + 1) / 2, tail = room - head;
	size_t hb = prefix_bytes(s, len, head), tb = prefix_bytes(s, len, w - tail);
	memcpy(out, s, hb);
	memcpy(out + hb, "...", 3);
	memcpy(out + hb + 3, s + tb, len - tb);
	out[hb + 3 + len - tb] = 0;
	return hb + 3 + len - tb;
}

size_t mt_fold_fit_frame(char *out, size_t cap, const char *name, size_t nlen,
			 const char *loc, size_t llen, size_t width)
{
	char *a = malloc(nlen + 1), *b = malloc(nlen + 1), *l = malloc(llen + 4);
	size_t n = 0;
	if (!a || !b || !l) {	/* no room to shorten in: cut what there is */
		n = nlen < cap - 1 ? nlen : cap - 1;
		memcpy(out, name, n);
		out[n] = 0;
		goto out;
	}
	if (!loc)
		llen = 0;
	memcpy(a, name, nlen);
	a[nlen] = 0;
	memcpy(l, loc ? loc : "", llen);
	l[llen] = 0;
	size_t alen = nlen, lw = mt_fold_text_width(l, llen);
	size_t extra = llen ? lw + 3 : 0;	/* " (" and ")" */
	if (width) {
		if (mt_fold_text_width(a, alen) + extra > width) {
			alen = mt_fold_collapse_templates(b, a, alen);
			memcpy(a, b, alen + 1);
		}
		if (mt_fold_text_width(a, alen) + extra > width) {
			alen = mt_fold_drop_params(b, a, alen);
			memcpy(a, b, alen + 1);
		}
		size_t aw = mt_fold_text_width(a, alen);
		if (llen && aw + extra > width) {
			/* elide the middle of the file name, keep ":line" whole */
			const char *colon = memrchr(l, ':', llen);
			size_t fl = colon ? (size_t)(colon - l) : llen, tail = llen - fl;
			size_t room = width > aw + 3 + tail ? width - aw - 3 - tail : 0;
			if (room < 12)	/* a file name needs a dozen columns */
				room = 12;
			if (mt_fold_text_width(l, fl) > room) {
				char *t = malloc(llen + 4);
				if (t) {
					size_t k = mt_fold_elide_middle(t, l, fl, room);
					memcpy(t + k, l + fl, tail);
					llen = k + tail;
					t[llen] = 0;
					memcpy(l, t, llen + 1);
					free(t);
				}
			}
			lw = mt_fold_text_width(l, llen);
			extra = lw + 3;
		}
		if (aw + extra > width) {
			size_t room = width > extra ? width - extra : 0;
			/* a name cut below 20 columns says less than its place:
			 * drop the place first */
			if (room < 20 && room < aw) {
				llen = 0;
				extra = 0;
				room = width;
			}
			alen = mt_fold_cut_end(b, a, alen, room);
			memcpy(a, b, alen + 1);
		}
	}
	n = (size_t)snprintf(out, cap, llen ? "%s (%s)" : "%s", a, l);
	if (n >= cap)
		n = cap - 1;
out:
	free(a);
	free(b);
	free(l);
	return n;
}

void mt_fold_wrap(FILE *f, const char *text, size_t width, size_t indent)
{
	size_t col = 0;
	const char *p = text;
	int first = 1;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p), w = mt_fold_text_width(p, len);
		if (!first && width && col + 1 + w > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, len, f);
		col += w;
		first = 0;
		p += len;
	}
	fputc('\n', f);
}

size_t mt_fold_resolve_width(long opt, int wide, const char *columns, int fd)
{
	size_t w = 80;
	if (wide)
		return 0;
	if (opt > 0) {
		w = (size_t)opt;
	} else {
		char *end;
		long c = columns && *columns ? strtol(columns, &end, 10) : 0;
		struct winsize ws;
		if (c > 0 && !*end && columns[0] != '+' && columns[0] != ' ')
			w = (size_t)c;
		else if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
			w = ws.ws_col;
	}
	return w < MT_FOLD_MIN_WIDTH ? MT_FOLD_MIN_WIDTH : w;
}

void mt_fold_say(FILE *f, size_t width, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mt_fold_wrap(f, buf, width, 2);
}
