/* symbolize/replay.h: records in time order, unwound on arrival. */
#include "symbolize/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/arch.h"
#include "symbolize/hashmap.h"
#include "symbolize/jobs.h"
#include "symbolize/order.h"

/* Queued records past this many bytes without a FINISHED_ROUND are
 * released anyway (all but the newest). */
#define ORDER_MAX_BYTES ((size_t)512 << 20)
/* The deepest walks -j's pool takes (see mt_unwind_replay_new). */
#define POOL_MAX_DEPTH 1024u

struct mt_unwind_replay {
	struct mt_unwind_replay_opts o;
	struct mt_perf_reader *reader;
	struct mt_unwind_maps *maps;
	struct mt_unwind_emit *emit;
	struct mt_unwind_events *ev;
	struct mt_unwind_frame *frames;		/* o.max_depth of them */
	struct mt_unwind_order *order;
	uint64_t round_max, prev_round_max;	/* newest time this round, last round */
	/* The walk put_stack takes instead of walking: made on arrival, in
	 * the same mappings (see process_cb). */
	const struct mt_unwind_frame *pre;
	unsigned pre_n;
	int pre_end, pre_other_stack;
	uint8_t *rebuf;				/* records read again */
	size_t rebuf_cap;
	uint64_t st_undecodable;		/* records other than samples */
	/* -j N: the walks on arrival go to a pool (jobs.h), into entries
	 * queued with room for max_depth frames.  slack: the bytes of such
	 * entries, walked and not yet released, beyond what they hold (so
	 * that the queue's size, which forces releases, counts as in one
	 * thread's run); the walks not yet drained count as holding all. */
	struct mt_unwind_jobs *jobs;
	size_t slack;
	const void *map;			/* the current record's mapping */
	size_t map_len;
	/* File offsets of the FINISHED_ROUND that began this round and of the
	 * one before: queued records that stay in the mapping all come after
	 * the latter (see mt_unwind_replay_keep_from). */
	uint64_t round_start, keep_from;
	/* pid -> queued records that will change its space (MMAP, exec,
	 * FORK): a sample of a pid with any is not walked on arrival, since
	 * its walk would be made again at its turn. */
	struct mt_unwind_hashmap pending;
	int nomem, data_error;
	struct mt_unwind_replay_stats st;
};

/* The frames of the kernel's own frame-pointer walk (`perf record -g`: a
 * CALLCHAIN and no stack dump) into s->frames, leaf first: the user part
 * only, whose first entry is the pc and the others return addresses.
 * @return : the end reason. */
