/* The sampler's side of the sample ring.  A marker's record carries the
 * registers as at the marker's entry and, for mt:alloc, a copy of the stack
 * from that stack pointer up: what the uprobe's sample would have held.
 *
 * The copy must stop where the stack's mapping ends (the kernel's copy stops
 * at the first unmapped byte).  Each thread finds its own stack's mapping
 * once, in /proc/self/maps: the one holding the thread pointer (glibc puts
 * a thread's descriptor at the top of its stack) or, for the main thread,
 * __libc_stack_end.  On its own stack a thread's copy also stops where its
 * frames end, which the kernel cannot know: below the descriptor (and the
 * static TLS under it), or just above the main thread's first frame (the
 * arguments, environment and auxiliary vector lie above).  Those bytes are
 * no unwinder's business and were half of a shallow stack's dump.  A stack
 * pointer outside it (a signal handler on an alternate stack, a coroutine's
 * stack) has its mapping looked up each time, up to 16 times per thread,
 * then is copied with process_vm_readv(), which stops at unmapped memory by
 * itself (a system call, many times slower than a memcpy).  Nothing here
 * allocates. */
#include "capture/sampler_ring.h"
#include "capture/sample_ring.h"

#include <emmintrin.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TLS __thread __attribute__((tls_model("initial-exec")))
#define REG_SP 7
#define MAX_STACK 65528
#define MAX_LOOKUPS 16

extern void *__libc_stack_end;

int mt_sampler_ring_on;
static struct mt_sample_ring ring;
static uint64_t stack_size;
static int samples_wait;	/* a full ring: samples wait for room (else dropped) */
static pid_t ring_pid;

static TLS uint32_t my_tid;
static TLS int emitting;	/* in mt_sampler_ring_emit (a signal handler may nest) */
static TLS uintptr_t home_lo, home_hi;	/* the thread's own stack mapping */
static TLS int home_known, lookups;

static void say(const char *a, const char *b, const char *c)
{
	const char *parts[] = { "libmt-sampler: ", a, b, c, "\n" };
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i] && write(2, parts[i], strlen(parts[i])) < 0)
			return;
}

void mt_sampler_ring_init(pid_t pid)
{
	const char *v = getenv(MT_SAMPLE_RING_ENV);
	ring_pid = pid;
	if (!v || !*v)
		return;
	char *end;
	uint64_t token = strtoull(v, &end, 16);
	const char *path = end + 1;
	const char *why = "malformed " MT_SAMPLE_RING_ENV;
	if (*end == ':') {
		int fd = open(path, O_RDWR | O_CLOEXEC);
		struct stat sb;
		void *map = MAP_FAILED;
		why = NULL;
		if (fd < 0 || fstat(fd, &sb) || sb.st_size <= 0)
			why = strerror(errno);
		else if ((map = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				     0)) == MAP_FAILED)
			why = strerror(errno);
		else if (mt_sample_ring_attach(&ring, map, (size_t)sb.st_size, token))
			why = "not the ring of this capture";
		else if (ring.h->pid_ns && ring.h->pid_ns != mt_sample_ring_pid_ns())
			why = "another pid namespace than mt-capture's: its pids would not match";
		if (fd >= 0)
			close(fd);
		if (!why) {
			stack_size = ring.h->stack_size > MAX_STACK ? MAX_STACK : ring.h->stack_size & ~7ULL;
			samples_wait = ring.h->wait != 0;
			__atomic_store_n(&mt_sampler_ring_on, 1, __ATOMIC_RELEASE);
			return;
		}
		if (map != MAP_FAILED)
			munmap(map, (size_t)sb.st_size);
	}
	say("cannot attach to the capture's sample ring (", why,
	    "): this process's allocations are not captured");
}

void mt_sampler_ring_after_fork(pid_t pid)
{
	ring_pid = pid;
	my_tid = 0;
}

static uint32_t tid(void)
{
	if (!my_tid)
		my_tid = (uint32_t)gettid();
	return my_tid;
}

