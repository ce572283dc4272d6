/* Text tables fitted to a width: see table.h. */
#include "fold/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fold/width.h"

int mt_fold_table_row(struct mt_fold_table *t)
{
	if (t->rows == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 16;
		void *n = realloc(t->cell, ncap * (size_t)t->cols * sizeof(*t->cell));
		if (!n) {
			t->lost = 1;
			return -1;
		}
		t->cell = n;
		t->cap = ncap;
	}
	t->lost = 0;
	memset(t->cell + t->rows * (size_t)t->cols, 0, (size_t)t->cols * sizeof(*t->cell));
	t->rows++;
	return 0;
}

void mt_fold_table_put_at(struct mt_fold_table *t, size_t row, int col, const char *s)
{
	if (row >= t->rows || col < 0 || col >= t->cols)
		return;
	char **c = &t->cell[row * (size_t)t->cols + (size_t)col];
	free(*c);
	*c = strdup(s);	/* out of memory: the cell stays empty */
}

void mt_fold_table_put(struct mt_fold_table *t, int col, const char *s)
{
	if (!t->lost && t->rows)	/* a row not started: nowhere */
		mt_fold_table_put_at(t, t->rows - 1, col, s);
}

void mt_fold_table_putf(struct mt_fold_table *t, int col, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mt_fold_table_put(t, col, buf);
}

static const char *cell(const struct mt_fold_table *t, size_t r, int c)
{
	const char *s = t->cell[r * (size_t)t->cols + (size_t)c];
	return s ? s : "";
}

static size_t cell_width(const struct mt_fold_table *t, size_t r, int c)
{
	const char *s = cell(t, r, c);
	return mt_fold_text_width(s, strlen(s));
}

/* Which columns and rows a (sub-)table prints. */
struct part {
	int col[MT_FOLD_TABLE_COLS];
	const unsigned char *row;	/* NULL: every row */
};

static void widths(const struct mt_fold_table *t, const struct part *p, size_t *w)
{
	for (int c = 0; c < t->cols; c++) {
		w[c] = 0;
		if (!p->col[c])
			continue;
		for (size_t r = 0; r < t->rows; r++) {
			size_t n = p->row && !p->row[r] ? 0 : cell_width(t, r, c);
			if (n > w[c])
				w[c] = n;
		}
	}
}

/* The width of a line of the columns shown whose 'L'-ness is wrapped (1:
 * the 'L' ones, 0: the others, -1: all), without the column skip. */
static size_t line_width(const struct mt_fold_table *t, const struct part *p, const size_t *w,
			 int wrapped, int skip)
{
	size_t all = t->indent;
	int first = 1;
	for (int c = 0; c < t->cols; c++) {
		if (!p->col[c] || c == skip || (wrapped >= 0 && (t->align[c] == 'L') != wrapped))
			continue;
		all += (first ? 0 : t->align[c] == 'L' && wrapped < 0 ? 1 : 2) + w[c];
		first = 0;
	}
	return all;
}

/* A growing line, written without its trailing spaces. */
struct out {
	char *b;
	size_t len, cap;
};

static void add(struct out *o, const char *s, size_t n, size_t pad_before)
{
	if (o->len + n + pad_before + 1 > o->cap) {
		size_t ncap = (o->len + n + pad_before + 1) * 2;
		char *nb = realloc(o->b, ncap);
		if (!nb)
			return;	/* out of memory: the line is cut */
		o->b = nb;
		o->cap = ncap;
	}
	memset(o->b + o->len, ' ', pad_before);
	memcpy(o->b + o->len + pad_before, s, n);
	o->len += pad_before + n;
}

static void flush(FILE *f, struct out *o)
{
	while (o->len && o->b && o->b[o->len - 1] == ' ')
		o->len--;
	if (o->len)
		fwrite(o->b, 1, o->len, f);
	fputc('\n', f);
	o->len = 0;
}

/* Row r's columns as line_width counts them, lead spaces first. */
static void table_line(FILE *f, struct out *o, const struct mt_fold_table *t,
		       const struct part *p, size_t r, const size_t *w, int wrapped, size_t lead)
{
	int first = 1;
	add(o, "", 0, lead);
	for (int c = 0; c < t->cols; c++) {
		if (!p->col[c] || (wrapped >= 0 && (t->align[c] == 'L') != wrapped))
			continue;
		const char *x = cell(t, r, c);
		size_t n = strlen(x), cw = cell_width(t, r, c), gap = w[c] - cw;
		size_t sep = first ? 0 : t->align[c] == 'L' && wrapped < 0 ? 1 : 2;
		first = 0;
		if (t->align[c] == 'r') {
			add(o, x, n, sep + gap);
		} else {
			add(o, x, n, sep);
			add(o, "", 0, gap);
		}
	}
	flush(f, o);
}

static void print_part(FILE *f, const struct mt_fold_table *t, const struct part *p,
		       size_t width)
{
	size_t w[MT_FOLD_TABLE_COLS];
	widths(t, p, w);
	int split = width && line_width(t, p, w, -1, -1) > width, has_l = 0;
	for (int c = 0; c < t->cols; c++)
		has_l |= p->col[c] && t->align[c] == 'L';
	split &= has_l;
	struct out o = { 0 };
	for (size_t r = 0; r < t->rows; r++) {
		if (p->row && !p->row[r])
			continue;
		table_line(f, &o, t, p, r, w, split ? 0 : -1, t->indent);
		if (split)
			table_line(f, &o, t, p, r, w, 1, t->indent + w[0] + 2);
	}
	free(o.b);
}

size_t mt_fold_table_room(const struct mt_fold_table *t, size_t width, size_t want)
{
	struct part p = { .row = NULL };
	size_t w[MT_FOLD_TABLE_COLS];
	int last = t->cols - 1;
	if (!width)
		return 0;
	for (int c = 0; c < t->cols; c++)
		p.col[c] = 1;
	widths(t, &p, w);
	/* the others and the separator before the last column */
	size_t beside = line_width(t, &p, w, -1, last) + 2;
	if (beside + want <= width)
		return width - beside;
	size_t split = line_width(t, &p, w, 0, last) + 2;
	return width > split ? width - split : 1;
}

void mt_fold_table_print(FILE *f, struct mt_fold_table *t, size_t width)
{
	struct part p = { .row = NULL };
	size_t w[MT_FOLD_TABLE_COLS];
	for (int c = 0; c < t->cols; c++)
		p.col[c] = 1;
	widths(t, &p, w);
	unsigned char *rows = t->group ? malloc(t->rows + 1) : NULL;
	if (!width || !rows || line_width(t, &p, w, -1, -1) <= width) {
		print_part(f, t, &p, width);
	} else {
		int blank = 0;
		for (char g = '1'; g <= '9'; g++) {
			int any = 0;
			for (int c = 0; c < t->cols; c++) {
				p.col[c] = t->group[c] == '0' || t->group[c] == g;
				any |= t->group[c] == g;
			}
			if (!any)
				continue;
			for (size_t r = 0; r < t->rows; r++) {
				rows[r] = 0;
				for (int c = 0; c < t->cols; c++)
					rows[r] |= t->group[c] == g && *cell(t, r, c);
			}
			p.row = rows;
			if (blank)
				fputc('\n', f);
			print_part(f, t, &p, width);
			blank = 1;
		}
	}
	free(rows);
	for (size_t i = 0; i < t->rows * (size_t)t->cols; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->rows = t->cap = 0;
}