static int callchain_frames(struct mt_unwind_replay *s, const struct mt_perf_sample *smp,
			    unsigned *nr)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
	const uint8_t *p = smp->callchain;
	int user = 0;
	unsigned n = 0;
	*nr = 0;
	for (uint64_t i = 0; i < smp->nr_callchain; i++) {
		uint64_t ip;
		memcpy(&ip, p + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {	/* a context marker */
			user = ip == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		if (n == s->o.max_depth) {
			*nr = n;
			return MT_UNWIND_END_DEPTH;
		}
		struct mt_unwind_frame *f = &s->frames[n++];
		f->pc = ip;
		f->lookup = n > 1 ? ip - 1 : ip;
		f->map = sp ? mt_unwind_maps_find(s->maps, sp, f->lookup) : NULL;
	}
	*nr = n;
	if (n == 0)
		return MT_UNWIND_END_NONE;
	/* A chain that runs into no mapping was cut by a frame without a
	 * frame pointer, as perf shows it ([unknown] frames). */
	return s->frames[n - 1].map ? MT_UNWIND_END_COMPLETE : MT_UNWIND_END_UNKNOWN_MODULE;
}


void mt_unwind_replay_put_stack(void *ctx, struct mt_unwind_out *out,
				const struct mt_perf_sample *smp, int drop_sampler)
{
	struct mt_unwind_replay *s = ctx;
	unsigned n = 0;
	int end;
	const struct mt_unwind_frame *fr = s->frames;
	struct mt_unwind_regs regs;
	int other_stack = 0;
	if (s->pre) {	/* walked on arrival, in the same mappings */
		fr = s->pre;
		n = s->pre_n;
		end = s->pre_end;
		other_stack = s->pre_other_stack;
		s->pre = NULL;
	} else if (!(smp->sample_type & PERF_SAMPLE_STACK_USER) && smp->callchain) {
		end = callchain_frames(s, smp, &n);
		s->st.callchains++;
	} else if (smp->regs_abi == 0 ||
		   mt_unwind_arch_regs_from_perf(&regs, smp->regs_mask, smp->regs,
						 smp->nr_regs) != 0) {
		s->st.no_regs++;
		mt_unwind_emit_nostack(s->emit, out);
		return;
	} else {
		struct mt_unwind_memory mem = mt_unwind_sample_dump(smp, regs.r[MT_UNWIND_REG_SP]);
		struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
		end = mt_unwind_walk(s->maps, sp, &regs, &mem, s->frames, s->o.max_depth, &n,
				     &s->st.walk);
		other_stack = s->st.walk.last_other_stack;
	}
	if (end == MT_UNWIND_END_DUMP) {
		/* Would a larger dump have reached further?  Not past a
		 * signal frame onto another stack, not when the copy held all
		 * the stack there was (a page or more short of the size asked
		 * for: the stack's mapping ended; the kernel, and mt-capture,
		 * trim a few hundred bytes only to fit the record), nor when
		 * the size asked for is the largest. */
		uint64_t asked = smp->evsel ? smp->evsel->attr.sample_stack_user : 0;
		if (asked < smp->stack_size)
			asked = smp->stack_size;
		if (other_stack)
			s->st.dump_other_stack++;
		else if (smp->stack_dyn_size + 4096 <= asked)
			s->st.dump_whole++;
		else if (asked >= MT_UNWIND_DUMP_MAX)
			s->st.dump_at_max++;
	}
	mt_unwind_emit_stack(s->emit, out, fr, n, end, drop_sampler);
}

static void process(struct mt_unwind_replay *s, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct mt_perf_sample smp;
		if (mt_perf_sample_parse(s->reader, h, &smp) != 0)
			mt_unwind_events_undecodable(s->ev);
		else
			mt_unwind_events_sample(s->ev, &smp);
		return;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct mt_perf_mmap m;
		if (mt_perf_mmap_parse(s->reader, h, &m) != 0) {
			s->st_undecodable++;
			s->data_error = 1;
			return;
		}
		if (mt_unwind_maps_mmap(s->maps, m.pid, m.start, m.len, m.pgoff, m.filename,
					m.build_id, m.build_id_size, m.executable) != 0)
			s->nomem = 1;
		mt_unwind_events_mmap(s->ev, &m);
		return;
	}
	case PERF_RECORD_COMM: {
		struct mt_perf_comm c;
		if (mt_perf_comm_parse(s->reader, h, &c) != 0) {
			s->st_undecodable++;
			return;
		}
		mt_unwind_events_comm(s->ev, &c);
		if (mt_unwind_maps_comm(s->maps, c.pid, c.tid, c.comm, c.exec) != 0)
			s->nomem = 1;
		return;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct mt_perf_task t;
		if (mt_perf_task_parse(s->reader, h, &t) != 0) {
			s->st_undecodable++;
			return;
		}
		mt_unwind_events_task(s->ev, h->type, &t);
		int rc = h->type == PERF_RECORD_FORK
			 ? mt_unwind_maps_fork(s->maps, t.pid, t.ppid, t.tid, t.ptid)
			 : mt_unwind_maps_exit(s->maps, t.pid, t.tid);
		if (rc != 0)
			s->nomem = 1;
		return;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct mt_perf_lost l;
		if (mt_perf_lost_parse(s->reader, h, &l) != 0) {
			s->st_undecodable++;
			return;
		}
		mt_unwind_events_lost(s->ev, h->type, &l);
		return;
	}
	}
}

/* A sample waiting in the queue: parsed, with only the valid part of its
 * stack dump kept (copying whole 8 KiB dumps cost much of the time), or
 * none when the record is in the file's mapping (rec): its stack and
 * callchain are read there at its turn. */