/* The mapping that holds addr, from /proc/self/maps (read with plain system
 * calls, parsed as it streams by).  @return : 0 with [*lo, *hi), or -1. */
static int mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[4096];
	uintptr_t v[2] = { 0, 0 };
	int field = 0, found = -1;	/* field: 0 start, 1 end, 2 rest of line */
	ssize_t n;
	while (found < 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && found < 0; i++) {
			char c = buf[i];
			if (c == '\n') {
				field = 0;
				v[0] = v[1] = 0;
			} else if (field < 2) {
				int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
				if (d >= 0) {
					v[field] = v[field] << 4 | (uintptr_t)d;
				} else if (++field == 2 && v[0] <= addr && addr < v[1]) {
					*lo = v[0];
					*hi = v[1];
					found = 0;
				}
			}
		}
	}
	close(fd);
	return found;
}

/* Bytes above __libc_stack_end (where argc lies) that the main thread's
 * copy keeps: _start's frame starts right below it, and what lies above is
 * argv, the environment and the auxiliary vector. */
#define MAIN_STACK_MARGIN 64

/* Is [lo, hi), which holds sp, this thread's own stack with sp in its
 * frames (see the top of the file)?  Then *top is where the frames end: for
 * a glibc thread's stack block, the descriptor (the thread pointer: its
 * static TLS blocks lie below it, its frames below those); for the main
 * thread's [stack], just above __libc_stack_end.  (A child forked by a
 * thread other than main runs on that thread's stack block.)  An sp above
 * that is on another stack that shares the mapping (a coroutine's stack
 * mmap'd next to the descriptor's memory). */
static int home_stack(uintptr_t lo, uintptr_t hi, uintptr_t sp, uintptr_t *top)
{
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
	uintptr_t start = (uintptr_t)__libc_stack_end;
	if (tp >= lo && tp < hi) {
		*top = tp;
		return sp < tp;
	}
	if (tid() == (uint32_t)ring_pid && start >= lo && start < hi) {
		*top = hi - start > MAIN_STACK_MARGIN ? start + MAIN_STACK_MARGIN : hi;
		return sp < *top;
	}
	return 0;
}

/* How many bytes from sp up can be read with memcpy: up to want, or -1 when
 * that is not known (copy with process_vm_readv). */
static long stack_extent(uintptr_t sp, uint64_t want)
{
	uintptr_t lo, hi;
	if (!(home_known && sp >= home_lo && sp < home_hi)) {
		if (lookups >= MAX_LOOKUPS)
			return -1;
		if (mapping_of(sp, &lo, &hi)) {
			lookups = MAX_LOOKUPS;	/* no /proc here: do not try again */
			return -1;
		}
		uintptr_t top;
		if (home_stack(lo, hi, sp, &top)) {
			home_lo = lo;
			home_hi = top;
			home_known = 1;
		} else {
			lookups++;
			return (long)(hi - sp < want ? hi - sp : want);
		}
	}
	return (long)(home_hi - sp < want ? home_hi - sp : want);
}

/* Copy up to n bytes from sp, stopping at the first unmapped page.
 * @return : bytes copied. */
static uint64_t copy_checked(unsigned char *to, uintptr_t sp, uint64_t n)
{
	struct iovec local = { to, n }, remote[MAX_STACK / 4096 + 2];
	int k = 0;
	for (uintptr_t a = sp, e = sp + n; a < e; k++) {
		uintptr_t next = (a | 4095) + 1;
		if (next > e)
			next = e;
		remote[k] = (struct iovec){ (void *)a, next - a };
		a = next;
	}
	ssize_t got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)k, 0);
	return got > 0 ? (uint64_t)got : 0;
}

/* Copy n bytes (a multiple of 8) to the 16-byte aligned to with
 * non-temporal stores: the copy is for mt-capture, on another CPU, and
 * should not push the program's own data out of this CPU's caches. */
