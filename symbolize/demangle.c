/* Demangling; see demangle.h. */
#include "symbolize/demangle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* Rust legacy: "a::b::h0123456789abcdef" with $LT$-style escapes. */
static void rust_legacy(char *s)
{
	size_t n = strlen(s);
	if (n > 19 && memcmp(s + n - 19, "::h", 3) == 0) {
		int hex = 1;
		for (size_t i = n - 16; i < n; i++)
			hex &= isxdigit((unsigned char)s[i]) != 0;
		if (hex)
			s[n - 19] = '\0';
	}
	static const struct { const char *from, *to; } esc[] = {
		{ "$LT$", "<" }, { "$GT$", ">" }, { "$RF$", "&" }, { "$BP$", "*" },
		{ "$C$", "," }, { "$SP$", "@" }, { "$u20$", " " }, { "$u27$", "'" },
		{ "$u5b$", "[" }, { "$u5d$", "]" }, { "$u7b$", "{" }, { "$u7d$", "}" },
		{ "$u7e$", "~" }, { "$u3b$", ";" }, { "$u2b$", "+" }, { "$u22$", "\"" },
	};
	char *w = s;
	for (const char *r = s; *r;) {
		size_t i, k = 0;
		for (i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
			k = strlen(esc[i].from);
			if (strncmp(r, esc[i].from, k) == 0)
				break;
		}
		if (i < sizeof(esc) / sizeof(esc[0])) {
			*w++ = esc[i].to[0];
			r += k;
		} else if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

char *mt_unwind_demangle(const char *name)
{
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return NULL;
	}
	/* Rust legacy symbols end in a 17h<hash>E component. */
	size_t n = strlen(name);
	if (n > 20 && name[n - 1] == 'E' && memcmp(name + n - 20, "17h", 3) == 0)
		rust_legacy(d);
	else
		strip_params(d);
	return d;
}