struct queued_sample {
	size_t evsel_index;
	/* Walked on arrival (spec): nframes frames follow instead of the
	 * stack, valid while the space sp is at generation gen; otherwise the
	 * record (size bytes at offset in the file, or rec) is read again. */
	int spec, end, other_stack;	/* other_stack: mt_unwind_stats' */
	unsigned nframes;
	struct mt_unwind_space *sp;
	uint64_t gen, offset, size;
	const struct perf_event_header *rec;	/* in the mapping, or NULL */
	struct mt_perf_sample smp;	/* stack and evsel re-pointed on release */
};

/* The part of q that is queued: up to its last register (smp.regs comes
 * last and has room for 64; a sample has ~17), a multiple of 8.  The
 * frames, stack or callchain follow it in the queue. */
static size_t queued_len(const struct queued_sample *q)
{
	return offsetof(struct queued_sample, smp.regs) + 8 * (size_t)q->smp.nr_regs;
}

static void *queued_tail(struct queued_sample *q)
{
	return (char *)q + queued_len(q);
}

/* Read a queued sample's record again, from the mapping or the file: its
 * mappings changed between its arrival and its turn.  @return : 0, or -1
 * (reported). */
static int reread(struct mt_unwind_replay *s, const struct queued_sample *q,
		  struct mt_perf_sample *out)
{
	if (q->rec) {	/* parsed on arrival: only a reader bug fails here */
		if (mt_perf_sample_parse(s->reader, q->rec, out) == 0)
			return 0;
		s->data_error = 1;
		return -1;
	}
	if (q->size > s->rebuf_cap) {
		free(s->rebuf);
		s->rebuf_cap = 0;
		/* 8-aligned: the record is read as a header. */
		if (!(s->rebuf = aligned_alloc(8, (q->size + 7) & ~(uint64_t)7))) {
			s->nomem = 1;
			return -1;
		}
		s->rebuf_cap = q->size;
	}
	const struct perf_event_header *h = (const void *)s->rebuf;
	ssize_t k = pread(s->o.spec_fd, s->rebuf, q->size, (off_t)q->offset);
	if (k != (ssize_t)q->size || h->type != PERF_RECORD_SAMPLE || h->size != q->size ||
	    mt_perf_sample_parse(s->reader, h, out) != 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "'%s': offset %" PRIu64 ": the sample could not be read"
			 " again: %s", s->o.input, q->offset, k < 0 ? strerror(errno) : "the file changed");
		if (s->o.warn)
			s->o.warn(s->o.warn_ctx, msg);
		s->data_error = 1;
		return -1;
	}
	return 0;
}

enum { Q_RECORD, Q_SAMPLE };

/* A queued record other than a sample: the pid whose space it changes
 * (NO_PID: none), then the record. */
#define NO_PID UINT32_MAX
struct queued_record {
	uint32_t changes, pad;
};

static uint64_t pending_of(struct mt_unwind_replay *s, uint32_t pid)
{
	uint64_t n;
	return mt_unwind_hashmap_get(&s->pending, pid, &n) ? n : 0;
}

static void pending_add(struct mt_unwind_replay *s, uint32_t pid, int64_t d)
{
	if (pid != NO_PID && mt_unwind_hashmap_put(&s->pending, pid, pending_of(s, pid) + d) != 0)
		s->nomem = 1;
}
enum { SPEC_WALKED = 1, SPEC_JOB };	/* queued_sample.spec */

/* Wait for the pool's walks: before anything changes a space. */
static void drain(struct mt_unwind_replay *s)
{
	if (!s->jobs || !mt_unwind_jobs_pending(s->jobs))
		return;
	size_t n = mt_unwind_jobs_pending(s->jobs);
	uint64_t frames = mt_unwind_jobs_drain(s->jobs, &s->st.walk);
	s->st.pool_walks += n;
	s->slack += (n * s->o.max_depth - frames) * sizeof(struct mt_unwind_frame);
}

/* The queue's bytes as one thread's run counts them (the walks not yet
 * drained: at most). */
static size_t queued_bytes(const struct mt_unwind_replay *s)
{
	return mt_unwind_order_bytes(s->order) - s->slack;
}

