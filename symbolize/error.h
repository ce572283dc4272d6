/* The errors of the unwinding library (symbolize/), one convention for
 * all of it: a function that can fail returns 0 (or a count, or a file
 * descriptor) on success and a negative MT_UNWIND_E* code on failure, which
 * mt_unwind_strerror() names.  Only the program prints.  A lookup that may
 * find nothing says so in its contract (NULL, 0, a "found" flag): finding
 * nothing is not an error. */
#ifndef MT_UNWIND_ERROR_H
#define MT_UNWIND_ERROR_H

enum {
	MT_UNWIND_OK = 0,
	MT_UNWIND_ENOMEM = -1,
	MT_UNWIND_EIO = -2,	/* a file cannot be opened, read or written (errno kept) */
	MT_UNWIND_EFORMAT = -3,	/* data of a kind or form the code does not take */
	MT_UNWIND_ERANGE = -4,	/* an address outside what holds it (a dump, a segment) */
};

/* @return : a static message for an MT_UNWIND_E* code. */
const char *mt_unwind_strerror(int err);

#endif
