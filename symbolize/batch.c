/* Output batches and the writer thread; see batch.h. */
#include "symbolize/batch.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int mt_unwind_batch_reserve(struct mt_unwind_batch *b, size_t nframes)
{
	if (b->nr_segs == b->cap_segs) {
		size_t c = b->cap_segs ? b->cap_segs * 2 : 1024;
		struct mt_unwind_seg *g = realloc(b->segs, c * sizeof(*g));
		if (!g)
			return MT_UNWIND_ENOMEM;
		b->segs = g;
		b->cap_segs = c;
	}
	if (b->cap_dframes - b->nr_dframes < nframes) {
		size_t c = b->cap_dframes ? b->cap_dframes : 16384;
		while (c - b->nr_dframes < nframes)
			c *= 2;
		struct mt_unwind_dframe *d = realloc(b->dframes, c * sizeof(*d));
		if (!d)
			return MT_UNWIND_ENOMEM;
		b->dframes = d;
		b->cap_dframes = c;
	}
	return 0;
}

void mt_unwind_batch_release(struct mt_unwind_batch *b)
{
	mt_unwind_out_release(&b->out);
	mt_unwind_out_release(&b->unk);
	free(b->segs);
	free(b->dframes);
}

/* Modules numbered so far: one output per process, written by one thread
 * at a time (the one that symbolises). */
static uint32_t modules_numbered;

void mt_unwind_put_modules(struct mt_unwind_out *to, const struct mt_unwind_dframe *fr,
			   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct mt_unwind_module *m = fr[i].mod;
		if (!m || m->out_id)
			continue;
		m->out_id = ++modules_numbered;
		char id[41];
		mt_unwind_module_build_id_hex(m, 0, id);
		mt_unwind_out_str(to, "# module ");
		mt_unwind_out_u64(to, m->out_id);
		mt_unwind_out_char(to, ' ');
		mt_unwind_out_str(to, id[0] ? id : "-");
		mt_unwind_out_char(to, ' ');
		for (const char *p = mt_unwind_module_path(m); *p; p++)
			mt_unwind_out_char(to, *p == '\n' || *p == '\r' ? '_' : *p);
		mt_unwind_out_char(to, '\n');
	}
}

void mt_unwind_put_frame(struct mt_unwind_out *to, const struct mt_unwind_symopts *o,
			 const struct mt_unwind_dframe *d, struct mt_unwind_frame_counts *c)
{
	const struct mt_unwind_sym *y = mt_unwind_sym_get(d->mod, d->vaddr, o);
	if (!y) {
		to->error = ENOMEM;	/* reported as the output's error */
		return;
	}
	if (d->trim) {
		/* The allocator entry point only, not the sampler code inlined
		 * into it. */
		const char *semi = memchr(y->text, ';', y->len);
		mt_unwind_out_add(to, y->text, semi ? (size_t)(semi - y->text) : y->len);
		c->frames++;
	} else {
		mt_unwind_out_add(to, y->text, y->len);
		c->frames += y->nframes;
		c->inl += y->nframes - 1u;
	}
	if (o->pprof_info) {
		mt_unwind_out_str(to, " @");
		mt_unwind_out_u64(to, d->mod->out_id);
		mt_unwind_out_str(to, "+0x");
		mt_unwind_out_x64(to, d->vaddr);
	}
}

void mt_unwind_last_stack_init(struct mt_unwind_last_stack *l)
{
	memset(l, 0, sizeof(*l));
	mt_unwind_out_init_mem(&l->text);
}

void mt_unwind_last_stack_release(struct mt_unwind_last_stack *l)
{
	mt_unwind_out_release(&l->text);
	free(l->fr);
	free(l->at);
}

/* Room for n frames in l.  @return : 0 or MT_UNWIND_ENOMEM. */
static int last_reserve(struct mt_unwind_last_stack *l, uint32_t n)
{
	if (n <= l->cap)
		return 0;
	uint32_t cap = l->cap ? l->cap : 64;
	while (cap < n)
		cap *= 2;
	struct mt_unwind_dframe *fr = realloc(l->fr, cap * sizeof(*fr));
	if (fr)
		l->fr = fr;
	struct mt_unwind_last_frame *at = realloc(l->at, cap * sizeof(*at));
	if (at)
		l->at = at;
	if (!fr || !at)
		return MT_UNWIND_ENOMEM;
	l->cap = cap;
	return 0;
}

static int same_dframe(const struct mt_unwind_dframe *a, const struct mt_unwind_dframe *b)
{
	return a->mod && a->mod == b->mod && a->vaddr == b->vaddr && a->trim == b->trim;
}

/* One stack's frames: those it shares with last (from the root) as last
 * wrote them, the others looked up; all kept in last for the next. */
