/* wordfreq: the program `make demo` profiles.  It counts words in generated
 * text the way a small real tool would, and so allocates along several
 * distinct paths:
 *   - index_add:        a hash table of interned words (strdup + nodes), kept;
 *   - tokenize_line:    a temporary token array per line, freed at once;
 *   - grow_histogram:   a realloc-grown array of counts;
 *   - worker threads:   per-chunk buffers, freed when the chunk is done;
 *   - remember_slow:    a leak: records that are never freed.
 * Usage: wordfreq [LINES] [THREADS]   (default 200000 lines, 3 threads) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 65536

struct word {
	char *text;
	unsigned long count;
	struct word *next;
};

struct index {
	struct word *buckets[NBUCKETS];
	pthread_mutex_t lock;
};

struct slow_record {
	char what[48];
	unsigned long line;
};

static struct index g_index = { .lock = PTHREAD_MUTEX_INITIALIZER };
static unsigned long *g_histogram;
static size_t g_histogram_len;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Zipf-like vocabulary: a few words are very common, most are rare. */
static void make_line(char *buf, size_t cap, uint64_t *rng)
{
	size_t len = 0;
	int words = 4 + (int)(next_random(rng) % 12);
	for (int i = 0; i < words && len + 24 < cap; i++) {
		uint64_t r = next_random(rng);
		unsigned id = (unsigned)((r % 1000) * (r % 1000) / 50);
		len += (size_t)snprintf(buf + len, cap - len, "%sw%u", i ? " " : "", id);
	}
	buf[len] = '\0';
}

static unsigned hash_word(const char *s)
{
	unsigned h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % NBUCKETS;
}

static void index_add(struct index *ix, const char *text)
{
	unsigned b = hash_word(text);
	pthread_mutex_lock(&ix->lock);
	struct word *w = ix->buckets[b];
	while (w && strcmp(w->text, text) != 0)
		w = w->next;
	if (!w) {
		w = xmalloc(sizeof(*w));
		w->text = strdup(text);
		w->count = 0;
		w->next = ix->buckets[b];
		ix->buckets[b] = w;
	}
	w->count++;
	pthread_mutex_unlock(&ix->lock);
}

/* Splits a line into a fresh array of token pointers; the caller frees it. */
static char **tokenize_line(char *line, size_t *n)
{
	size_t cap = 4, len = 0;
	char **tokens = xmalloc(cap * sizeof(*tokens));
	for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (len == cap) {
			cap *= 2;
			tokens = realloc(tokens, cap * sizeof(*tokens));
		}
		tokens[len++] = t;
	}
	*n = len;
	return tokens;
}

static void grow_histogram(size_t words_in_line)
{
	if (words_in_line >= g_histogram_len) {
		size_t len = words_in_line + 1;
		g_histogram = realloc(g_histogram, len * sizeof(*g_histogram));
		memset(g_histogram + g_histogram_len, 0, (len - g_histogram_len) * sizeof(*g_histogram));
		g_histogram_len = len;
	}
	g_histogram[words_in_line]++;
}

/* The leak: a record of every unusually long line, dropped on the floor. */
static __attribute__((noinline)) void remember_slow(unsigned long line, size_t words)
{
	struct slow_record *r = xmalloc(sizeof(*r));
	snprintf(r->what, sizeof(r->what), "line %lu has %zu words", line, words);
	r->line = line;
	__asm__ volatile("" : : "r"(r) : "memory");	/* keep the allocation */
}

static void count_text(unsigned long lines, uint64_t seed)
{
	uint64_t rng = seed;
	char line[512];
	for (unsigned long i = 0; i < lines; i++) {
		make_line(line, sizeof(line), &rng);
		size_t n;
		char **tokens = tokenize_line(line, &n);
		for (size_t k = 0; k < n; k++)
			index_add(&g_index, tokens[k]);
		grow_histogram(n);
		if (n >= 15)
			remember_slow(i, n);
		free(tokens);
	}
}

struct chunk_job {
	unsigned long lines;
	uint64_t seed;
	unsigned long chars;
};

/* Workers build a whole chunk of text in a buffer, then scan it. */
static void *chunk_worker(void *arg)
{
	struct chunk_job *job = arg;
	for (unsigned long done = 0; done < job->lines; done += 256) {
		size_t cap = 256 * 512;
		char *chunk = xmalloc(cap);
		size_t len = 0;
		uint64_t rng = job->seed + done;
		for (int i = 0; i < 256; i++) {
			make_line(chunk + len, cap - len, &rng);
			len += strlen(chunk + len);
		}
		job->chars += len;
		free(chunk);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long lines = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	int nthreads = argc > 2 ? atoi(argv[2]) : 3;
	if (nthreads < 0 || nthreads > 64)
		nthreads = 3;

	pthread_t threads[64];
	struct chunk_job jobs[64];
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (struct chunk_job){ .lines = lines / 2, .seed = 1000 + (uint64_t)t };
		pthread_create(&threads[t], NULL, chunk_worker, &jobs[t]);
	}
	count_text(lines, 42);
	unsigned long chars = 0;
	for (int t = 0; t < nthreads; t++) {
		pthread_join(threads[t], NULL);
		chars += jobs[t].chars;
	}

	unsigned long distinct = 0;
	for (int b = 0; b < NBUCKETS; b++)
		for (struct word *w = g_index.buckets[b]; w; w = w->next)
			distinct++;
	printf("wordfreq: %lu lines, %lu distinct words, %lu chars in chunks\n",
	       lines, distinct, chars);
	return 0;
}
