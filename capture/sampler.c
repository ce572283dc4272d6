/* libmt-sampler.so: LD_PRELOADed by mt-capture's sample mode.
 *
 * Intercepts the C allocator, keeps exact per-thread totals and samples
 * allocations on the byte line (sampler_rand.h).  Sampled allocations, frees
 * of sampled pointers and exit totals call marker functions that mt-capture
 * uprobes or that write to its sample ring (sampler_x86_64.S,
 * sampler_ring.h, docs/formats/capture-events.md).
 *
 * Counters follow the single-writer discipline: a thread's block is written
 * only by that thread, with one-instruction adds (signal-safe), and read by
 * others with relaxed loads.  Nothing here calls malloc: blocks and the
 * sampled-pointer table live in mmap'd memory.  During the dlsym() that
 * finds the real allocator, requests are served from a static arena.
 *
 * Sampled blocks are tagged (see "tagged blocks") when the allocator is
 * glibc's, so that free() tells them from the size word it reads anyway;
 * with another allocator they are kept in a table (sampler_table.h) that
 * free() consults through a filter.
 *
 * Environment: MT_SAMPLER_RATE (mean gap in bytes, default 524288),
 * MT_SAMPLER_SEED (reproducible draws; else a fresh seed per process),
 * MT_SAMPLER_RING (the sample ring, set by mt-capture), MT_SAMPLER_STREAM
 * (this process image's own draws, see "process images"), MT_SAMPLER_TICK
 * (0: no ticker thread, see "the timeline").
 */
#include "capture/sampler_arch.h"
#include "capture/sampler_rand.h"
#include "capture/sampler_ring.h"
#include "capture/sampler_table.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLS __thread __attribute__((tls_model("initial-exec")))

enum { FN_MALLOC, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
       FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC, FN_FREE };

/* SCOPE_EXEC: a thread's totals at an exec of its process (mt-unwind keeps
 * them only if the exec happens: a later report of the thread supersedes). */
enum { SCOPE_THREAD = 1, SCOPE_PROCESS = 2, SCOPE_EXEC = 3 };

/* Live-byte deltas reach the process-wide counter in batches: a thread's
 * live bytes stay within PUBLISH_BATCH of what it last published, so the
 * process peak is off by at most threads * PUBLISH_BATCH. */
#define PUBLISH_BATCH (256 * 1024)

/* 128-byte aligned: blocks of different threads share no cache line (nor
 * the adjacent line the prefetcher pairs with it); false sharing between
 * them slowed every call.
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
	void (*exit_now)(int);		/* _exit */
} real;

/* Block sizes for freed_bytes and live/peak bytes.  malloc_usable_size()
 * was 37% of a small-allocation workload's time (glibc's reads the next
 * chunk's header, a cache miss): with glibc's allocator the size word
 * before the block is read instead, the chunk size.  Same measure at
 * allocation and free, so live bytes stay exact in that unit. */
static int glibc_chunks;
static size_t page_size;

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
static int seeded;
static uint64_t thread_ordinal;
static pid_t my_pid;
static pthread_key_t exit_key;

/* Registry of live blocks, free list, and what retired threads left. */
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct block *registry, *free_blocks;
static unsigned threads_alive, threads_max, threads_ever;
static struct {
	uint64_t alloc_bytes, allocs, frees, freed_bytes, alloc_usable;
	uint64_t alloc_marks, free_marks;
} retired;
/* Free marker calls made by a thread without a block (process count only). */
static uint64_t blockless_free_marks;
static int64_t g_live, g_peak;
static uint64_t g_peak_time;	/* CLOCK_MONOTONIC ns when g_peak last rose */
static uint64_t untracked;

/* The timeline (mt:tick, see "the timeline" below). */
static int tick_thread_on = 1;	/* MT_SAMPLER_TICK */
static uint64_t tick_no;	/* ticks made by this process image */
static int tick_hold;		/* an exec is under way: no periodic tick */

/* ---- tagged blocks ------------------------------------------------------
 * With glibc's allocator a sampled allocation asks for OFF more bytes (16,
 * or the alignment asked for) and the program gets q = base + OFF.  The two
 * words before q say so:
 *   q[-1] = size << 4 | TAG   (size: the bytes requested)
 *   q[-2] = points << 8 | log2(OFF)
 * TAG is a bit that no glibc chunk size has (they are multiples of 16), and
 * q[-1] is where free() reads the chunk size of an ordinary block: one test
 * of the word it loads anyway finds sampled blocks, where free() looked
 * every pointer up in a 64 KiB filter of sampled pointers first (a cache
 * miss at random, and a longer fast path for free; bench/capture.sh, the
 * preloaded row).  The cost: 16 bytes (or the alignment) more per
 * sampled block, and a realloc of a sampled block always moves it. */
#define TAG 8

static inline int is_tagged(const void *q)
{
	return (((const uint64_t *)q)[-1] & TAG) != 0;
}

struct tag {
	char *base;
	uint64_t size, points, off;
};

static inline void tag_read(const void *q, struct tag *t)
{
	const uint64_t *w = q;
	t->size = w[-1] >> 4;
	t->points = w[-2] >> 8;
	t->off = (uint64_t)1 << (w[-2] & 63);
	t->base = (char *)q - t->off;
}

/* ---- bootstrap arena: serves dlsym's own allocations ------------------- */

