/* mt-capture's side of the sample ring (sample_ring.h): make the ring, and
 * turn its records into the perf samples of the mt:alloc, mt:free and
 * mt:totals events, as their uprobes would have written them. */
#include "capture/capture_ring.h"
#include "capture/sample_ring.h"
#include "codec/perf_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An incomplete record this old whose writer is gone is skipped and
 * counted as lost (see abandoned()). */
#define STUCK_NS 1000000000ULL

struct mt_capture_ring {
	struct mt_sample_ring ring;
	void *map;
	size_t map_size;
	int fd;
	struct {
		struct perf_event_attr attr;
		uint64_t id;
		uint64_t lost_seen;
		uint64_t abandoned;	/* skipped records not yet in a LOST record */
	} ev[MT_SAMPLE_RING_KINDS];
	struct mt_sample_ring_header made;	/* the header as mt-capture wrote it */
	uint64_t stuck_tail, stuck_since;
	uint64_t gap_bytes;	/* read past, in all: writers died before their first store */
	uint64_t lost_read_ns;	/* when the lost counters were last read */
	int damaged;
};

int mt_capture_ring_new(struct mt_capture_ring **out, size_t data_size, unsigned stack_size,
			int wait, char **env, struct mt_capture_err *err)
{
	struct mt_capture_ring *r = calloc(1, sizeof(*r));
	uint64_t token = 0;
	char size[32];
	if (!r)
		return mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
	r->map = MAP_FAILED;
	r->lost_read_ns = mt_sample_ring_now();
	r->map_size = MT_SAMPLE_RING_HEADER + data_size;
	snprintf(size, sizeof(size), "%zu", r->map_size);
	/* Close-on-exec: the command opens /proc/OUR_PID/fd/N instead, which
	 * also works after it closes its descriptors or execs. */
	r->fd = memfd_create("mt-sample-ring", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->map_size) ||
	    (r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0)) ==
		    MAP_FAILED) {
		mt_capture_err_set(err, MT_CAPTURE_ERING, errno, size, NULL);
		mt_capture_ring_free(r);
		return MT_CAPTURE_ERING;
	}
	if (getrandom(&token, sizeof(token), 0) != sizeof(token))
		token = mt_sample_ring_now() ^ (uint64_t)getpid() << 40;
	struct mt_sample_ring_header *h = r->map;
	h->magic = MT_SAMPLE_RING_MAGIC;
	h->token = token;
	h->data_size = data_size;
	h->stack_size = stack_size;
	h->wait = wait != 0;
	h->pid_ns = mt_sample_ring_pid_ns();
	h->reader_pid = (uint64_t)getpid();
	r->made = *h;
	/* Attaching to the header just written fails only if it is not one. */
	if (mt_sample_ring_attach(&r->ring, r->map, r->map_size, token)) {
		mt_capture_err_set(err, MT_CAPTURE_ERING, EINVAL, size, NULL);
		mt_capture_ring_free(r);
		return MT_CAPTURE_ERING;
	}
	if (!(*env = mt_capture_ring_env(r, getpid()))) {
		mt_capture_ring_free(r);
		return mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
	}
	*out = r;
	return 0;
}

char *mt_capture_ring_env(const struct mt_capture_ring *r, pid_t holder)
{
	char *env;
	if (asprintf(&env, "%s=%llx:/proc/%d/fd/%d", MT_SAMPLE_RING_ENV,
		     (unsigned long long)r->made.token, (int)holder, r->fd) < 0)
		return NULL;
	return env;
}

int mt_capture_ring_fd(const struct mt_capture_ring *r)
{
	return r->fd;
}

uint64_t mt_capture_ring_waited_ns(const struct mt_capture_ring *r)
{
	return __atomic_load_n(&r->ring.h->waited_ns, __ATOMIC_RELAXED);
}

void mt_capture_ring_close(struct mt_capture_ring *r)
{
	__atomic_store_n(&r->ring.h->closed, 1, __ATOMIC_RELEASE);
}

void mt_capture_ring_populate(struct mt_capture_ring *r)
{
	madvise(r->map, r->map_size, MADV_POPULATE_WRITE);	/* a hint: errors do not matter */
}