static void write_stack(struct mt_unwind_out *to, const struct mt_unwind_batch *b,
			const struct mt_unwind_dframe *fr, uint32_t n,
			const struct mt_unwind_symopts *o, struct mt_unwind_frame_counts *c,
			struct mt_unwind_last_stack *last)
{
	if (last_reserve(last, n) != 0) {
		last->n = 0;
		to->error = ENOMEM;	/* reported as the output's error */
		return;
	}
	uint32_t k = 0;
	while (k < n && k < last->n && same_dframe(&fr[k], &last->fr[k]))
		k++;
	struct mt_unwind_frame_counts here = { 0 };
	last->text.len = 0;
	if (k) {
		here.frames = last->at[k - 1].frames;
		here.inl = last->at[k - 1].inl;
		last->text.len = last->at[k - 1].end;
	}
	for (; k < n; k++) {
		if (k)
			mt_unwind_out_char(&last->text, ';');
		if (fr[k].mod) {
			mt_unwind_put_frame(&last->text, o, &fr[k], &here);
		} else {
			mt_unwind_out_add(&last->text, b->unk.buf + fr[k].vaddr, fr[k].len);
			here.frames++;
		}
		last->fr[k] = fr[k];
		last->at[k] = (struct mt_unwind_last_frame){ .end = last->text.len,
							      .frames = here.frames,
							      .inl = here.inl };
	}
	last->n = last->text.error ? 0 : n;
	if (last->text.error)
		to->error = last->text.error;
	mt_unwind_out_add(to, last->text.buf, last->text.len);
	c->frames += here.frames;
	c->inl += here.inl;
}

void mt_unwind_batch_write(struct mt_unwind_out *to, struct mt_unwind_batch *b,
			   const struct mt_unwind_symopts *o, struct mt_unwind_frame_counts *c,
			   struct mt_unwind_last_stack *last)
{
	size_t at = 0;
	for (size_t i = 0; i < b->nr_segs; i++) {
		const struct mt_unwind_seg *g = &b->segs[i];
		if (o->pprof_info) {
			/* New modules' lines go before the line that uses them. */
			size_t bol = g->text_end;
			while (bol > at && b->out.buf[bol - 1] != '\n')
				bol--;
			mt_unwind_out_add(to, b->out.buf + at, bol - at);
			at = bol;
			mt_unwind_put_modules(to, &b->dframes[g->fr_begin], g->fr_count);
		}
		mt_unwind_out_add(to, b->out.buf + at, g->text_end - at);
		at = g->text_end;
		/* a stack of no frames may come before any frame: no array */
		write_stack(to, b, g->fr_count ? &b->dframes[g->fr_begin] : NULL, g->fr_count, o,
			    c, last);
	}
	if (b->out.len > at)	/* a batch that never held text has no buffer */
		mt_unwind_out_add(to, b->out.buf + at, b->out.len - at);
	b->out.len = 0;
	b->unk.len = 0;
	b->nr_segs = 0;
	b->nr_dframes = 0;
}

/* ---- the writer thread (see batch.h) ------------------------------------ */

/* Up to QUEUED batches wait for the writer: while it is slow (its first
 * batches load symbols and DWARF, at length on python3 with debug info) the
 * main thread goes on unwinding instead of waiting, and the writer catches
 * up later.  Written batches come back as spares, their buffers reused. */
#define QUEUED 32
#define QUEUED_BYTES ((size_t)64 << 20)	/* and no more text and frames than this */

static size_t batch_bytes(const struct mt_unwind_batch *b)
{
	return b->out.len + b->unk.len + b->nr_dframes * sizeof(*b->dframes);
}

struct mt_unwind_writer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	struct mt_unwind_batch queue[QUEUED];	/* ring: head, nr */
	unsigned head, nr;
	size_t bytes;				/* batch_bytes of the queued ones */
	struct mt_unwind_batch spare[QUEUED];	/* written, empty */
	unsigned nr_spare;
	struct mt_unwind_out *to;
	const struct mt_unwind_symopts *o;
	struct mt_unwind_frame_counts c;
	struct mt_unwind_last_stack last;
	int error;			/* to->error, once a batch is written */
};

static void *writer_main(void *arg)
{
	struct mt_unwind_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->nr && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->nr)
			break;
		struct mt_unwind_batch job = w->queue[w->head];
		size_t bytes = batch_bytes(&job);
		pthread_mutex_unlock(&w->mu);
		mt_unwind_batch_write(w->to, &job, w->o, &w->c, &w->last);
		pthread_mutex_lock(&w->mu);
		w->head = (w->head + 1) % QUEUED;
		w->nr--;
		w->bytes -= bytes;
		w->spare[w->nr_spare++] = job;	/* room: QUEUED spares at most */
		w->error = w->to->error;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct mt_unwind_writer *mt_unwind_writer_start(struct mt_unwind_out *to,
						const struct mt_unwind_symopts *o)
{
	struct mt_unwind_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->to = to;
	w->o = o;
	mt_unwind_last_stack_init(&w->last);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w);
		return NULL;
	}
	return w;
}

int mt_unwind_writer_give(struct mt_unwind_writer *w, struct mt_unwind_batch *b)
{
	pthread_mutex_lock(&w->mu);
	while (w->nr == QUEUED || (w->nr && w->bytes + batch_bytes(b) > QUEUED_BYTES))
		pthread_cond_wait(&w->cv, &w->mu);
	w->bytes += batch_bytes(b);
	w->queue[(w->head + w->nr) % QUEUED] = *b;
	w->nr++;
	if (w->nr_spare) {
		*b = w->spare[--w->nr_spare];
	} else {
		memset(b, 0, sizeof(*b));
		mt_unwind_out_init_mem(&b->out);
		mt_unwind_out_init_mem(&b->unk);
	}
	int error = w->error;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return error;
}
void mt_unwind_writer_stop(struct mt_unwind_writer *w, struct mt_unwind_frame_counts *c)
{
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	c->frames += w->c.frames;
	c->inl += w->c.inl;
	for (unsigned i = 0; i < w->nr_spare; i++)
		mt_unwind_batch_release(&w->spare[i]);
	mt_unwind_last_stack_release(&w->last);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}