static char boot_arena[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

static void *boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	/* 16 bytes before each block: its tag word (see tagged blocks). */
	size_t at = (boot_used + 16 + align - 1) & ~(align - 1);
	if (at > sizeof(boot_arena) || n > sizeof(boot_arena) - at)
		return NULL;
	boot_used = at + n;
	/* Whatever the allocator turns out to be, free() takes its slow path
	 * for these: the tag bit, and a filter hit. */
	((uint64_t *)(boot_arena + at))[-1] = TAG;
	mt_sampler_table_pin(boot_arena + at);
	return boot_arena + at;	/* static storage: already zero */
}

static int boot_owns(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof(boot_arena);
}

/* ---- locks -------------------------------------------------------------- */

/* Mutexes, not spinlocks: see sampler_table.c.  Neither allocates.
 * reg_held: this thread holds reg_mutex (a signal handler calling _exit
 * must not wait for it then). */
static TLS int reg_held;

static void reg_lock(void)
{
	pthread_mutex_lock(&reg_mutex);
	reg_held = 1;
}

static void reg_unlock(void)
{
	reg_held = 0;
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

/* valloc and pvalloc of an allocator that lacks them (jemalloc has no
 * pvalloc): dlsym would find glibc's, whose blocks that allocator can
 * neither size nor free. */
static void *paged_valloc(size_t n)
{
	return real.memalign(page_size, n);
}

static void *paged_pvalloc(size_t n)
{
	if (n > SIZE_MAX - page_size) {
		errno = ENOMEM;
		return NULL;
	}
	return real.memalign(page_size, n ? (n + page_size - 1) & ~(page_size - 1) : page_size);
}

/* Is fn defined by the object that defines the real malloc? */
static int beside_malloc(void *fn)
{
	Dl_info a, b;
	return fn && dladdr(fn, &a) && dladdr((void *)real.malloc, &b) && a.dli_fbase == b.dli_fbase;
}

static void on_thread_exit(void *arg);
/* ---- process images ------------------------------------------------------
 * Each thread draws from a generator of its own (sampler_rand.h), seeded
 * from the seed, the process image's stream and the thread's ordinal.  A
 * forked child and a program exec'd through the wrappers below get a stream
 * derived from their parent's and the parent's count of images started, so
 * that they never repeat its draws (a child that kept its parent's
 * generator sampled the very allocations the parent sampled after the
 * fork: four forked workers doing the same work, one sample each time) and
 * the same --seed gives the same draws to a program that runs the same way.
 * An exec passes the stream in MT_SAMPLER_STREAM=HEX:PID (seeded runs only:
 * an unseeded image draws a fresh seed), PID the process that execs: an
 * exec keeps it.  An image takes the value only when PID is its own, and
 * marks it read (its first digit becomes 'x', so that an exec that passes
 * it on unchanged does not hand the same stream on); any other value was
 * inherited past an exec nobody passed a stream to (posix_spawn, a program
 * without the sampler, a raw execve): that image draws a random stream,
 * independent but not reproducible.  No value: the first image, stream 0
 * (mt-capture gives its command HEX 0 and the command's pid). */
#define STREAM_VAR "MT_SAMPLER_STREAM="
#define STREAM_VAR_LEN (sizeof(STREAM_VAR) - 1 + 16 + 1 + 20 + 1)
#define STREAM_ENV_MAX 1024	/* larger environments go through as they are */

static uint64_t stream;		/* this image's */
static uint64_t offspring;	/* images it started: forks and execs */
static uint64_t fork_stream;	/* the next forked child's (before_fork) */

/* 64 bits from getrandom, else from the clock and the pid. */
static uint64_t fresh_random(void)
{
	uint64_t r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

static uint64_t image_stream(void)
{
	char *s = getenv("MT_SAMPLER_STREAM"), *end;
	if (!s || !*s)
		return 0;
	uint64_t v = strtoull(s, &end, 16);
	if (*s != 'x' && end != s && *end == ':' && strtoll(end + 1, NULL, 10) == getpid()) {
		*s = 'x';
		return v;
	}
	return mt_sampler_rand_child(v ^ fresh_random(), (uint64_t)1 << 63 | (uint64_t)getpid());
}

static uint64_t next_image_stream(void)
{
	return mt_sampler_rand_child(stream, __atomic_add_fetch(&offspring, 1, __ATOMIC_RELAXED));
}

/* Slots exec_env needs for envp, 0 when envp goes through unchanged. */
static size_t exec_env_slots(char *const envp[])
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2 || !seeded || !envp)
		return 0;
	size_t n = 0;
	while (envp[n])
		if (++n > STREAM_ENV_MAX)
			return 0;
	return n + 2;
}

/* Digits of v in base (16 or 10) at p; @return : past the last one. */
static char *put_digits(char *p, uint64_t v, unsigned base, int width)
{
	char d[24];
	int n = 0;
	do
		d[n++] = "0123456789abcdef"[v % base];
	while ((v /= base) || n < width);
	while (n)
		*p++ = d[--n];
	return p;
}

/* The environment for an exec: envp with the new image's stream in var
 * (STREAM_VAR_LEN bytes) instead of any MT_SAMPLER_STREAM, in out (slots
 * entries: no more are written, should envp have grown meanwhile); envp
 * itself when slots is 0.  No allocation: a vfork child may be calling. */