static void process_cb(int kind, void *data, size_t size, void *ctx)
{
	struct mt_unwind_replay *s = ctx;
	(void)size;
	if (kind == Q_RECORD) {
		const struct queued_record *r = data;
		pending_add(s, r->changes, -1);
		process(s, (const void *)(r + 1));
		return;
	}
	struct queued_sample *q = data;
	/* The evsel array may have grown (moved) since. */
	q->smp.evsel = mt_perf_reader_evsel(s->reader, q->evsel_index);
	if (q->spec) {
		if (q->spec == SPEC_JOB)
			s->slack -= (s->o.max_depth - q->nframes) * sizeof(struct mt_unwind_frame);
		struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, q->smp.pid);
		q->smp.callchain = NULL;	/* not kept: the walk is */
		if (sp == q->sp && sp->gen == q->gen) {	/* q->sp: never NULL */
			/* The walk depends on the mappings only: still right. */
			s->pre = queued_tail(q);
			s->pre_n = q->nframes;
			s->pre_end = q->end;
			s->pre_other_stack = q->other_stack;
			mt_unwind_events_sample(s->ev, &q->smp);
			s->pre = NULL;
			return;
		}
		s->st.spec_rewalks++;
		struct mt_perf_sample smp;
		if (reread(s, q, &smp) != 0) {
			mt_unwind_events_undecodable(s->ev);
			return;
		}
		smp.evsel = q->smp.evsel;
		mt_unwind_events_sample(s->ev, &smp);
		return;
	}
	if (!q->smp.stack_dyn_size)
		q->smp.stack = NULL;
	else if (!q->rec)
		q->smp.stack = queued_tail(q);
	/* A callchain is used only without a stack; queued, it is in the
	 * stack's place. */
	if (q->smp.callchain)
		q->smp.callchain = q->smp.stack ? NULL : q->rec ? q->smp.callchain : queued_tail(q);
	mt_unwind_events_sample(s->ev, &q->smp);
}

/* The order's look-ahead: the next sample to be walked at its turn is in
 * the file's mapping, where its dump has long left the cache; start
 * loading the top of its stack, where the first frames are, while this
 * one is walked (the walk's reads are cache misses one after the other). */
static void ahead_cb(int kind, const void *data, void *ctx)
{
	(void)ctx;
	const struct queued_sample *q = data;
	if (kind != Q_SAMPLE || !q->rec || q->spec || !q->smp.stack)
		return;
	for (size_t k = 0; k < 1024 && k < q->smp.stack_dyn_size; k += 64)
		__builtin_prefetch(q->smp.stack + k);
}

/* spec_walk through the pool: the entry is queued now with room for
 * max_depth frames, which a worker fills before the next drain.  Only for
 * a record in the file's mapping (the dump must outlive this call).
 * @return : 1 queued, 0 not (walk it here). */
static int spec_job(struct mt_unwind_replay *s, struct queued_sample *q,
		    struct mt_unwind_space *sp, const struct mt_unwind_regs *regs,
		    const struct mt_unwind_memory *mem, size_t head, uint64_t t)
{
	if (!q->rec)	/* its dump, inside it, stays in the mapping */
		return 0;
	const uint8_t *stack = q->smp.stack;
	size_t size = head + s->o.max_depth * sizeof(struct mt_unwind_frame);
	uint8_t *room = mt_unwind_order_reserve(s->order, size);
	if (!room)
		return 0;
	struct queued_sample *e = (struct queued_sample *)room;
	q->sp = sp;
	q->gen = sp->gen;
	q->spec = SPEC_JOB;
	q->smp.stack = NULL;
	memcpy(room, q, head);
	struct mt_unwind_job_out out = {
		.frames = (struct mt_unwind_frame *)(room + head),
		.nframes = &e->nframes, .end = &e->end, .other_stack = &e->other_stack,
	};
	if (mt_unwind_jobs_add(s->jobs, sp, regs, mem, &out) != 0) {
		q->smp.stack = stack;
		q->spec = 0;
		return 0;	/* reserved, not committed: nothing is queued */
	}
	mt_unwind_order_commit(s->order, Q_SAMPLE, size, t);
	return 1;
}

/* Walk a sample's stack on arrival, with the mappings as they are now,
 * so that only its frames wait in the time-ordering queue and not its
 * stack dump (copying the dumps cost much of the time).  The walk is a
 * function of the registers, the dump and the space's mappings alone; if
 * those change before the sample's turn, the record is read again from
 * the file.  @return : 1 walked and queued (at time t), 0 not worth it. */
