/* Recursive descent over RFC 8259, for checking mt-fold's JSON in tests. */
#include "tests/fold/json_min.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ps {
	const char *p;
	char *err;
};

static void ws(struct ps *s)
{
	while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
		s->p++;
}

static int fail(struct ps *s, const char *what)
{
	if (!s->err[0])
		snprintf(s->err, 256, "%s at '%.20s'", what, s->p);
	return -1;
}

static int put_utf8(char *out, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | cp >> 6);
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | cp >> 12);
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | cp >> 18);
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
	return 0;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static char *parse_string(struct ps *s)
{
	if (*s->p != '"') {
		fail(s, "expected string");
		return NULL;
	}
	s->p++;
	size_t cap = strlen(s->p) * 4 + 1, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	while (*s->p != '"') {
		unsigned char c = (unsigned char)*s->p;
		if (!c || c < 0x20) {
			fail(s, "bad character in string");
			free(out);
			return NULL;
		}
		if (c != '\\') {
			out[n++] = (char)c;
			s->p++;
			continue;
		}
		s->p++;
		char e = *s->p++;
		unsigned cp;
		switch (e) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case '/': out[n++] = '/'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u':
			if (hex4(s->p, &cp)) {
				fail(s, "bad \\u escape");
				free(out);
				return NULL;
			}
			s->p += 4;
			put_utf8(out, &n, cp);
			break;
		default:
			fail(s, "bad escape");
			free(out);
			return NULL;
		}
	}
	s->p++;
	out[n] = 0;
	return out;
}

static int parse_value(struct ps *s, struct jm *j, int depth);

static int parse_seq(struct ps *s, struct jm *j, int depth, char close, int obj)
{
	size_t cap = 0;
	s->p++;
	ws(s);
	if (*s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		if (j->nkids == cap) {
			cap = cap ? cap * 2 : 8;
			struct jm *k = realloc(j->kids, cap * sizeof(*k));
			if (!k)
				return -1;
			j->kids = k;
		}
		struct jm *kid = &j->kids[j->nkids];
		memset(kid, 0, sizeof(*kid));
		ws(s);
		if (obj) {
			kid->key = parse_string(s);
			if (!kid->key)
				return -1;
			ws(s);
			if (*s->p != ':')
				return fail(s, "expected ':'");
			s->p++;
		}
		j->nkids++;
		if (parse_value(s, kid, depth + 1))
			return -1;
		ws(s);
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p == close) {
			s->p++;
			return 0;
		}
		return fail(s, "expected ',' or end");
	}
}

static int parse_value(struct ps *s, struct jm *j, int depth)
{
	if (depth > 64)
		return fail(s, "too deep");
	ws(s);
	char c = *s->p;
	if (c == '{') {
		j->type = JM_OBJ;
		return parse_seq(s, j, depth, '}', 1);
	}
	if (c == '[') {
		j->type = JM_ARR;
		return parse_seq(s, j, depth, ']', 0);
	}
	if (c == '"') {
		j->type = JM_STR;
		j->str = parse_string(s);
		return j->str ? 0 : -1;
	}
	if (!strncmp(s->p, "true", 4) || !strncmp(s->p, "false", 5)) {
		j->type = JM_BOOL;
		j->num = c == 't';
		s->p += c == 't' ? 4 : 5;
		return 0;
	}
	if (!strncmp(s->p, "null", 4)) {
		j->type = JM_NULL;
		s->p += 4;
		return 0;
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		/* JSON numbers: no leading '+', no inf/nan, no hex */
		const char *q = s->p + (c == '-');
		if (!(*q >= '0' && *q <= '9'))
			return fail(s, "bad number");
		char *end;
		j->type = JM_NUM;
		j->num = strtod(s->p, &end);
		for (const char *r = s->p; r < end; r++)
			if (!strchr("0123456789+-.eE", *r))
				return fail(s, "bad number");
		s->p = end;
		return 0;
	}
	return fail(s, "unexpected character");
}

struct jm *jm_parse(const char *text, char *err)
{
	struct ps s = { text, err };
	struct jm *j = calloc(1, sizeof(*j));
	err[0] = 0;
	if (!j)
		return NULL;
	if (parse_value(&s, j, 0) == 0) {
		ws(&s);
		if (!*s.p)
			return j;
		fail(&s, "trailing text");
	}
	jm_free(j);
	return NULL;
}

static void jm_release(struct jm *j)
{
	for (size_t i = 0; i < j->nkids; i++)
		jm_release(&j->kids[i]);
	free(j->kids);
	free(j->str);
	free(j->key);
}

void jm_free(struct jm *j)
{
	if (!j)
		return;
	jm_release(j);
	free(j);
}

const struct jm *jm_get(const struct jm *obj, const char *key)
{
	if (!obj || obj->type != JM_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->nkids; i++)
		if (obj->kids[i].key && strcmp(obj->kids[i].key, key) == 0)
			return &obj->kids[i];
	return NULL;
}
