/* Small text tables fitted to a width, for the report and memory views.
 *
 * Columns are as wide as their widest cell (display columns), two spaces
 * apart, 'l' left- or 'r' right-aligned, or 'L': an interval, one space
 * after the column before it (its estimate).  Lines never end in spaces.
 *
 * When a row is wider than the width (0: no limit), in two steps:
 *  - a table with column groups (group[c] '0' for the columns every row
 *    starts with, '1'...'9' for the others) is printed as one table per
 *    group, each with the columns of group 0, a blank line between them,
 *    without the rows whose cells of that group are all empty;
 *  - in a table still too wide, the 'L' columns go to a line of their own
 *    under each row, indented past its first column.
 */
#ifndef MT_FOLD_TABLE_H
#define MT_FOLD_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define MT_FOLD_TABLE_COLS 16

struct mt_fold_table {
	char **cell;		/* rows * cols, malloc'd or NULL (empty) */
	size_t rows, cap;
	int cols;		/* at most MT_FOLD_TABLE_COLS */
	const char *align;	/* cols letters: 'l', 'r', 'L' */
	const char *group;	/* cols digits, or NULL: no groups */
	size_t indent;		/* spaces before every line */
	int lost;		/* the last row could not be started */
};

/* Start a row of empty cells.  @return : 0, or -1 when out of memory (the
 * row is left out, and puts until the next row go nowhere). */
int mt_fold_table_row(struct mt_fold_table *t);

/* Set cell col of the last row (of row) to a copy of s (printf-formatted). */
void mt_fold_table_put(struct mt_fold_table *t, int col, const char *s);
void mt_fold_table_put_at(struct mt_fold_table *t, size_t row, int col, const char *s);
void mt_fold_table_putf(struct mt_fold_table *t, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The columns the last column's cells may take for every row to fit width
 * (0 when width is 0: no limit), its other cells set: the width left
 * beside the other columns, or when want columns would not fit there, the
 * width left on a line whose 'L' columns went under it (groups aside). */
size_t mt_fold_table_room(const struct mt_fold_table *t, size_t width, size_t want);

/* Print the table fitted to width (0: no limit) and empty it. */
void mt_fold_table_print(FILE *f, struct mt_fold_table *t, size_t width);

#endif