static int spec_walk(struct mt_unwind_replay *s, struct queued_sample *q, size_t n, uint64_t t)
{
	const struct mt_perf_sample *smp = &q->smp;
	if (s->o.spec_fd < 0 || n < 512 || smp->regs_abi == 0)
		return 0;
	if (!mt_unwind_events_wants_stack(s->ev, smp->evsel))
		return 0;
	if (mt_unwind_events_excluded(s->ev, smp->pid, smp->tid))
		return 0;	/* counted when its turn comes */
	/* No address space yet: its process's FORK, COMM and MMAP records
	 * are still queued, and the walk would be made again (many of a
	 * parallel build's samples would be read again from the file). */
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
	if (!sp || pending_of(s, smp->pid))
		return 0;
	struct mt_unwind_regs regs;
	if (mt_unwind_arch_regs_from_perf(&regs, smp->regs_mask, smp->regs, smp->nr_regs) != 0)
		return 0;
	struct mt_unwind_memory mem = mt_unwind_sample_dump(smp, regs.r[MT_UNWIND_REG_SP]);
	/* The frames go straight into the queue, after the sample. */
	size_t head = queued_len(q);
	if (s->jobs && spec_job(s, q, sp, &regs, &mem, head, t))
		return 1;
	uint8_t *room = mt_unwind_order_reserve(s->order,
						head + s->o.max_depth * sizeof(*s->frames));
	if (!room) {
		s->nomem = 1;
		return 0;
	}
	struct mt_unwind_frame *fr = (struct mt_unwind_frame *)(room + head);
	unsigned nr = 0;
	q->end = mt_unwind_walk(s->maps, sp, &regs, &mem, fr, s->o.max_depth, &nr, &s->st.walk);
	q->other_stack = s->st.walk.last_other_stack;
	q->nframes = nr;
	q->sp = sp;
	q->gen = sp->gen;
	q->spec = SPEC_WALKED;
	q->smp.stack = NULL;
	memcpy(room, q, head);
	mt_unwind_order_commit(s->order, Q_SAMPLE, head + nr * sizeof(*fr), t);
	return 1;
}

/* The time of a record that takes part in ordering; 0 when it has none
 * (such records sort first, as in perf).  *changes: the pid whose space
 * the record changes, or NO_PID. */
static int record_time(struct mt_unwind_replay *s, const struct perf_event_header *h, uint64_t *t,
		       uint32_t *changes)
{
	*changes = NO_PID;
	union {
		struct mt_perf_mmap m;
		struct mt_perf_comm c;
		struct mt_perf_task k;
		struct mt_perf_lost l;
	} u;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (mt_perf_mmap_parse(s->reader, h, &u.m) != 0)
			return -1;
		*t = u.m.sid.time;
		*changes = u.m.pid;
		return 0;
	case PERF_RECORD_COMM:
		if (mt_perf_comm_parse(s->reader, h, &u.c) != 0)
			return -1;
		*t = u.c.sid.time;
		if (u.c.exec)
			*changes = u.c.pid;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (mt_perf_task_parse(s->reader, h, &u.k) != 0)
			return -1;
		*t = u.k.time;
		if (h->type == PERF_RECORD_FORK && u.k.pid != u.k.ppid)
			*changes = u.k.pid;
		return 0;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (mt_perf_lost_parse(s->reader, h, &u.l) != 0)
			return -1;
		*t = u.l.sid.time;
		return 0;
	}
	return -1;
}

/* Is the record h in the file's mapping (and stays there, for the queue)? */
static int in_map(const struct mt_unwind_replay *s, const struct perf_event_header *h)
{
	const char *p = (const char *)h, *m = s->map;
	return m && p >= m && (size_t)(p - m) <= s->map_len && h->size <= s->map_len - (size_t)(p - m);
}

