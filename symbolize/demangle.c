/* Demangling; see demangle.h. */
#include "symbolize/demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* libstdc++'s demangler (abi::__cxa_demangle), C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Template functions carry their return type: "int ns::f<double>".  Drop
 * everything up to the last space outside <> and (), unless that space
 * belongs to "operator new" and the like. */
static void strip_return_type(char *s)
{
	int depth = 0;
	char *cut = NULL;
	for (char *p = s; *p; p++) {
		if (*p == '<' || *p == '(' || *p == '[')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == ']') && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0 &&
			 !(p - s >= 8 && strncmp(p - 8, "operator", 8) == 0))
			cut = p;
	}
	if (cut)
		memmove(s, cut + 1, strlen(cut + 1) + 1);
}

/* Cut the trailing "(params) qualifiers" at the parenthesis matching the
 * last ')'. */
static void strip_params(char *s)
{
	size_t n = strlen(s);
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			if (ends_with(s, n, quals[i])) {
				n -= strlen(quals[i]);
				again = 1;
			}
	}
	if (n == 0 || s[n - 1] != ')')
		return;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0) {
			if (i > 0)
				s[i] = '\0';
			break;
		}
	}
	strip_return_type(s);
}

char *mt_unwind_demangle(const char *name)
{
	/* Rust, v0 (_R...) and legacy (_ZN...17h<hash>E, which rust_demangle
	 * alone tells from C++): libiberty's demangler, without the hash. */
	if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
		char *d = rust_demangle(name, 0);
		if (d || name[1] == 'R')
			return d;
	}
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return NULL;
	}
	/* GCC's clones ("f(int) [clone .cold]") keep their mark, after the
	 * name: "f [clone .cold]".  The name before it is cut in place, and
	 * only gets shorter: the mark moves down to its new end. */
	char *clone = strstr(d, " [clone ");
	if (clone)
		*clone = '\0';
	strip_params(d);
	if (clone) {
		size_t n = strlen(d);
		*clone = ' ';
		memmove(d + n, clone, strlen(clone) + 1);
	}
	return d;
}