static char *const *exec_env(char *const envp[], size_t slots, char **out, char *var)
{
	if (!slots)
		return envp;
	size_t n = 0, len = sizeof(STREAM_VAR) - 1;
	for (size_t i = 0; envp[i] && n < slots - 2; i++)
		if (strncmp(envp[i], STREAM_VAR, len))
			out[n++] = envp[i];
	memcpy(var, STREAM_VAR, len);
	char *p = put_digits(var + len, next_image_stream(), 16, 16);
	*p++ = ':';
	*put_digits(p, (uint64_t)getpid(), 10, 1) = '\0';
	out[n++] = var;
	out[n] = NULL;
	return out;
}

/* In an exec wrapper: env, the environment to pass instead of envp (read
 * once: another thread may change environ meanwhile). */
#define EXEC_ENV(envp, env)                                      \
	char *const *env##_in = (envp);                          \
	size_t env##_nslots = exec_env_slots(env##_in);          \
	char *env##_out[env##_nslots ? env##_nslots : 1];        \
	char env##_var[STREAM_VAR_LEN];                          \
	char *const *env = exec_env(env##_in, env##_nslots, env##_out, env##_var)

static void before_fork(void);
static void after_fork_parent(void);
static void after_fork_child(void);
static void tick_locked(void);
static void ticker_start(void);
static void reg_lock(void);
static void reg_unlock(void);

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
	real.exit_now = dlsym(RTLD_NEXT, "_exit");
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
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (real.memalign && beside_malloc((void *)real.memalign)) {
		if (!beside_malloc((void *)real.valloc))
			real.valloc = paged_valloc;
		if (!beside_malloc((void *)real.pvalloc))
			real.pvalloc = paged_pvalloc;
	}
	mt_sampler_gapgen_init(&gapgen, env_u64("MT_SAMPLER_RATE", 524288, NULL));
	seed = env_u64("MT_SAMPLER_SEED", 0, &seeded);
	if (!seeded)
		seed = fresh_random();
	my_pid = getpid();
	stream = image_stream();
	mt_sampler_ring_init(my_pid);
	pthread_key_create(&exit_key, on_thread_exit);
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	tick_thread_on = env_u64("MT_SAMPLER_TICK", 1, NULL) != 0;
	/* Tick 0, before any allocation is counted: live 0. */
	reg_lock();
	tick_locked();
	reg_unlock();
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
	if (ready())
		ticker_start();
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
	b->rng = mt_sampler_rand_state(seed, stream, ++thread_ordinal);
	b->next = registry;
	registry = b;
	if (++threads_alive > threads_max)
		threads_max = threads_alive;
	threads_ever++;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* g_peak = max(g_peak, live); a rise notes its time (slow paths only: at
 * most once per PUBLISH_BATCH / 2 of a thread's live change, and ticks). */
static void raise_peak(int64_t live)
{
	int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
	while (live > peak) {
		if (__atomic_compare_exchange_n(&g_peak, &peak, live, 1, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&g_peak_time, mono_ns(), __ATOMIC_RELAXED);
			break;
		}
	}
}

/* The process peak so far (at least live) and the bound on its error.
 * While one thread has ever counted, its own peak, settled on each of its
 * slow paths, is the process's: exact.  Otherwise the batched g_peak, off
 * by at most threads * PUBLISH_BATCH, and never by more than the room
 * between 0 and the block bytes allocated so far (usable), where both the
 * true peak and g_peak lie.  Registry lock held. */
static uint64_t process_peak(int64_t live, uint64_t usable, uint64_t *error)
{
	int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
	if (live > peak)
		peak = live;
	if (threads_ever == 1 && registry && !registry->next) {
		int64_t own = rds(&registry->peak);
		*error = 0;
		return (uint64_t)(own > peak ? own : peak);
	}
	uint64_t p = (uint64_t)peak, err = (uint64_t)threads_max * PUBLISH_BATCH;
	uint64_t room = usable > p ? usable - p : 0;
	if (room < p)
		room = p;
	*error = err < room ? err : room;
	return p;
}

/* Add the thread's live bytes (now @live) not yet in g_live. */
static void publish(struct block *b, int64_t live)
{
	int64_t d = live - b->published;
	b->published = live;
	int64_t now = __atomic_add_fetch(&g_live, d, __ATOMIC_RELAXED);
	raise_peak(now);
}

/* ---- reports ------------------------------------------------------------ */

/* The rate for R15 of mt:totals (0 where it does not fit beside the tag). */
static uint64_t tagged_rate(void)
{
	return gapgen.rate >> 48 ? 0 : MT_SAMPLER_RATE_TAG | gapgen.rate;
}

static void report_thread(const struct block *b, uint64_t scope)
{
	uint64_t v[MT_SAMPLER_TOTALS] = {
		scope, blk_alloc_bytes(b), rd(&b->allocs), rd(&b->frees),
		rd(&b->freed_bytes), (uint64_t)rds(&b->peak), 0, rd(&b->tid),
		rd(&b->alloc_usable), __atomic_load_n(&untracked, __ATOMIC_RELAXED),
		rd(&b->alloc_marks), rd(&b->free_marks), tagged_rate(),
	};
	mt_sampler_report_totals(v);
}

/* The process's counts: retired threads plus live blocks (read relaxed: a
 * thread still running may be a few calls ahead).  Registry lock held. */
struct sums {
	uint64_t alloc_bytes, allocs, frees, freed_bytes, alloc_usable, alloc_marks, free_marks;
	int64_t unpublished;	/* live bytes not in g_live yet */
};

static void sum_locked(struct sums *s)
{
	s->alloc_bytes = retired.alloc_bytes;
	s->allocs = retired.allocs;
	s->frees = retired.frees;
	s->freed_bytes = retired.freed_bytes;
	s->alloc_usable = retired.alloc_usable;
	s->alloc_marks = rd(&retired.alloc_marks);
	s->free_marks = rd(&retired.free_marks) +
			__atomic_load_n(&blockless_free_marks, __ATOMIC_RELAXED);
	s->unpublished = 0;
	for (struct block *b = registry; b; b = b->next) {
		s->alloc_bytes += blk_alloc_bytes(b);
		s->allocs += rd(&b->allocs);
		s->frees += rd(&b->frees);
		s->freed_bytes += rd(&b->freed_bytes);
		s->alloc_usable += rd(&b->alloc_usable);
		s->alloc_marks += rd(&b->alloc_marks);
		s->free_marks += rd(&b->free_marks);
		s->unpublished += blk_live(b) - rds(&b->published);
	}
}

/* ---- the timeline --------------------------------------------------------
 * mt:tick: the process's exact counts, its RSS and its peak so far, at
 * start-up (tick 0, live 0), every period from a ticker thread, and in the
 * final report (exit, _exit, exec: before the process totals, from the same
 * counts).  A thread, as heaptrack's timer thread: the program's own
 * threads may all sleep or block, and a timer signal would interrupt its
 * system calls.  The ticker blocks every signal (they are the program's),
 * is named mt-tick, never allocates (no block of its own: it reads
 * /proc/self/statm with open/read/close) and never exits (its exit would
 * free through the allocator).  It is visible in /proc and makes the
 * process multi-threaded: a program that must be single-threaded
 * (unshare(CLONE_NEWUSER)) wants MT_SAMPLER_TICK=0 (mt-capture
 * --no-timeline), which leaves the start-up and final ticks.  The period is
 * TICK_NS, doubled after each TICK_DOUBLING ticks: at most TICK_DOUBLING
 * points per doubling, O(log run time) in all.  A tick and its emission are
 * made under the registry lock, so that no tick follows the final report
 * or crosses it. */
#define TICK_NS 10000000ULL
#define TICK_DOUBLING 30000

static uint64_t tick_period(void)
{
	uint64_t d = tick_no / TICK_DOUBLING;
	return TICK_NS << (d < 40 ? d : 40);
}

/* Resident bytes (/proc/self/statm, field 2), UINT64_MAX when unreadable. */
static uint64_t read_rss(void)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	char buf[128];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = 0;
	const char *c = buf;
	while (*c >= '0' && *c <= '9')
		c++;
	if (*c != ' ' || c[1] < '0' || c[1] > '9')
		return UINT64_MAX;
	uint64_t pages = 0;
	for (c++; *c >= '0' && *c <= '9'; c++)
		pages = pages * 10 + (uint64_t)(*c - '0');
	return pages * page_size;
}

/* The tick of the counts s.  Registry lock held. */
static void tick_emit(const struct sums *s)
{
	int saved = errno;
	int64_t live = (int64_t)(s->alloc_usable - s->freed_bytes);
	raise_peak(live);
	uint64_t error, peak = process_peak(live, s->alloc_usable, &error);
	uint64_t v[MT_SAMPLER_TOTALS] = {
		(uint64_t)live, s->alloc_bytes, s->allocs, s->frees, s->alloc_usable, read_rss(),
		peak, (uint64_t)getpid(), __atomic_load_n(&g_peak_time, __ATOMIC_RELAXED),
		error, tick_no, tick_period(), tagged_rate(),
	};
	tick_no++;
	mt_sampler_report_tick(v);
	errno = saved;
}

/* Registry lock held. */
static void tick_locked(void)
{
	struct sums s;
	sum_locked(&s);
	tick_emit(&s);
}

static int final_report;

static __attribute__((noreturn)) void *ticker_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_NAME, "mt-tick", 0, 0, 0);
	uint64_t next = mono_ns();
	for (;;) {
		uint64_t now = mono_ns(), period = tick_period();
		next += period;
		if (next < now)	/* fell behind (a stopped process): no burst */
			next = now + period;
		struct timespec at = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		reg_lock();
		int over = __atomic_load_n(&final_report, __ATOMIC_ACQUIRE) != 0;
		if (!over && !tick_hold)
			tick_locked();
		reg_unlock();
		while (over) {	/* the image's report is made: nothing more */
			struct timespec hour = { 3600, 0 };
			nanosleep(&hour, NULL);
		}
	}
}

