/* libmt-sampler.so: LD_PRELOADed by mt-capture's sample mode.
 *
 * Intercepts the C allocator, keeps exact per-thread totals and samples
 * allocations on the byte line (sampler_rand.h).  Sampled allocations, frees
 * of sampled pointers and exit totals call marker functions that mt-capture
 * uprobes (sampler_x86_64.S, docs/formats/capture-events.md).
 *
 * Counters follow the single-writer discipline: a thread's block is written
 * only by that thread, with one-instruction adds (signal-safe), and read by
 * others with relaxed loads.  Nothing here calls malloc: blocks and the
 * sampled-pointer table live in mmap'd memory.  During the dlsym() that
 * finds the real allocator, requests are served from a static arena.
 *
 * Environment: MT_SAMPLER_RATE (mean gap in bytes, default 524288),
 * MT_SAMPLER_SEED (reproducible draws; else a fresh seed per process).
 */
#include "capture/sampler_arch.h"
#include "capture/sampler_rand.h"
#include "capture/sampler_table.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLS __thread __attribute__((tls_model("initial-exec")))

enum { FN_MALLOC, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
       FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC, FN_FREE };

enum { SCOPE_THREAD = 1, SCOPE_PROCESS = 2 };

/* Live-byte deltas reach the process-wide counter in batches: a thread's
 * live bytes stay within PUBLISH_BATCH of what it last published, so the
 * process peak is off by at most threads * PUBLISH_BATCH. */
#define PUBLISH_BATCH (256 * 1024)

/* 128-byte aligned: blocks of different threads share no cache line (nor
 * the adjacent line the prefetcher pairs with it); false sharing between
 * them cost about 10 ns per call.
 *
 * The fast path updates as few words as it can, each with one instruction:
 * alloc_bytes is drawn - remaining (the sampling countdown counts requested
 * bytes anyway), live is alloc_usable - freed_bytes, and one countdown,
 * headroom = limit - live, replaces both the peak comparison and the
 * publishing check: malloc takes the slow path when it goes below 0 (a new
 * thread peak, or PUBLISH_BATCH / 2 above what was published), free when it
 * goes above PUBLISH_BATCH (live PUBLISH_BATCH / 2 .. PUBLISH_BATCH below
 * it).  Only the slow path (live_slow) changes limit, and it adds the same
 * change to headroom, so headroom == limit - live holds whatever a signal
 * handler does in between. */
struct block {
	int64_t remaining;	/* bytes to the next sample point (hot) */
	int64_t headroom;	/* limit - live (hot) */
	uint64_t allocs, alloc_usable, frees, freed_bytes;
	uint64_t drawn;		/* sum of the gaps drawn: alloc_bytes + remaining */
	int64_t peak;
	int64_t limit;		/* min(peak, published + PUBLISH_BATCH / 2) */
	int64_t published;	/* live as last added to g_live */
	uint64_t rng;
	uint64_t tid;
	int busy;		/* in the slow path: a nested call only counts */
	int rounds;		/* TSD destructor rounds seen */
	struct block *next;	/* registry or free list */
	/* Marker calls made (slow paths only): mt-unwind compares them with
	 * the events it saw, so a hit the kernel dropped is not silent. */
	uint64_t alloc_marks, free_marks;
} __attribute__((aligned(128)));

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
} real;

/* Block sizes for freed_bytes and live/peak bytes.  malloc_usable_size()
 * was 37% of a small-allocation workload's time (glibc's reads the next
 * chunk's header, a cache miss): with glibc's allocator the size word
 * before the block is read instead, the chunk size.  Same measure at
 * allocation and free, so live bytes stay exact in that unit. */
static int glibc_chunks;

static inline uint64_t block_size(void *p)
{
	if (LIKELY(glibc_chunks))
		return ((const uint64_t *)p)[-1] & ~(uint64_t)7;
	return real.usable(p);
}

static int init_state;			/* 0 none, 1 running, 2 done */
static TLS int in_init;
static TLS struct block *self;
/* self when the block size is glibc's chunk size, else NULL: free()'s fast
 * path tests this one word. */
static TLS struct block *self_glibc;

static struct mt_sampler_gapgen gapgen;
static uint64_t seed;
static uint64_t thread_ordinal;
static pid_t my_pid;
static pthread_key_t exit_key;

