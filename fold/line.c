/* One line of mt-unwind text into an event. */
#include "fold/line.h"

#include <string.h>

static const char *const messages[] = {
	[-MT_FOLD_OK] = "success",
	[-MT_FOLD_EFIELDS] = "expected 6 TAB-separated fields",
	[-MT_FOLD_EKIND] = "unknown event kind",
	[-MT_FOLD_EPID] = "PID/TID is not two decimal numbers",
	[-MT_FOLD_ETIME] = "TIME is not a decimal number",
	[-MT_FOLD_EWEIGHT] = "a weight is not key=value",
	[-MT_FOLD_EVALUE] = "bad weight value",
	[-MT_FOLD_EMISSING] = "missing weight",
	[-MT_FOLD_ESTACK] = "STACK does not end in ' end=REASON'",
	[-MT_FOLD_EVERSION] = "unsupported mt-unwind format version (want 1)",
	[-MT_FOLD_ENOMEM] = "out of memory",
	[-MT_FOLD_EIO] = "read error",
	[-MT_FOLD_ESTATE] = "profile already finished",
	[-MT_FOLD_ENUL] = "a NUL byte in the line",
	[-MT_FOLD_ERANGE] = "a figure too large for its output",
};

const char *mt_fold_strerror(int err)
{
	if (err > 0 || -err >= (int)(sizeof(messages) / sizeof(messages[0])) || !messages[-err])
		return "unknown error";
	return messages[-err];
}

