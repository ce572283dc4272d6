/* Fitting text to a terminal's width: display widths, shortening of
 * function names and file paths, wrapping of prose, and the width to fit.
 *
 * Shortening goes in steps, each only when the text still does not fit:
 * C++ template arguments written <> (nested ones too), parameter lists
 * dropped, the middle of a long file name elided with "...", then the end
 * of the name cut with "..." (the place dropped first when that would
 * leave the name fewer than 20 columns).  Numbers are never passed here: they are
 * never cut.
 */
#ifndef MT_FOLD_WIDTH_H
#define MT_FOLD_WIDTH_H

#include <stddef.h>
#include <stdio.h>

/* The narrowest width the text layouts fit (--width below is refused). */
#define MT_FOLD_MIN_WIDTH 70

/* Columns s[0..len) takes: one per UTF-8 code point (continuation bytes
 * take none). */
size_t mt_fold_text_width(const char *s, size_t len);

/* Copy s[0..len) to out (at least len + 1 bytes) with the arguments of
 * every template written <>: "std::vector<std::pair<int, int>>::push_back"
 * -> "std::vector<>::push_back".  operator<, <<, <=, <=>, ->, > and >> are
 * kept.  @return : the length written (NUL-terminated). */
size_t mt_fold_collapse_templates(char *out, const char *s, size_t len);

/* Copy s[0..len) to out (len + 1 bytes) without parameter lists: a '('
 * right after a name ("f(int)", "{lambda(int)#1}") up to its ')'; kept:
 * "(anonymous namespace)", "operator()".  @return : the length written. */
size_t mt_fold_drop_params(char *out, const char *s, size_t len);

/* Copy s to out, cut to width columns: its end replaced by "..." when
 * longer.  out holds len + 4 bytes.  @return : the length written. */
size_t mt_fold_cut_end(char *out, const char *s, size_t len, size_t width);

/* The same with the middle replaced by "...", keeping the head and the
 * tail ("very_long_source_name.c" -> "very_lo...name.c"). */
size_t mt_fold_elide_middle(char *out, const char *s, size_t len, size_t width);

/* A frame as "NAME (LOC)" (LOC "file:line" may be NULL or empty: "NAME")
 * in at most width columns (0: no limit), shortened in the steps above;
 * the ":line" of LOC is kept whole.  out holds cap bytes (cap > nlen + llen
 * + 8 is always enough).  @return : the length written. */
size_t mt_fold_fit_frame(char *out, size_t cap, const char *name, size_t nlen,
			 const char *loc, size_t llen, size_t width);

/* Write text to f wrapped at spaces into lines of at most width columns
 * (0: one line), continuation lines indented by indent spaces, ending with
 * a newline.  A word longer than a line is written whole. */
void mt_fold_wrap(FILE *f, const char *text, size_t width, size_t indent);

/* A line of prose, printf-formatted (at most 2 KiB), wrapped as
 * mt_fold_wrap does with an indent of 2. */
void mt_fold_say(FILE *f, size_t width, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The width to fit: opt when > 0 (--width), 0 (no limit) when wide, else
 * $COLUMNS when it is a positive decimal, else the terminal's width when fd
 * is a terminal, else 80; at least MT_FOLD_MIN_WIDTH. */
size_t mt_fold_resolve_width(long opt, int wide, const char *columns, int fd);

#endif