/* Registry of live blocks, free list, and what retired threads left. */
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct block *registry, *free_blocks;
static unsigned threads_alive, threads_max;
static struct {
	uint64_t alloc_bytes, allocs, frees, freed_bytes, alloc_usable;
	uint64_t alloc_marks, free_marks;
} retired;
/* Free marker calls made by a thread without a block (process count only). */
static uint64_t blockless_free_marks;
static int64_t g_live, g_peak;
static uint64_t untracked;

/* ---- bootstrap arena: serves dlsym's own allocations ------------------- */

static char boot_arena[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

static void *boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	size_t at = (boot_used + align - 1) & ~(align - 1);
	if (at > sizeof(boot_arena) || n > sizeof(boot_arena) - at)
		return NULL;
	boot_used = at + n;
	/* free() looks its blocks up only on a filter hit. */
	mt_sampler_table_pin(boot_arena + at);
	return boot_arena + at;	/* static storage: already zero */
}

static int boot_owns(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof(boot_arena);
}

/* ---- locks -------------------------------------------------------------- */

/* Mutexes, not spinlocks: see sampler_table.c.  Neither allocates. */
static void reg_lock(void)
{
	pthread_mutex_lock(&reg_mutex);
}

static void reg_unlock(void)
{
	pthread_mutex_unlock(&reg_mutex);
}

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static int64_t rds(const int64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Derived totals (relaxed: another thread's may be a few calls behind). */
static uint64_t blk_alloc_bytes(const struct block *b)
{
	return rd(&b->drawn) - (uint64_t)rds(&b->remaining);
}

static int64_t blk_live(const struct block *b)
{
	return (int64_t)(rd(&b->alloc_usable) - rd(&b->freed_bytes));
}

/* ---- init --------------------------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t dflt, int *set)
{
	const char *s = getenv(name);
	if (set)
		*set = 0;
	if (!s || !*s)
		return dflt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return dflt;
	if (set)
		*set = 1;
	return v;
}

static void on_thread_exit(void *arg);
static void before_fork(void);
static void after_fork_parent(void);
static void after_fork_child(void);

static void init(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2 && !in_init)
			__builtin_ia32_pause();
		return;
	}
	in_init = 1;
	real.malloc = dlsym(RTLD_NEXT, "malloc");
	real.calloc = dlsym(RTLD_NEXT, "calloc");
	real.realloc = dlsym(RTLD_NEXT, "realloc");
	real.free = dlsym(RTLD_NEXT, "free");
	real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real.memalign = dlsym(RTLD_NEXT, "memalign");
	real.valloc = dlsym(RTLD_NEXT, "valloc");
	real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	real.execve = dlsym(RTLD_NEXT, "execve");
	real.execvpe = dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = dlsym(RTLD_NEXT, "fexecve");
	if (!real.malloc || !real.calloc || !real.realloc || !real.free || !real.usable) {
		static const char msg[] = "libmt-sampler: cannot find the allocator (dlsym)\n";
		if (write(2, msg, sizeof(msg) - 1) < 0) {
		}
		abort();
	}
	Dl_info di;
	glibc_chunks = dladdr((void *)real.malloc, &di) && di.dli_fname &&
		       strstr(di.dli_fname, "/libc.so.6");
	mt_sampler_gapgen_init(&gapgen, env_u64("MT_SAMPLER_RATE", 524288, NULL));
	int seeded;
	seed = env_u64("MT_SAMPLER_SEED", 0, &seeded);
	if (!seeded) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
			seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	}
	my_pid = getpid();
	pthread_key_create(&exit_key, on_thread_exit);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	in_init = 0;
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

static inline int ready(void)
{
	if (LIKELY(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2))
		return 1;
	if (!in_init)
		init();
	return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

__attribute__((constructor)) static void sampler_ctor(void)
{
	ready();
}

/* ---- per-thread blocks -------------------------------------------------- */

static struct block *block_new(void)
{
	reg_lock();
	struct block *b = free_blocks;
	if (b) {
		free_blocks = b->next;
	} else {
		size_t n = 4096 / sizeof(struct block);
		struct block *chunk = mmap(NULL, n * sizeof(*chunk), PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (chunk == MAP_FAILED) {
			reg_unlock();
			return NULL;
		}
		for (size_t i = 1; i < n; i++) {
			chunk[i].next = free_blocks;
			free_blocks = &chunk[i];
		}
		b = chunk;
	}
	memset(b, 0, sizeof(*b));
	b->rng = seed + 0x632be59bd9b4e019ULL * ++thread_ordinal;
	b->next = registry;
	registry = b;
	if (++threads_alive > threads_max)
		threads_max = threads_alive;
	reg_unlock();
	b->remaining = (int64_t)mt_sampler_gap_next(&gapgen, &b->rng);
	b->drawn = (uint64_t)b->remaining;
	b->tid = (uint64_t)gettid();
	return b;
}

/* The calling thread's first call: create its block.  NULL only while the
 * sampler initializes or when mmap fails: that call goes uncounted. */
static __attribute__((noinline)) struct block *block_first(void)
{
	if (!ready() || in_init)
		return NULL;
	struct block *b = block_new();
	if (!b)
		return NULL;
	self = b;
	if (glibc_chunks)
		self_glibc = b;
	/* Setting a TSD value allocates nothing for the first 32 keys. */
	pthread_setspecific(exit_key, b);
	return b;
}

/* The calling thread's block, or NULL (see block_first). */
static inline struct block *block_self(void)
{
	struct block *b = self;
	if (LIKELY(b != NULL))
		return b;
	return block_first();
}

/* Add the thread's live bytes (now @live) not yet in g_live. */
static void publish(struct block *b, int64_t live)
{
	int64_t d = live - b->published;
	b->published = live;
	int64_t now = __atomic_add_fetch(&g_live, d, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
	while (now > peak &&
	       !__atomic_compare_exchange_n(&g_peak, &peak, now, 1, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* ---- reports ------------------------------------------------------------ */

static void report_thread(const struct block *b)
{
	uint64_t v[MT_SAMPLER_TOTALS] = {
		SCOPE_THREAD, blk_alloc_bytes(b), rd(&b->allocs), rd(&b->frees),
		rd(&b->freed_bytes), (uint64_t)rds(&b->peak), 0, rd(&b->tid),
		rd(&b->alloc_usable), __atomic_load_n(&untracked, __ATOMIC_RELAXED),
		rd(&b->alloc_marks), rd(&b->free_marks),
	};
	mt_sampler_report_totals(v);
}

/* Process totals: retired threads plus live blocks (read relaxed: a thread
 * still running may be a few calls ahead). */
static void report_process(int threads_too)
{
	uint64_t v[MT_SAMPLER_TOTALS] = { SCOPE_PROCESS };
	int64_t unpublished = 0;
	reg_lock();
	v[1] = retired.alloc_bytes;
	v[2] = retired.allocs;
	v[3] = retired.frees;
	v[4] = retired.freed_bytes;
	v[8] = retired.alloc_usable;
	v[10] = rd(&retired.alloc_marks);
	v[11] = rd(&retired.free_marks) + __atomic_load_n(&blockless_free_marks, __ATOMIC_RELAXED);
	for (struct block *b = registry; b; b = b->next) {
		v[1] += blk_alloc_bytes(b);
		v[2] += rd(&b->allocs);
		v[3] += rd(&b->frees);
		v[4] += rd(&b->freed_bytes);
		v[8] += rd(&b->alloc_usable);
		v[10] += rd(&b->alloc_marks);
		v[11] += rd(&b->free_marks);
		unpublished += blk_live(b) - rds(&b->published);
		if (threads_too)
			report_thread(b);
	}
	int64_t now = __atomic_load_n(&g_live, __ATOMIC_RELAXED) + unpublished;
	int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
	v[5] = (uint64_t)(now > peak ? now : peak);
	v[6] = (uint64_t)threads_max * PUBLISH_BATCH;
	v[7] = (uint64_t)getpid();
	v[9] = __atomic_load_n(&untracked, __ATOMIC_RELAXED);
	reg_unlock();
	mt_sampler_report_totals(v);
}

static void on_thread_exit(void *arg)
{
	struct block *b = arg;
	/* Later TSD destructors may still allocate: report in the last round. */
	if (++b->rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(exit_key, b);
		return;
	}
	b->busy = 1;
	report_thread(b);
	publish(b, blk_live(b));
	reg_lock();
	for (struct block **pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	retired.alloc_bytes += blk_alloc_bytes(b);
	retired.allocs += b->allocs;
	retired.frees += b->frees;
	retired.freed_bytes += b->freed_bytes;
	retired.alloc_usable += b->alloc_usable;
	retired.alloc_marks += b->alloc_marks;
	retired.free_marks += b->free_marks;
	threads_alive--;
	b->next = free_blocks;
	free_blocks = b;
	reg_unlock();
	self = NULL;
	self_glibc = NULL;
}

__attribute__((destructor)) static void sampler_dtor(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2 || getpid() != my_pid)
		return;
	if (self)
		self->busy = 1;
	report_process(1);
}

/* ---- fork --------------------------------------------------------------- */

static void before_fork(void)
{
	reg_lock();
	mt_sampler_table_lock();
}

static void after_fork_parent(void)
{
	mt_sampler_table_unlock();
	reg_unlock();
}

/* The child starts from zero with only the forking thread. */
static void after_fork_child(void)
{
	struct block *me = self;
	for (struct block *b = registry, *next; b; b = next) {
		next = b->next;
		if (b != me) {
			b->next = free_blocks;
			free_blocks = b;
		}
	}
	registry = NULL;
	threads_alive = threads_max = 0;
	memset(&retired, 0, sizeof(retired));
	blockless_free_marks = 0;
	g_live = g_peak = 0;
	my_pid = getpid();
	if (me) {
		uint64_t rng = me->rng, rem = (uint64_t)me->remaining;
		memset(me, 0, sizeof(*me));
		me->rng = rng;
		me->remaining = (int64_t)rem;
		me->drawn = rem;
		me->tid = (uint64_t)gettid();
		me->next = NULL;
		registry = me;
		threads_alive = threads_max = 1;
	}
	mt_sampler_table_unlock();
	reg_unlock();
}

/* ---- the counting and sampling paths ------------------------------------ */

/* headroom left [0, PUBLISH_BATCH]: settle the thread's peak, publish to
 * g_live when live moved PUBLISH_BATCH / 2 or more from what was published,
 * and set the next limit. */
static __attribute__((noinline)) void live_slow(struct block *b)
{
	int64_t live = blk_live(b);
	if (live > b->peak)
		b->peak = live;
	if (b->busy)
		return;	/* a signal handler inside a slow path: the outer one settles */
	b->busy = 1;
	/* A second round only when a signal handler moved live meanwhile;
	 * bounded all the same: the next call would settle the rest. */
	for (int round = 0; round < 4; round++) {
		live = blk_live(b);
		if (live > b->peak)
			b->peak = live;
		if (live - b->published >= PUBLISH_BATCH / 2 ||
		    b->published - live >= PUBLISH_BATCH / 2)
			publish(b, live);
		int64_t limit = b->peak < b->published + PUBLISH_BATCH / 2 ?
					b->peak : b->published + PUBLISH_BATCH / 2;
		mt_sampler_add((uint64_t *)&b->headroom, (uint64_t)(limit - b->limit));
		b->limit = limit;
		int64_t h = rds(&b->headroom);
		if (h >= 0 && h <= PUBLISH_BATCH)
			break;
	}
	b->busy = 0;
}

static __attribute__((noinline)) void sample_alloc(struct block *b, const void *p, uint64_t size,
						   int fn)
{
	if (b->busy)
		return;	/* a signal handler inside a slow path: counted, not sampled */
	b->busy = 1;
	int64_t rem = b->remaining;
	uint64_t after = (uint64_t)-rem;	/* bytes past the first point */
	int64_t next;
	uint64_t points = 1 + mt_sampler_points_after(&gapgen, &b->rng, after, &next);
	/* Additions, not a store: a signal handler's allocation since the
	 * read above still counts (alloc_bytes = drawn - remaining). */
	mt_sampler_add(&b->drawn, (uint64_t)(next - rem));
	mt_sampler_add((uint64_t *)&b->remaining, (uint64_t)(next - rem));
	if (mt_sampler_table_insert(p, size, points) < 0)
		__atomic_add_fetch(&untracked, 1, __ATOMIC_RELAXED);
	mt_sampler_mark_alloc(size, p, points, gapgen.rate, (uint64_t)fn);
	/* Counted after the call: a report racing with it can only be behind. */
	mt_sampler_add(&b->alloc_marks, 1);
	b->busy = 0;
}

/* Count a successful allocation p of size bytes requested. */
static inline void count_alloc(struct block *b, const void *p, uint64_t size, int fn)
{
	uint64_t u = block_size((void *)p);
	mt_sampler_add(&b->allocs, 1);
	mt_sampler_add(&b->alloc_usable, u);
	if (UNLIKELY(mt_sampler_sub_lt0(&b->headroom, u)))
		live_slow(b);
	if (UNLIKELY(mt_sampler_sub_le0(&b->remaining, size)))
		sample_alloc(b, p, size, fn);
}

/* Count the release of a block of u bytes (block size). */
static inline void count_release(struct block *b, uint64_t u)
{
	mt_sampler_add(&b->frees, 1);
	mt_sampler_add(&b->freed_bytes, u);
	if (UNLIKELY(mt_sampler_add_gt(&b->headroom, u, PUBLISH_BATCH)))
		live_slow(b);
}

/* Counts a free marker call after it is made (see sample_alloc); b NULL:
 * into the process count only. */
static void count_free_mark(struct block *b)
{
	if (LIKELY(b != NULL))
		mt_sampler_add(&b->free_marks, 1);
	else
		__atomic_add_fetch(&blockless_free_marks, 1, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) void sample_free(struct block *b, const void *p, int fn)
{
	struct mt_sampler_entry e;
	if (mt_sampler_table_remove(p, &e)) {
		mt_sampler_mark_free(p, e.size, e.points, gapgen.rate, (uint64_t)fn);
		count_free_mark(b);
	}
}

/* Count a block about to be released (it must still be allocated, so that
 * its address cannot be handed out and sampled again meanwhile). */
static inline void count_free(void *p, int fn)
{
	struct block *b = block_self();
	if (LIKELY(b != NULL))
		count_release(b, block_size(p));
	if (UNLIKELY(mt_sampler_table_maybe(p)))
		sample_free(b, p, fn);
}

/* ---- the interposed functions ------------------------------------------- */

/* The calling thread's block, read before the call to the allocator; its
 * first call creates it.  Before the sampler is ready, returns BOOT (served
 * from the boot arena); when no block can be had, UNCOUNTED (the call goes
 * uncounted).  A macro: the sampled path must stay inside the public
 * function (the outermost sampler frame of a sample is its name). */
#define ENTER(b, BOOT, UNCOUNTED)                                   \
	struct block *b = self;                                     \
	if (UNLIKELY(!b)) {                                         \
		if (UNLIKELY(!ready()))                             \
			return BOOT;                                \
		b = block_first();                                  \
		if (UNLIKELY(!b))                                   \
			return UNCOUNTED;                           \
	}

EXPORT void *malloc(size_t n)
{
	ENTER(b, boot_alloc(n, 16), real.malloc(n));
	void *p = real.malloc(n);
	if (LIKELY(p != NULL))
		count_alloc(b, p, n, FN_MALLOC);
	return p;
}

/* free()'s less common paths, out of line so that its fast path needs no
 * stack frame: each ends in the real free. */
static __attribute__((noinline)) void free_slow(void *p)
{
	if (UNLIKELY(!ready()))
		return;	/* cannot happen: p came from somewhere */
	count_free(p, FN_FREE);
	real.free(p);
}

static __attribute__((noinline)) void free_settle(struct block *b, void *p)
{
	live_slow(b);
	real.free(p);
}

/* A filter hit: a sampled pointer, a false positive, or a block of the
 * boot arena (pinned in the filter, never given to the real free). */
static __attribute__((noinline)) void free_filtered(void *p)
{
	if (boot_owns(p))
		return;
	free_slow(p);
}

EXPORT void free(void *p)
{
	if (UNLIKELY(!p))
		return;
	if (UNLIKELY(mt_sampler_table_maybe(p))) {
		free_filtered(p);
		return;
	}
	struct block *b = self_glibc;
	if (UNLIKELY(!b)) {
		free_slow(p);
		return;
	}
	uint64_t u = ((const uint64_t *)p)[-1] & ~(uint64_t)7;	/* block_size() */
	mt_sampler_add(&b->frees, 1);
	mt_sampler_add(&b->freed_bytes, u);
	if (UNLIKELY(mt_sampler_add_gt(&b->headroom, u, PUBLISH_BATCH))) {
		free_settle(b, p);
		return;
	}
	real.free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	ENTER(b, boot_alloc(total, 16), real.calloc(n, size));
	void *p = real.calloc(n, size);
	if (LIKELY(p != NULL))
		count_alloc(b, p, total, FN_CALLOC);
	return p;
}

/* Inlined: the outermost sampler frame of a sample must be the public name
 * (realloc, reallocarray), see docs/formats/capture-events.md. */
static inline __attribute__((always_inline)) void *do_realloc(void *old, size_t n, int fn)
{
	if (UNLIKELY(!ready()))
		return boot_alloc(n, 16);
	struct block *b = block_self();
	if (UNLIKELY(boot_owns(old))) {
		void *p = real.malloc(n);
		if (p) {
			size_t room = (size_t)(boot_arena + sizeof(boot_arena) - (char *)old);
			memcpy(p, old, n < room ? n : room);
			if (b)
				count_alloc(b, p, n, fn);
		}
		return p;
	}
	if (!old) {
		void *p = real.malloc(n);
		if (p && b)
			count_alloc(b, p, n, fn);
		return p;
	}
	/* Take old out of the sampled set first (it cannot be reused while we
	 * hold it), and put it back if the realloc fails. */
	struct mt_sampler_entry e;
	int sampled = mt_sampler_table_maybe(old) && mt_sampler_table_remove(old, &e);
	uint64_t u_old = block_size(old);
	void *p = real.realloc(old, n);
	if (!p && n) {
		if (sampled && mt_sampler_table_insert(old, e.size, e.points) < 0)
			__atomic_add_fetch(&untracked, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (b)
		count_release(b, u_old);
	if (sampled) {
		mt_sampler_mark_free(old, e.size, e.points, gapgen.rate, (uint64_t)fn);
		count_free_mark(b);
	}
	if (p && b)
		count_alloc(b, p, n, fn);
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	return do_realloc(old, n, FN_REALLOC);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(old, total, FN_REALLOCARRAY);
}

static int boot_memalign(void **out, size_t align, size_t n)
{
	void *p = boot_alloc(n, align);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	ENTER(b, boot_memalign(out, align, n), real.posix_memalign(out, align, n));
	int rc = real.posix_memalign(out, align, n);
	if (rc == 0)
		count_alloc(b, *out, n, FN_POSIX_MEMALIGN);
	return rc;
}

#define ALIGNED(name, fn_code)                                      \
	EXPORT void *name(size_t align, size_t n)                   \
	{                                                           \
		ENTER(b, boot_alloc(n, align), real.name(align, n)); \
		void *p = real.name(align, n);                      \
		if (LIKELY(p != NULL))                              \
			count_alloc(b, p, n, fn_code);              \
		return p;                                           \
	}
ALIGNED(aligned_alloc, FN_ALIGNED_ALLOC)
ALIGNED(memalign, FN_MEMALIGN)

#define PAGED(name, fn_code)                                        \
	EXPORT void *name(size_t n)                                 \
	{                                                           \
		ENTER(b, boot_alloc(n, 4096), real.name(n));        \
		void *p = real.name(n);                             \
		if (LIKELY(p != NULL))                              \
			count_alloc(b, p, n, fn_code);              \
		return p;                                           \
	}
PAGED(valloc, FN_VALLOC)
PAGED(pvalloc, FN_PVALLOC)

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (boot_owns(p))
		return (size_t)(boot_arena + sizeof(boot_arena) - (char *)p);
	if (UNLIKELY(!ready()))
		return 0;
	return real.usable(p);
}

/* ---- exec: the image about to be replaced reports its totals ----------- */

static void before_exec(void)
{
	/* A vfork child shares our memory and must not report it as its own. */
	if (!ready() || getpid() != my_pid)
		return;
	struct block *b = self;
	if (b)
		b->busy = 1;
	report_process(0);
	if (b)
		b->busy = 0;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	return real.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	return real.execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	return real.execvpe(file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	return real.execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	return real.fexecve(fd, argv, envp);
}

/* execl*: gather the variadic arguments into an argv on the stack. */
#define GATHER_ARGS(arg0, ap, argv, envp_out)                              \
	size_t argc = 1;                                                   \
	va_start(ap, arg0);                                                \
	while (va_arg(ap, const char *))                                   \
		argc++;                                                    \
	va_end(ap);                                                        \
	char *argv[argc + 1];                                              \
	argv[0] = (char *)arg0;                                            \
	va_start(ap, arg0);                                                \
	for (size_t i = 1; i <= argc; i++)                                 \
		argv[i] = va_arg(ap, char *);                              \
	envp_out;                                                          \
	va_end(ap)

EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	GATHER_ARGS(arg0, ap, argv, (void)0);
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	GATHER_ARGS(arg0, ap, argv, (void)0);
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	char **envp;
	GATHER_ARGS(arg0, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}