void mt_capture_ring_free(struct mt_capture_ring *r)
{
	if (!r)
		return;
	if (r->map != MAP_FAILED)
		munmap(r->map, r->map_size);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

void mt_capture_ring_event(struct mt_capture_ring *r, int kind, const struct perf_event_attr *attr,
			   uint64_t id)
{
	r->ev[kind].attr = *attr;
	r->ev[kind].id = id;
}

/* Append the 8-byte value v at *p. */
static void put(unsigned char **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* The sample the event's uprobe would have written for rec (a checked
 * copy; its stack bytes at stack) with the attr's sample_type bits that
 * mt-capture sets (capture_events.c). */
static int write_sample(struct mt_capture_ring *r, struct mt_perf_writer *w,
			const struct mt_sample_ring_record *rec, const unsigned char *stack)
{
	const struct perf_event_attr *a = &r->ev[rec->kind].attr;
	uint64_t st = a->sample_type;
	unsigned char head[512], *p = head + sizeof(struct perf_event_header);
	if (st & PERF_SAMPLE_IDENTIFIER)
		put(&p, r->ev[rec->kind].id);
	if (st & PERF_SAMPLE_IP)
		put(&p, rec->regs[8]);
	if (st & PERF_SAMPLE_TID)
		put(&p, (uint64_t)rec->tid << 32 | rec->pid);
	if (st & PERF_SAMPLE_TIME)
		put(&p, rec->time);
	if (st & PERF_SAMPLE_PERIOD)
		put(&p, 1);
	if (st & PERF_SAMPLE_CALLCHAIN)
		put(&p, 0);	/* no kernel part, as for a uprobe */
	if (st & PERF_SAMPLE_REGS_USER) {
		put(&p, PERF_SAMPLE_REGS_ABI_64);
		for (int i = 0; i < MT_SAMPLE_RING_REGS; i++)
			if (a->sample_regs_user >> i & 1)
				put(&p, rec->regs[i]);
	}
	uint64_t size = 0, dyn = 0;
	if (st & PERF_SAMPLE_STACK_USER) {
		/* As the kernel does (perf_sample_ustack_size): the dump
		 * shrinks so that the record, with its size and dyn_size
		 * fields, fits the 16-bit record size. */
		uint64_t fits = (0xffff - ((uint64_t)(p - head) + 16) - 8 + 7) & ~(uint64_t)7;
		size = a->sample_stack_user < fits ? a->sample_stack_user : fits;
		dyn = rec->dyn_size < size ? rec->dyn_size : size;
		/* Unlike the kernel's, the dump holds only the bytes copied (a
		 * word at least): the kernel keeps the requested size and leaves
		 * whatever its ring held after dyn_size; a copy cut where the
		 * stack ends, or far short of --stack-size 65528, writes none. */
		if (((dyn + 7) & ~(uint64_t)7) < size)
			size = dyn ? (dyn + 7) & ~(uint64_t)7 : 8;
		put(&p, size);
	}
	uint64_t total = (uint64_t)(p - head) + size + (size ? 8 : 0);
	struct perf_event_header *h = (struct perf_event_header *)head;
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)total;
	static const unsigned char zeros[4096];
	int rc = mt_perf_writer_write(w, head, (size_t)(p - head));
	if (!rc && dyn)
		rc = mt_perf_writer_write(w, stack, dyn);
	for (uint64_t left = size - dyn; !rc && left; ) {
		size_t n = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);
		rc = mt_perf_writer_write(w, zeros, n);
		left -= n;
	}
	if (!rc && size)
		rc = mt_perf_writer_write(w, &dyn, 8);
	return rc;
}

/* A LOST record for the events of kind dropped since the last one, with
 * the time the counters were read before: the drops came after it, and a
 * reader must know of them before any later record (mt-unwind compares the
 * sampler's marker counts in mt:totals with the events it saw). */
static int write_lost(struct mt_capture_ring *r, struct mt_perf_writer *w, int kind, uint64_t n)
{
	unsigned char rec[64], *p = rec + sizeof(struct perf_event_header);
	uint64_t st = r->ev[kind].attr.sample_type;
	put(&p, r->ev[kind].id);
	put(&p, n);
	if (st & PERF_SAMPLE_TID)
		put(&p, 0);
	if (st & PERF_SAMPLE_TIME)
		put(&p, r->lost_read_ns);
	if (st & PERF_SAMPLE_IDENTIFIER)
		put(&p, r->ev[kind].id);
	struct perf_event_header *h = (struct perf_event_header *)rec;
	h->type = PERF_RECORD_LOST;
	h->misc = 0;
	h->size = (uint16_t)(p - rec);
	return mt_perf_writer_record(w, h);
}

/* Is the incomplete record at the ring's tail abandoned: incomplete for a
 * second and its writer gone?  Then it is skipped, and counted as lost (a
 * writer that is only stopped, by a debugger or SIGSTOP, holds the reading
 * back until it goes on: skipping its record would let it write into space
 * given to others).  One that does not even name its writer (which died
 * between reserving and its first stores: a thread that exit_group ended
 * while its process exited, right after the process's totals were
 * reserved) is read past after a second, to the next record written
 * (mt_sample_ring_resync); its bytes are counted in gap_bytes.  A writer
 * only stopped for a second in those few instructions would then write
 * into space given to others: not guarded against.
 * @return : 0 wait, 1 a record skipped, 2 a gap read past. */