static void on_record(struct mt_unwind_replay *s, const struct mt_perf_item *it)
{
	const struct perf_event_header *h = it->header;
	uint64_t t;
	s->st.records++;
	if (h->type == MT_PERF_RECORD_HEADER_BUILD_ID) {
		drain(s);	/* mappings resolve with the build-ids known */
		struct mt_perf_build_id b;
		if (mt_perf_build_id_parse(it->data, it->size, &b) == 0)
			mt_unwind_replay_build_id(s, &b);
		return;
	}
	if (h->type == MT_PERF_RECORD_FINISHED_ROUND) {
		drain(s);
		if (mt_unwind_order_flush(s->order, s->prev_round_max, process_cb, s) != 0)
			s->nomem = 1;
		s->prev_round_max = s->round_max;
		/* What stays queued is newer than every record before the last
		 * FINISHED_ROUND. */
		s->keep_from = s->round_start;
		s->round_start = it->offset;
		return;
	}
	if (h->type == PERF_RECORD_SAMPLE) {
		struct queued_sample q;
		if (mt_perf_sample_parse(s->reader, h, &q.smp) != 0) {
			mt_unwind_events_undecodable(s->ev);
			return;
		}
		if (s->o.decode_only)
			return;
		t = q.smp.time;
		q.evsel_index = (size_t)q.smp.evsel->index;
		q.spec = 0;
		q.offset = it->offset;
		q.size = h->size;
		size_t n = mt_unwind_sample_dump(&q.smp, 0).size;
		q.smp.stack_dyn_size = n;
		q.rec = in_map(s, h) ? h : NULL;
		int rc = 0;
		if (!it->unpacked && spec_walk(s, &q, n, t)) {	/* unpacked: no offset to read again */
			/* queued */
		} else if (q.rec) {
			rc = mt_unwind_order_push(s->order, Q_SAMPLE, &q, queued_len(&q), NULL, 0, t);
		} else if (n == 0 && q.smp.callchain) {
			/* The callchain waits in the queue instead of the stack. */
			rc = mt_unwind_order_push(s->order, Q_SAMPLE, &q, queued_len(&q),
						  q.smp.callchain, 8 * q.smp.nr_callchain, t);
		} else {
			rc = mt_unwind_order_push(s->order, Q_SAMPLE, &q, queued_len(&q), q.smp.stack,
						  n, t);
		}
		if (rc != 0)
			s->nomem = 1;
	} else {
		struct queued_record r = { NO_PID, 0 };
		if (s->o.decode_only) {
			record_time(s, h, &t, &r.changes);
			return;
		}
		if (record_time(s, h, &t, &r.changes) != 0) {
			drain(s);
			process(s, h);	/* not ordered, or undecodable: reported there */
			return;
		}
		if (mt_unwind_order_push(s->order, Q_RECORD, &r, sizeof(r), h, h->size, t) != 0)
			s->nomem = 1;
		else
			pending_add(s, r.changes, 1);
	}
	if (t > s->round_max)
		s->round_max = t;
	if (queued_bytes(s) > ORDER_MAX_BYTES) {
		drain(s);	/* now the bytes are exact */
	}
	if (queued_bytes(s) > ORDER_MAX_BYTES) {
		/* No FINISHED_ROUND for too long: release all but the newest. */
		s->st.order_overflows++;
		if (mt_unwind_order_flush(s->order, s->prev_round_max, process_cb, s) != 0)
			s->nomem = 1;
		if (queued_bytes(s) > ORDER_MAX_BYTES / 2 &&
		    mt_unwind_order_flush(s->order, s->round_max, process_cb, s) != 0)
			s->nomem = 1;
		s->prev_round_max = s->round_max;
	}
}

/* Start loading the next record of a mapped file while this one is
 * unwound: its header, registers and the top of its stack, where the first
 * frames are, and its last word (dyn_size, after 8 KiB of dump: the parse's
 * one cache miss).  The walk's reads of a dump are otherwise cache misses
 * one after the other.  The next header was itself prefetched one record
 * earlier, so reading its size does not wait.  How far ahead was measured
 * with bench/unwind.sh (docs/BENCHMARKS.md). */