/* Decimal u64 at s[0..len); rejects empty, signs, overflow. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* 0xHEX (or a bare 0) into a u64. */
static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	if (len == 1 && s[0] == '0') {
		*out = 0;
		return 0;
	}
	if (len < 3 || len > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	uint64_t v = 0;
	for (size_t i = 2; i < len; i++) {
		unsigned c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static int eq(const char *s, size_t len, const char *lit)
{
	return mt_fold_str_is((struct mt_fold_str){ s, len }, lit);
}

/* Matches the key s[0..klen) against a literal; constant lengths let the
 * compiler turn each test into a word compare. */
#define KEY(lit) (klen == sizeof(lit) - 1 && memcmp(s, lit, sizeof(lit) - 1) == 0)

/* The u64 field of a numeric weight key, with its bit and name, or NULL. */
static uint64_t *numeric_key(const char *s, size_t klen, struct mt_fold_event *ev,
			     unsigned *bit, const char **name)
{
#define NUM(lit, b, field) \
	if (KEY(lit)) { \
		*bit = b; \
		*name = lit; \
		return &ev->field; \
	}
	NUM("size", MT_FOLD_W_SIZE, size)
	NUM("points", MT_FOLD_W_POINTS, points)
	NUM("rate", MT_FOLD_W_RATE, rate)
	NUM("every", MT_FOLD_W_EVERY, every)
	NUM("period", MT_FOLD_W_PERIOD, period)
	NUM("count", MT_FOLD_W_COUNT, count)
	NUM("alloc_bytes", MT_FOLD_W_ALLOC_BYTES, alloc_bytes)
	NUM("allocs", MT_FOLD_W_ALLOCS, allocs)
	NUM("frees", MT_FOLD_W_FREES, frees)
	NUM("freed_bytes", MT_FOLD_W_FREED_BYTES, freed_bytes)
	NUM("peak_bytes", MT_FOLD_W_PEAK_BYTES, peak_bytes)
	NUM("peak_error", MT_FOLD_W_PEAK_ERROR, peak_error)
	NUM("forked", MT_FOLD_W_FORKED, forked)
	NUM("seq", MT_FOLD_W_SEQ, seq)
	NUM("alloc_block_bytes", MT_FOLD_W_BLOCK_BYTES, alloc_block_bytes)
	NUM("rss", MT_FOLD_W_RSS, rss)
	NUM("peak", MT_FOLD_W_PEAK, peak)
	NUM("peak_time", MT_FOLD_W_PEAK_TIME, peak_time)
#undef NUM
	return NULL;
}

/* One key=value pair; unknown keys are accepted and ignored. */
static int parse_weight(const char *s, size_t len, struct mt_fold_event *ev)
{
	const char *eqs = memchr(s, '=', len);
	if (!eqs || eqs == s)
		return MT_FOLD_EWEIGHT;
	size_t klen = (size_t)(eqs - s);
	for (size_t i = 0; i < klen; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
			return MT_FOLD_EWEIGHT;
	const char *val = eqs + 1;
	size_t vlen = len - klen - 1;
	unsigned bit;
	const char *name;

	uint64_t *num = numeric_key(s, klen, ev, &bit, &name);
	if (num) {
		if (parse_u64(val, vlen, num)) {
			ev->bad_key = name;
			return MT_FOLD_EVALUE;
		}
		ev->have |= bit;
		return 0;
	}
	if (KEY("live")) {
		/* signed: a thread that frees what another allocated */
		uint64_t mag;
		int neg = vlen > 1 && val[0] == '-';
		if (parse_u64(val + neg, vlen - (size_t)neg, &mag) ||
		    mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) {
			ev->bad_key = "live";
			return MT_FOLD_EVALUE;
		}
		ev->live = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		ev->have |= MT_FOLD_W_LIVE;
	} else if (KEY("ptr")) {
		if (parse_hex(val, vlen, &ev->ptr)) {
			ev->bad_key = "ptr";
			return MT_FOLD_EVALUE;
		}
		ev->have |= MT_FOLD_W_PTR;
	} else if (KEY("freq")) {
		if (!eq(val, vlen, "0") && !eq(val, vlen, "1")) {
			ev->bad_key = "freq";
			return MT_FOLD_EVALUE;
		}
		ev->freq = val[0] == '1';
		ev->have |= MT_FOLD_W_FREQ;
	} else if (KEY("scope")) {
		if (eq(val, vlen, "process"))
			ev->process_scope = 1;
		else if (!eq(val, vlen, "thread")) {
			ev->bad_key = "scope";
			return MT_FOLD_EVALUE;
		}
		ev->have |= MT_FOLD_W_SCOPE;
	} else if (KEY("fn")) {
		ev->fn = (struct mt_fold_str){ val, vlen };
	} else if (KEY("event")) {
		ev->event = (struct mt_fold_str){ val, vlen };
	} else if (KEY("reason")) {
		ev->reason = (struct mt_fold_str){ val, vlen };
	}
	return 0;
}

static const char *missing_key(unsigned have, unsigned need)
{
	static const struct { unsigned bit; const char *key; } names[] = {
		{ MT_FOLD_W_SIZE, "size" }, { MT_FOLD_W_PTR, "ptr" },
		{ MT_FOLD_W_POINTS, "points" }, { MT_FOLD_W_RATE, "rate" },
		{ MT_FOLD_W_PERIOD, "period" }, { MT_FOLD_W_COUNT, "count" },
		{ MT_FOLD_W_SCOPE, "scope" }, { MT_FOLD_W_ALLOC_BYTES, "alloc_bytes" },
		{ MT_FOLD_W_ALLOCS, "allocs" }, { MT_FOLD_W_FREES, "frees" },
		{ MT_FOLD_W_FREED_BYTES, "freed_bytes" },
		{ MT_FOLD_W_PEAK_BYTES, "peak_bytes" },
		{ MT_FOLD_W_LIVE, "live" }, { MT_FOLD_W_BLOCK_BYTES, "alloc_block_bytes" },
		{ MT_FOLD_W_PEAK, "peak" }, { MT_FOLD_W_PEAK_TIME, "peak_time" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((need & names[i].bit) && !(have & names[i].bit))
			return names[i].key;
	return NULL;
}

/* Which weights each kind needs, and values that make no sense. */
static int check_kind(struct mt_fold_event *ev)
{
	unsigned need = 0;
	switch (ev->kind) {
	case MT_FOLD_ALLOC:
		need = MT_FOLD_W_SIZE;
		if (!(ev->have & MT_FOLD_W_EVERY))
			need |= MT_FOLD_W_POINTS | MT_FOLD_W_RATE;
		break;
	case MT_FOLD_FREE:
		need = MT_FOLD_W_PTR;
		break;
	case MT_FOLD_TOTALS:
		need = MT_FOLD_W_SCOPE | MT_FOLD_W_ALLOC_BYTES | MT_FOLD_W_ALLOCS |
		       MT_FOLD_W_FREES | MT_FOLD_W_FREED_BYTES | MT_FOLD_W_PEAK_BYTES;
		break;
	case MT_FOLD_SAMPLE:
		need = MT_FOLD_W_PERIOD;
		break;
	case MT_FOLD_LOST:
		need = MT_FOLD_W_COUNT;
		break;
	case MT_FOLD_TICK:
		/* rss is left out when /proc was unreadable; allocs, frees,
		 * peak_error and period are informative */
		need = MT_FOLD_W_LIVE | MT_FOLD_W_ALLOC_BYTES | MT_FOLD_W_BLOCK_BYTES |
		       MT_FOLD_W_PEAK | MT_FOLD_W_PEAK_TIME;
		break;
	default:
		break;
	}
	ev->bad_key = missing_key(ev->have, need);
	if (ev->bad_key)
		return MT_FOLD_EMISSING;
	/* A sampled allocation covers at least one point; rates and every
	 * are divisors. */
	if (ev->kind == MT_FOLD_ALLOC && !(ev->have & MT_FOLD_W_EVERY) && ev->points == 0 &&
	    !(ev->rate == 1 && ev->size == 0))	/* --rate 1: points = size */
		ev->bad_key = "points";
	else if ((ev->have & MT_FOLD_W_RATE) && ev->rate == 0)
		ev->bad_key = "rate";
	else if ((ev->have & MT_FOLD_W_EVERY) && ev->every == 0)
		ev->bad_key = "every";
	return ev->bad_key ? MT_FOLD_EVALUE : 0;
}

int mt_fold_line_parse(const char *line, size_t len, struct mt_fold_event *ev)
{
	const char *f[6];
	size_t flen[6];
	const char *p = line, *end = line + len;

	memset(ev, 0, sizeof(*ev));
	if (memchr(line, '\0', len))
		return MT_FOLD_ENUL;
	/* Five TABs; STACK is the rest of the line. */
	for (int i = 0; i < 5; i++) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		if (!tab)
			return MT_FOLD_EFIELDS;
		f[i] = p;
		flen[i] = (size_t)(tab - p);
		p = tab + 1;
	}
	f[5] = p;
	flen[5] = (size_t)(end - p);

	if (eq(f[0], flen[0], "alloc"))
		ev->kind = MT_FOLD_ALLOC;
	else if (eq(f[0], flen[0], "free"))
		ev->kind = MT_FOLD_FREE;
	else if (eq(f[0], flen[0], "totals"))
		ev->kind = MT_FOLD_TOTALS;
	else if (eq(f[0], flen[0], "sample"))
		ev->kind = MT_FOLD_SAMPLE;
	else if (eq(f[0], flen[0], "lost"))
		ev->kind = MT_FOLD_LOST;
	else if (eq(f[0], flen[0], "tick"))
		ev->kind = MT_FOLD_TICK;
	else
		return MT_FOLD_EKIND;

	const char *slash = memchr(f[1], '/', flen[1]);
	uint64_t pid, tid;
	if (!slash || parse_u64(f[1], (size_t)(slash - f[1]), &pid) ||
	    parse_u64(slash + 1, flen[1] - (size_t)(slash - f[1]) - 1, &tid) ||
	    pid > UINT32_MAX || tid > UINT32_MAX)
		return MT_FOLD_EPID;
	ev->pid = (uint32_t)pid;
	ev->tid = (uint32_t)tid;

	if (parse_u64(f[2], flen[2], &ev->time))
		return MT_FOLD_ETIME;
	ev->comm = (struct mt_fold_str){ f[3], flen[3] };

	const char *w = f[4], *wend = f[4] + flen[4];
	while (w < wend) {
		const char *sp = memchr(w, ' ', (size_t)(wend - w));
		const char *stop = sp ? sp : wend;
		if (stop > w) {
			int err = parse_weight(w, (size_t)(stop - w), ev);
			if (err)
				return err;
		}
		w = stop + 1;
	}

	/* STACK: frames, one space, end=REASON; frames may hold spaces. */
	const char *sp = NULL;
	for (const char *q = f[5] + flen[5]; q > f[5]; q--)
		if (q[-1] == ' ') {
			sp = q - 1;
			break;
		}
	if (!sp || (size_t)(f[5] + flen[5] - sp) <= 5 || memcmp(sp + 1, "end=", 4) != 0)
		return MT_FOLD_ESTACK;
	ev->frames = (struct mt_fold_str){ f[5], (size_t)(sp - f[5]) };
	ev->end = (struct mt_fold_str){ sp + 5, (size_t)(f[5] + flen[5] - sp - 5) };
	return check_kind(ev);
}

int mt_fold_line_header(const char *line, size_t len)
{
	static const char prefix[] = "# mt-unwind ";
	size_t n = sizeof(prefix) - 1;
	if (len <= n || memcmp(line, prefix, n) != 0)
		return 0;
	uint64_t version;
	size_t vlen = 0;
	while (n + vlen < len && line[n + vlen] >= '0' && line[n + vlen] <= '9')
		vlen++;
	if (parse_u64(line + n, vlen, &version) || (n + vlen < len && line[n + vlen] != ' '))
		return 0;	/* "# mt-unwind options..." is just a comment */
	return version == 1 ? 1 : MT_FOLD_EVERSION;
}