static int abandoned(struct mt_capture_ring *r, uint64_t limit)
{
	uint64_t t = mt_sample_ring_now();
	uint32_t kind, pid, tid;
	if (r->ring.tail != r->stuck_tail || !r->stuck_since) {
		r->stuck_tail = r->ring.tail;
		r->stuck_since = t;
	}
	if (t - r->stuck_since < STUCK_NS)
		return 0;
	if (mt_sample_ring_stuck(&r->ring, limit, &kind, &pid, &tid)) {
		uint64_t gap = mt_sample_ring_resync(&r->ring, limit);
		if (!gap)
			return 0;
		r->gap_bytes += gap;
		r->stuck_since = 0;
		return 2;
	}
	if (syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, 0) == 0 || errno != ESRCH ||
	    mt_sample_ring_skip(&r->ring, limit))
		return 0;
	r->stuck_since = 0;
	r->ev[kind].abandoned++;
	return 1;
}

/* Has the program written over the ring's header?  (Its records are
 * checked one by one as they are read.) */
static int header_damaged(const struct mt_capture_ring *r)
{
	const struct mt_sample_ring_header *h = r->ring.h, *m = &r->made;
	uint64_t head = mt_sample_ring_head(&r->ring), tail = r->ring.tail;
	if (h->magic != m->magic || h->token != m->token || h->data_size != m->data_size ||
	    h->stack_size != m->stack_size || h->reader_pid != m->reader_pid || h->wait != m->wait ||
	    h->tail != tail ||
	    head < tail || head - tail > r->ring.size || head % 16)
		return 1;
	for (int k = 0; k < MT_SAMPLE_RING_KINDS; k++) {
		uint64_t lost = __atomic_load_n(&h->lost[k], __ATOMIC_RELAXED);
		if (lost < r->ev[k].lost_seen || lost - r->ev[k].lost_seen > ((uint64_t)1 << 32))
			return 1;
	}
	return 0;
}

int mt_capture_ring_drain(struct mt_capture_ring *r, struct mt_perf_writer *w,
			  struct mt_capture_ring_drain *d)
{
	struct mt_sample_ring *ring = &r->ring;
	uint64_t limit = mt_sample_ring_head(ring);
	struct mt_sample_ring_record rec;
	const unsigned char *stack;
	int rc = 0, got;
	memset(d, 0, sizeof(*d));
	if (!r->damaged && header_damaged(r))
		r->damaged = 1;
	while (!r->damaged && (got = mt_sample_ring_next(ring, limit, &rec, &stack)) != 0) {
		if (got == -2) {
			r->damaged = 1;
			break;
		}
		if (got == -1) {
			int a = abandoned(r, limit);
			if (!a) {
				d->pending = 1;
				break;
			}
			d->abandoned += a == 1;
			continue;
		}
		if (!rc && write_sample(r, w, &rec, stack))
			rc = MT_CAPTURE_EWRITE;	/* from now on records are only consumed */
		d->samples++;
		d->bytes += rec.size;
		mt_sample_ring_release(ring, &rec);
	}
	uint64_t lost_read_ns = mt_sample_ring_now();
	if (!r->damaged && header_damaged(r))
		r->damaged = 1;
	for (int k = 1; k < MT_SAMPLE_RING_KINDS && !r->damaged; k++) {
		uint64_t lost = __atomic_load_n(&ring->h->lost[k], __ATOMIC_RELAXED);
		uint64_t n = lost - r->ev[k].lost_seen + r->ev[k].abandoned;
		if (n) {
			if (!rc && write_lost(r, w, k, n))
				rc = MT_CAPTURE_EWRITE;
			d->lost += n;
			r->ev[k].lost_seen = lost;
			r->ev[k].abandoned = 0;
		}
	}
	r->lost_read_ns = lost_read_ns;
	__atomic_store_n(&ring->h->wake, 0, __ATOMIC_RELAXED);	/* the next half fill wakes us */
	/* A wild write of the program: nothing read from the ring can be
	 * trusted any more; stop reading, and let the writers know. */
	if (r->damaged)
		mt_capture_ring_close(r);
	d->damaged = r->damaged;
	d->unread = r->damaged ? 0 : mt_sample_ring_head(ring) - ring->tail;
	d->gap_bytes = r->gap_bytes;
	return rc;
}