static void copy_streaming(unsigned char *to, const unsigned char *from, size_t n)
{
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(from + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(from + i + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(from + i + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(from + i + 48));
		_mm_stream_si128((__m128i *)(to + i), a);
		_mm_stream_si128((__m128i *)(to + i + 16), b);
		_mm_stream_si128((__m128i *)(to + i + 32), c);
		_mm_stream_si128((__m128i *)(to + i + 48), d);
	}
	_mm_sfence();	/* before the commit's release store */
	memcpy(to + i, from + i, n - i);
}

/* A full ring: wait for mt-capture to make room, as long as it reads.
 * Totals and ticks always wait (totals come once per thread and process,
 * ticks once per period, and nothing else carries them); samples unless the capture asked to drop them
 * (--no-wait), and not in a signal handler that interrupted this thread's
 * own write (the reader waits for that record: nobody would make room).
 * A second in which mt-capture read nothing means it is gone (killed, or
 * its output blocks): then nobody in this process waits again. */
static struct mt_sample_ring_record *wait_for_room(size_t len, uint32_t kind, uint64_t *pos)
{
	static int reader_gone;
	uint64_t tail = __atomic_load_n(&ring.h->tail, __ATOMIC_RELAXED), since = mt_sample_ring_now();
	uint64_t start = since;
	struct mt_sample_ring_record *rec = NULL;
	mt_sample_ring_wake(&ring);
	while (!__atomic_load_n(&reader_gone, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ring.h->closed, __ATOMIC_RELAXED)) {
		struct timespec pause = { 0, 100000 };
		nanosleep(&pause, NULL);
		rec = mt_sample_ring_reserve(&ring, len, kind, (uint32_t)ring_pid, tid(), pos);
		if (rec)
			break;
		uint64_t t = __atomic_load_n(&ring.h->tail, __ATOMIC_RELAXED), now = mt_sample_ring_now();
		if (t != tail) {
			tail = t;
			since = now;
		} else if (now - since > 1000000000u) {
			__atomic_store_n(&reader_gone, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_add_fetch(&ring.h->waited_ns, mt_sample_ring_now() - start, __ATOMIC_RELAXED);
	return rec;
}

void mt_sampler_ring_emit(uint64_t kind, const uint64_t *regs)
{
	/* The capture is over (the command outlived it): nobody reads. */
	if (__atomic_load_n(&ring.h->closed, __ATOMIC_RELAXED))
		return;
	uint64_t want = kind == MT_SAMPLE_RING_ALLOC ? stack_size : 0;
	uintptr_t sp = regs[REG_SP];
	long n = want ? stack_extent(sp, want) : 0;
	size_t len = sizeof(struct mt_sample_ring_record) + (n < 0 ? want : (uint64_t)n);
	uint64_t pos;
	int outer = emitting;	/* a signal handler that interrupted this thread's emit */
	emitting = 1;
	struct mt_sample_ring_record *rec =
		mt_sample_ring_reserve(&ring, len, (uint32_t)kind, (uint32_t)ring_pid, tid(), &pos);
	if (!rec && !outer &&
	    (kind == MT_SAMPLE_RING_TOTALS || kind == MT_SAMPLE_RING_TICK || samples_wait))
		rec = wait_for_room(len, (uint32_t)kind, &pos);
	if (!rec) {
		mt_sample_ring_lose(&ring, (uint32_t)kind);
		emitting = outer;
		return;
	}
	/* The time after the reservation: see docs/formats/sample-ring.md. */
	rec->time = mt_sample_ring_now();
	memcpy(rec->regs, regs, sizeof(rec->regs));
	rec->stack_size = want;
	if (n < 0)
		rec->dyn_size = copy_checked(rec->stack, sp, want);
	else
		copy_streaming(rec->stack, (const unsigned char *)sp, (size_t)(rec->dyn_size = (uint64_t)n));
	mt_sample_ring_commit(&ring, rec, pos);
	emitting = outer;
	mt_sample_ring_wake(&ring);
}