static void prefetch_next(const struct mt_perf_item *it, const void *map, size_t map_len)
{
	if (!map)
		return;
	const char *next = (const char *)it->header + it->header->size;
	const char *end = (const char *)map + map_len;
	if (next < (const char *)map || next >= end)
		return;	/* not a record of the mapping */
	for (size_t k = 0; k < 1024 && next + k < end; k += 64)
		__builtin_prefetch(next + k);
	if (next + sizeof(struct perf_event_header) <= end) {
		uint16_t size;	/* a damaged file's next record may be misaligned */
		memcpy(&size, next + offsetof(struct perf_event_header, size), sizeof(size));
		if (size >= 8 && next + size <= end)
			__builtin_prefetch(next + size - 8);
	}
}


void mt_unwind_replay_record(struct mt_unwind_replay *s, const struct mt_perf_item *it,
			     const void *map, size_t map_len)
{
	if (!it->unpacked)
		prefetch_next(it, map, map_len);
	s->map = it->unpacked ? NULL : map;
	s->map_len = map_len;
	on_record(s, it);
}

void mt_unwind_replay_build_id(struct mt_unwind_replay *s, const struct mt_perf_build_id *b)
{
	/* perf pads 20-byte ids; trailing zero bytes are not part of sha1 ids */
	if (mt_unwind_maps_add_build_id(s->maps, b->filename, b->id, (unsigned)b->id_len) != 0)
		s->nomem = 1;
}

void mt_unwind_replay_finish(struct mt_unwind_replay *s)
{
	drain(s);
	if (mt_unwind_order_flush(s->order, UINT64_MAX, process_cb, s) != 0)
		s->nomem = 1;
}

int mt_unwind_replay_new(struct mt_unwind_replay **out, const struct mt_unwind_replay_opts *o,
			 struct mt_perf_reader *reader, struct mt_unwind_maps *maps,
			 struct mt_unwind_emit *emit)
{
	struct mt_unwind_replay *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return MT_UNWIND_ENOMEM;
	s->o = *o;
	s->reader = reader;
	s->maps = maps;
	s->emit = emit;
	/* -j: only walks on arrival go to the pool, and only a file read by
	 * name has them (a pipe's or an .mtz's samples are walked at their
	 * turn, in this thread). */
	if (mt_unwind_order_new(&s->order) != 0 ||
	    !(s->frames = calloc(o->max_depth, sizeof(*s->frames)))) {
		mt_unwind_replay_free(s);
		*out = NULL;
		return MT_UNWIND_ENOMEM;
	}
	mt_unwind_order_set_ahead(s->order, ahead_cb);
	/* No pool (no thread could start): the same output, walked here.
	 * Nor with a --max-depth above POOL_MAX_DEPTH: each walk given to
	 * the pool holds room for max_depth frames in the queue until the
	 * round is released (24 KiB at 1024; 1.5 MiB each at 65536). */
	if (o->jobs > 1 && !o->decode_only && o->spec_fd >= 0 && o->max_depth <= POOL_MAX_DEPTH &&
	    mt_unwind_jobs_new(&s->jobs, o->jobs, maps, o->max_depth) == 0)
		s->st.pool_threads = o->jobs;
	return 0;
}

void mt_unwind_replay_set_events(struct mt_unwind_replay *s, struct mt_unwind_events *ev)
{
	s->ev = ev;
}

void mt_unwind_replay_free(struct mt_unwind_replay *s)
{
	if (!s)
		return;
	mt_unwind_jobs_free(s->jobs);
	mt_unwind_order_free(s->order);
	mt_unwind_hashmap_release(&s->pending);
	free(s->frames);
	free(s->rebuf);
	free(s);
}

uint64_t mt_unwind_replay_keep_from(const struct mt_unwind_replay *rp, uint64_t offset)
{
	return rp->keep_from < offset ? rp->keep_from : offset;
}

uint64_t mt_unwind_replay_last_time(const struct mt_unwind_replay *s)
{
	return s->round_max;
}

const struct mt_unwind_replay_stats *mt_unwind_replay_stats(const struct mt_unwind_replay *s)
{
	return &s->st;
}

int mt_unwind_replay_nomem(const struct mt_unwind_replay *s)
{
	return s->nomem;
}

int mt_unwind_replay_data_error(const struct mt_unwind_replay *s)
{
	return s->data_error;
}

uint64_t mt_unwind_replay_undecodable(const struct mt_unwind_replay *s)
{
	return s->st_undecodable;
}