/* Start the ticker (with every signal blocked from its first instruction).
 * What pthread_create allocates for it (its TLS) is the ticker's, not the
 * program's: the calling thread goes uncounted meanwhile, as in init. */
static void ticker_start(void)
{
	if (!tick_thread_on)
		return;
	int saved = errno;
	struct block *me = self, *me_glibc = self_glibc;
	self = self_glibc = NULL;
	in_init = 1;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t a;
	pthread_t t;
	int rc = pthread_attr_init(&a);
	if (!rc) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		/* Small, unless the program's static TLS (carved from every
		 * thread's stack) needs more: then the default size. */
		pthread_attr_setstacksize(&a, 256 * 1024);
		rc = pthread_create(&t, &a, ticker_main, NULL);
		if (rc == EINVAL) {
			pthread_attr_destroy(&a);
			pthread_attr_init(&a);
			pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
			rc = pthread_create(&t, &a, ticker_main, NULL);
		}
		pthread_attr_destroy(&a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	in_init = 0;
	self = me;
	self_glibc = me_glibc;
	if (rc) {
		static const char msg[] = "libmt-sampler: cannot start the timeline's thread: "
					  "ticks only at start and end\n";
		if (write(2, msg, sizeof(msg) - 1) < 0) {
		}
	}
	errno = saved;
}

/* Process totals, after the process's final tick, and each live thread's
 * own, in thread_scope (the threads an exit or exec ends without their own
 * report).  Called with the registry lock held; releases it. */
static void report_process_locked(uint64_t thread_scope)
{
	struct sums s;
	sum_locked(&s);
	tick_emit(&s);	/* the same counts: the last tick is the totals' */
	uint64_t v[MT_SAMPLER_TOTALS] = { SCOPE_PROCESS };
	v[12] = tagged_rate();
	v[1] = s.alloc_bytes;
	v[2] = s.allocs;
	v[3] = s.frees;
	v[4] = s.freed_bytes;
	v[8] = s.alloc_usable;
	v[10] = s.alloc_marks;
	v[11] = s.free_marks;
	for (struct block *b = registry; b; b = b->next)
		report_thread(b, thread_scope);
	int64_t now = __atomic_load_n(&g_live, __ATOMIC_RELAXED) + s.unpublished;
	v[5] = process_peak(now, s.alloc_usable, &v[6]);
	v[7] = (uint64_t)getpid();
	v[9] = __atomic_load_n(&untracked, __ATOMIC_RELAXED);
	reg_unlock();
	mt_sampler_report_totals(v);
}

static void report_process(uint64_t thread_scope)
{
	reg_lock();
	if (thread_scope == SCOPE_EXEC)
		tick_hold = 1;	/* until the exec fails (exec_failed) */
	report_process_locked(thread_scope);
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
	report_thread(b, SCOPE_THREAD);
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

/* The end of the process image: exit() (the destructor) or _exit().  One
 * report only, by the first caller (two would add every thread's totals
 * twice); the others wait up to a second for it to be done, so that their
 * exit_group does not cut it short.  (final_report: 0 none, 1 reporting,
 * 2 done.) */

static int final_report_take(void)
{
	int none = 0;
	if (__atomic_compare_exchange_n(&final_report, &none, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return 1;
	for (int i = 0; i < 1000 && __atomic_load_n(&final_report, __ATOMIC_ACQUIRE) != 2; i++) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return 0;
}

static void final_report_done(void)
{
	__atomic_store_n(&final_report, 2, __ATOMIC_RELEASE);
}

/* The image's final report, by the first caller.  wait: take the registry
 * lock as any report does (exit()).  Else (_exit, maybe in a signal
 * handler that interrupted its own thread holding the lock): nothing is
 * reported then, as for a process killed by a signal (mt-unwind counts
 * it), and another thread holding it is waited for a second at most. */
static void report_final(int wait)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2 || getpid() != my_pid ||
	    !final_report_take())
		return;
	int locked = wait;
	if (wait) {
		reg_lock();
	} else if (!reg_held) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		locked = pthread_mutex_timedlock(&reg_mutex, &until) == 0;
	}
	if (locked) {
		reg_held = 1;
		if (self)
			self->busy = 1;
		report_process_locked(SCOPE_THREAD);
	}
	final_report_done();
}

__attribute__((destructor)) static void sampler_dtor(void)
{
	report_final(1);
}

/* _exit and _Exit skip the destructors: the process reports here (python's
 * multiprocessing workers, a forked child's usual end). */
static _Noreturn void exit_reporting(int status)
{
	report_final(0);
	if (real.exit_now)
		real.exit_now(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT _Noreturn void _exit(int status)
{
	exit_reporting(status);
}

EXPORT _Noreturn void _Exit(int status)
{
	exit_reporting(status);
}

/* ---- fork --------------------------------------------------------------- */

static void before_fork(void)
{
	reg_lock();
	mt_sampler_table_lock();
	fork_stream = next_image_stream();
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
	threads_alive = threads_max = threads_ever = 0;
	memset(&retired, 0, sizeof(retired));
	blockless_free_marks = 0;
	g_live = g_peak = 0;
	final_report = 0;
	my_pid = getpid();
	mt_sampler_ring_after_fork(my_pid);
	stream = fork_stream;
	offspring = thread_ordinal = 0;
	if (me) {
		/* Draws of its own (see "process images"); a fresh gap to the
		 * next point is as good as the rest of the parent's: the
		 * geometric gap has no memory. */
		memset(me, 0, sizeof(*me));
		me->rng = mt_sampler_rand_state(seed, stream, ++thread_ordinal);
		me->remaining = (int64_t)mt_sampler_gap_next(&gapgen, &me->rng);
		me->drawn = (uint64_t)me->remaining;
		me->tid = (uint64_t)gettid();
		me->next = NULL;
		registry = me;
		threads_alive = threads_max = threads_ever = 1;
	}
	/* A new image: its timeline starts again, with its own ticker (the
	 * parent's is not copied; glibc has reset its locks by now). */
	g_peak_time = 0;
	tick_no = 0;
	tick_hold = 0;
	tick_locked();
	mt_sampler_table_unlock();
	reg_unlock();
	ticker_start();
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

/* Draw the sample points past the first one crossed (remaining <= 0) and
 * the next gap.  @return : the points this allocation covers (>= 1). */
static uint64_t draw_points(struct block *b)
{
	int64_t rem = b->remaining;
	uint64_t after = (uint64_t)-rem;	/* bytes past the first point */
	int64_t next;
	uint64_t points = 1 + mt_sampler_points_after(&gapgen, &b->rng, after, &next);
	/* Additions, not a store: a signal handler's allocation since the
	 * read above still counts (alloc_bytes = drawn - remaining). */
	mt_sampler_add(&b->drawn, (uint64_t)(next - rem));
	mt_sampler_add((uint64_t *)&b->remaining, (uint64_t)(next - rem));
	return points;
}

/* Count a successful allocation: p's block size (for a tagged block, its
 * base's). */
static inline void count_block(struct block *b, const void *p)
{
	uint64_t u = block_size((void *)p);
	mt_sampler_add(&b->allocs, 1);
	mt_sampler_add(&b->alloc_usable, u);
	if (UNLIKELY(mt_sampler_sub_lt0(&b->headroom, u)))
		live_slow(b);
}

/* An untagged sampled allocation (another allocator than glibc's): into
 * the table, then the marker. */
static __attribute__((noinline)) void sample_alloc(struct block *b, const void *p, uint64_t size,
						   int fn)
{
	if (b->busy)
		return;	/* a signal handler inside a slow path: counted, not sampled */
	b->busy = 1;
	uint64_t points = draw_points(b);
	if (mt_sampler_table_insert(p, size, points) < 0)
		__atomic_add_fetch(&untracked, 1, __ATOMIC_RELAXED);
	mt_sampler_mark_alloc(size, p, points, gapgen.rate, (uint64_t)fn, rd(&b->allocs));
	/* Counted after the call: a report racing with it can only be behind. */
	mt_sampler_add(&b->alloc_marks, 1);
	b->busy = 0;
}

/* Count a successful allocation p of size bytes requested, and sample it
 * when it crosses a point (the table path: realloc with another allocator). */
static inline void count_alloc(struct block *b, const void *p, uint64_t size, int fn)
{
	count_block(b, p);
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

/* seq of mt:free: the freeing thread's allocation count (0 without a
 * block).  A free right after its own allocation has the alloc's seq. */
static inline uint64_t free_seq(const struct block *b)
{
	return b ? rd(&b->allocs) : 0;
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

/* The real allocation of n bytes by the function fn stands for (calloc as
 * calloc(1, n)), aligned to align for the aligned ones.  posix_memalign's
 * result goes to *rc. */
static void *real_alloc(int fn, size_t align, size_t n, int *rc)
{
	void *p = NULL;
	switch (fn) {
	case FN_CALLOC:
		return real.calloc(1, n);
	case FN_POSIX_MEMALIGN:
		*rc = real.posix_memalign(&p, align, n);
		return *rc ? NULL : p;
	case FN_ALIGNED_ALLOC:
		return real.aligned_alloc(align, n);
	case FN_MEMALIGN:
		return real.memalign(align, n);
	case FN_VALLOC:
		return real.valloc(n);
	case FN_PVALLOC:
		return real.pvalloc(n);
	default:
		return real.malloc(n);
	}
}

/* An allocation of n bytes that crossed a sample point (n is already
 * subtracted from remaining, which is <= 0): with glibc's allocator a tagged
 * block, else the block and an entry in the table; the marker either way.
 * When the request fails, the bytes are given back to remaining.  Called,
 * never tail-called, from the public functions (keep_frame): the outermost
 * sampler frame of a sample is the function the program called.
 * @return : the block for the program, or NULL (posix_memalign: *rc). */
static __attribute__((noinline)) void *alloc_sampled(struct block *b, int fn, size_t align,
						     size_t n, int *rc)
{
	/* Alignments the real function may refuse: let it decide.  One that
	 * it takes (glibc before 2.38's aligned_alloc rounds it up to a power
	 * of two) is sampled as a tagged block aligned to the power of two
	 * above; the block it gave is handed back unused and uncounted. */
	int bad_align = (fn == FN_POSIX_MEMALIGN || fn == FN_ALIGNED_ALLOC) &&
			(!align || (align & (align - 1)) ||
			 (fn == FN_POSIX_MEMALIGN && align % sizeof(void *)));
	if (UNLIKELY(bad_align) && glibc_chunks && !b->busy) {
		void *p = real_alloc(fn, align, n, rc);
		if (!p) {
			mt_sampler_add((uint64_t *)&b->remaining, n);
			return NULL;
		}
		real.free(p);
		bad_align = 0;
	}
	size_t off = 16;
	if (fn == FN_VALLOC || fn == FN_PVALLOC)
		off = page_size;
	while (off < align && off < ((size_t)1 << 62))
		off <<= 1;
	if (!glibc_chunks || b->busy || n > SIZE_MAX - off || bad_align) {
		/* Untagged: another allocator (the table), a signal handler
		 * inside a slow path (counted, not sampled), or a request that
		 * fails anyway. */
		void *p = real_alloc(fn, align, n, rc);
		if (!p) {
			mt_sampler_add((uint64_t *)&b->remaining, n);
			return NULL;
		}
		count_block(b, p);
		if (!glibc_chunks)
			sample_alloc(b, p, n, fn);
		return p;
	}
	/* busy: a signal handler allocating meanwhile is counted and its
	 * bytes join this sample's; it takes no point itself. */
	b->busy = 1;
	char *base = real_alloc(fn, off, n + off, rc);
	if (!base) {
		mt_sampler_add((uint64_t *)&b->remaining, n);
		b->busy = 0;
		return NULL;
	}
	uint64_t points = draw_points(b);
	char *q = base + off;
	((uint64_t *)q)[-1] = (uint64_t)n << 4 | TAG;
	((uint64_t *)q)[-2] = points << 8 | (uint64_t)__builtin_ctzll(off);
	/* seq: the thread's allocations with this one (counted below). */
	mt_sampler_mark_alloc(n, q, points, gapgen.rate, (uint64_t)fn, rd(&b->allocs) + 1);
	mt_sampler_add(&b->alloc_marks, 1);
	b->busy = 0;
	count_block(b, base);
	return q;
}

/* An opaque use of p after the call that produced it, so that the call is
 * not turned into a tail call (which would drop the caller's frame). */
static inline __attribute__((always_inline)) void *keep_frame(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/* Release the tagged block q (not from the boot arena): counts, marker
 * (before the real free: the address cannot be handed out and sampled
 * again meanwhile), then the real free.  b NULL: not counted.  replaced:
 * q is a realloc's old block and its new one is already counted; the free
 * takes the seq from before it, as the realloc's release of q comes first
 * in the program's view (and in heaptrack's). */
static void release_tagged(struct block *b, void *q, int fn, int replaced)
{
	struct tag t;
	tag_read(q, &t);
	if (b)
		count_release(b, block_size(t.base));
	uint64_t seq = free_seq(b);
	mt_sampler_mark_free(q, t.size, t.points, gapgen.rate, (uint64_t)fn,
			     seq && replaced ? seq - 1 : seq);
	count_free_mark(b);
	real.free(t.base);
}

static __attribute__((noinline)) void sample_free(struct block *b, const void *p, int fn)
{
	struct mt_sampler_entry e;
	if (mt_sampler_table_remove(p, &e)) {
		mt_sampler_mark_free(p, e.size, e.points, gapgen.rate, (uint64_t)fn, free_seq(b));
		count_free_mark(b);
	}
}

/* Count an untagged block about to be released (it must still be
 * allocated, so that its address cannot be handed out and sampled again
 * meanwhile); with another allocator, report it when it was sampled. */
static inline void count_free(void *p, int fn)
{
	struct block *b = block_self();
	if (LIKELY(b != NULL))
		count_release(b, block_size(p));
	if (UNLIKELY(!glibc_chunks && mt_sampler_table_maybe(p)))
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

/* The counting and sampling around CALL, an allocation of n bytes by fn:
 * the sampling decision comes first, since a sampled block is allocated
 * differently (alloc_sampled). */
#define ALLOC(b, fn, align, n, CALL)                                          \
	if (UNLIKELY(mt_sampler_sub_le0(&b->remaining, n)))                    \
		return keep_frame(alloc_sampled(b, fn, align, n, NULL));       \
	void *p = CALL;                                                        \
	if (LIKELY(p != NULL))                                                 \
		count_block(b, p);                                             \
	else                                                                   \
		mt_sampler_add((uint64_t *)&b->remaining, n);                  \
	return p

EXPORT void *malloc(size_t n)
{
	ENTER(b, boot_alloc(n, 16), real.malloc(n));
	ALLOC(b, FN_MALLOC, 0, n, real.malloc(n));
}

/* free()'s less common paths, out of line so that its fast path needs no
 * stack frame: each ends in the real free (or, for the boot arena's blocks,
 * in nothing). */
static __attribute__((noinline)) void free_slow(void *p)
{
	if (UNLIKELY(!ready()) || boot_owns(p))
		return;	/* !ready cannot happen: p came from somewhere */
	if (glibc_chunks && is_tagged(p)) {
		release_tagged(block_self(), p, FN_FREE, 0);
		return;
	}
	count_free(p, FN_FREE);
	real.free(p);
}

static __attribute__((noinline)) void free_settle(struct block *b, void *p)
{
	live_slow(b);
	real.free(p);
}

/* A tagged block: sampled, or from the boot arena (never given to the
 * real free). */
static __attribute__((noinline)) void free_tagged(struct block *b, void *p)
{
	if (boot_owns(p))
		return;
	release_tagged(b, p, FN_FREE, 0);
}

EXPORT void free(void *p)
{
	if (UNLIKELY(!p))
		return;
	struct block *b = self_glibc;
	if (UNLIKELY(!b)) {
		free_slow(p);
		return;
	}
	uint64_t w = ((const uint64_t *)p)[-1];	/* glibc's chunk size, or a tag */
	if (UNLIKELY(w & TAG)) {
		free_tagged(b, p);
		return;
	}
	uint64_t u = w & ~(uint64_t)7;	/* block_size() */
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
	ALLOC(b, FN_CALLOC, 0, total, real.calloc(n, size));
}

/* realloc with another allocator than glibc's: sampled blocks are in the
 * table. */
static inline __attribute__((always_inline)) void *realloc_table(struct block *b, void *old,
								  size_t n, int fn)
{
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
		mt_sampler_mark_free(old, e.size, e.points, gapgen.rate, (uint64_t)fn, free_seq(b));
		count_free_mark(b);
	}
	if (p && b)
		count_alloc(b, p, n, fn);
	return p;
}

/* Usable bytes of a live block (see malloc_usable_size). */
static size_t usable_of(void *p)
{
	if (boot_owns(p))
		return (size_t)(boot_arena + sizeof(boot_arena) - (char *)p);
	if (glibc_chunks && is_tagged(p)) {
		struct tag t;
		tag_read(p, &t);
		return real.usable(t.base) - t.off;
	}
	return real.usable(p);
}

/* A new block of n bytes for realloc, counted and sampled as fn's (b NULL:
 * neither).  Inlined for the same reason as do_realloc. */
static inline __attribute__((always_inline)) void *realloc_new(struct block *b, size_t n, int fn)
{
	if (!b)
		return real.malloc(n);
	if (UNLIKELY(mt_sampler_sub_le0(&b->remaining, n)))
		return keep_frame(alloc_sampled(b, fn, 0, n, NULL));
	void *p = real.malloc(n);
	if (LIKELY(p != NULL))
		count_block(b, p);
	else
		mt_sampler_add((uint64_t *)&b->remaining, n);
	return p;
}

/* Inlined: the outermost sampler frame of a sample must be the public name
 * (realloc, reallocarray), see docs/formats/capture-events.md.  With
 * glibc's allocator, a sampled block (old, or the new one when n crosses a
 * sample point) cannot be resized in place: allocate, copy, release. */
static inline __attribute__((always_inline)) void *do_realloc(void *old, size_t n, int fn)
{
	if (UNLIKELY(!ready()))
		return boot_alloc(n, 16);
	struct block *b = block_self();
	if (!old)
		return realloc_new(b, n, fn);
	int boot = boot_owns(old);
	if (!glibc_chunks && !boot)
		return realloc_table(b, old, n, fn);
	int moves = boot || is_tagged(old);
	if (!moves && b) {
		if (LIKELY(!mt_sampler_sub_le0(&b->remaining, n))) {
			/* the common case: no sampled block involved */
			uint64_t u_old = block_size(old);
			void *p = real.realloc(old, n);
			if (!p && n) {
				mt_sampler_add((uint64_t *)&b->remaining, n);
				return NULL;
			}
			count_release(b, u_old);
			if (p)
				count_block(b, p);
			return p;
		}
		mt_sampler_add((uint64_t *)&b->remaining, n);	/* realloc_new decides */
	} else if (!moves) {
		return real.realloc(old, n);	/* a thread without counters */
	}
	/* realloc(p, 0) frees p and returns NULL, as glibc's does. */
	void *p = n ? realloc_new(b, n, fn) : NULL;
	if (!p && n)
		return NULL;	/* old is untouched */
	if (p) {
		size_t had = usable_of(old);
		memcpy(p, old, n < had ? n : had);
	}
	if (boot) {
		/* the boot arena keeps its blocks */
	} else if (is_tagged(old)) {
		release_tagged(b, old, fn, p != NULL);
	} else {
		if (b)
			count_release(b, block_size(old));
		real.free(old);
	}
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
	if (UNLIKELY(mt_sampler_sub_le0(&b->remaining, n))) {
		int rc = 0;
		void *p = keep_frame(alloc_sampled(b, FN_POSIX_MEMALIGN, align, n, &rc));
		if (p)
			*out = p;
		return rc;
	}
	int rc = real.posix_memalign(out, align, n);
	if (rc == 0)
		count_block(b, *out);
	else
		mt_sampler_add((uint64_t *)&b->remaining, n);
	return rc;
}

#define ALIGNED(name, fn_code)                                      \
	EXPORT void *name(size_t align, size_t n)                   \
	{                                                           \
		ENTER(b, boot_alloc(n, align), real.name(align, n)); \
		ALLOC(b, fn_code, align, n, real.name(align, n));   \
	}
ALIGNED(aligned_alloc, FN_ALIGNED_ALLOC)
ALIGNED(memalign, FN_MEMALIGN)

#define PAGED(name, fn_code)                                        \
	EXPORT void *name(size_t n)                                 \
	{                                                           \
		ENTER(b, boot_alloc(n, 4096), real.name(n));        \
		ALLOC(b, fn_code, 0, n, real.name(n));              \
	}
PAGED(valloc, FN_VALLOC)
PAGED(pvalloc, FN_PVALLOC)

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (UNLIKELY(!boot_owns(p) && !ready()))
		return 0;
	return usable_of(p);
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
	report_process(SCOPE_EXEC);
	if (b)
		b->busy = 0;
}

/* The exec failed: the image goes on, and so do its ticks. */
static int exec_failed(int rc)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2 && getpid() == my_pid) {
		int saved = errno;
		reg_lock();
		tick_hold = 0;
		reg_unlock();
		errno = saved;
	}
	return rc;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	EXEC_ENV(envp, env);
	return exec_failed(real.execve(path, argv, env));
}

EXPORT int execv(const char *path, char *const argv[])
{
	before_exec();
	EXEC_ENV(environ, env);
	return exec_failed(real.execve(path, argv, env));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_exec();
	EXEC_ENV(envp, env);
	return exec_failed(real.execvpe(file, argv, env));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	before_exec();
	EXEC_ENV(environ, env);
	return exec_failed(real.execvpe(file, argv, env));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_exec();
	EXEC_ENV(envp, env);
	return exec_failed(real.fexecve(fd, argv, env));
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
