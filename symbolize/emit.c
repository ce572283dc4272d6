/* symbolize/emit.h: writing mt-unwind's lines. */
#include "symbolize/emit.h"

#include <string.h>

static const char *const kind_names[MT_UNWIND_K_COUNT] = {
	"alloc", "free", "totals", "sample", "lost", "tick",
};

void mt_unwind_emit_init(struct mt_unwind_emit *e, int fd, int threaded,
			 const struct mt_unwind_symopts *sym, struct mt_unwind_maps *maps,
			 struct mt_unwind_modules *modules)
{
	memset(e, 0, sizeof(*e));
	e->sym = sym;
	e->maps = maps;
	e->modules = modules;
	mt_unwind_out_init_fd(&e->fdout, fd);
	if (threaded)
		e->wr = mt_unwind_writer_start(&e->fdout, sym);
	mt_unwind_out_init_mem(&e->b.out);
	mt_unwind_out_init_mem(&e->b.unk);
	mt_unwind_last_stack_init(&e->last);
}

/* From now on this thread symbolises: trace mode formats each entry's line
 * when it comes (its mappings may be gone at the return). */
static void writer_end(struct mt_unwind_emit *e)
{
	mt_unwind_writer_stop(e->wr, &e->counts);
	e->wr = NULL;
}

void mt_unwind_emit_release(struct mt_unwind_emit *e)
{
	if (e->wr)
		writer_end(e);
	mt_unwind_batch_release(&e->b);
	mt_unwind_last_stack_release(&e->last);
	mt_unwind_out_release(&e->fdout);
}

static void put_comm(struct mt_unwind_emit *e, struct mt_unwind_out *out, uint32_t tid)
{
	struct mt_unwind_thread *t = mt_unwind_maps_thread(e->maps, tid);
	if (!t || !t->comm[0]) {
		mt_unwind_out_str(out, "?");
		return;
	}
	char c[sizeof(t->comm)];
	size_t i;
	for (i = 0; t->comm[i]; i++) {
		char ch = t->comm[i];
		c[i] = (ch == '\t' || ch == '\n' || ch == '\r' || ch == ';') ? '_' : ch;
	}
	mt_unwind_out_add(out, c, i);
}

void mt_unwind_emit_head(struct mt_unwind_emit *e, struct mt_unwind_out *out,
			 enum mt_unwind_kind kind, uint32_t pid, uint32_t tid, uint64_t time)
{
	mt_unwind_out_str(out, kind_names[kind]);
	mt_unwind_out_char(out, '\t');
	mt_unwind_out_u64(out, pid);
	mt_unwind_out_char(out, '/');
	mt_unwind_out_u64(out, tid);
	mt_unwind_out_char(out, '\t');
	mt_unwind_out_u64(out, time);
	mt_unwind_out_char(out, '\t');
	put_comm(e, out, tid);
	mt_unwind_out_char(out, '\t');
	e->events++;
	e->by_kind[kind]++;
}

void mt_unwind_emit_kv(struct mt_unwind_out *out, const char *key, uint64_t v, int first)
{
	if (!first)
		mt_unwind_out_char(out, ' ');
	mt_unwind_out_str(out, key);
	mt_unwind_out_char(out, '=');
	mt_unwind_out_u64(out, v);
}

void mt_unwind_emit_kx(struct mt_unwind_out *out, const char *key, uint64_t v)
{
	mt_unwind_out_char(out, ' ');
	mt_unwind_out_str(out, key);
	mt_unwind_out_str(out, "=0x");
	mt_unwind_out_x64(out, v);
}

void mt_unwind_emit_nostack(struct mt_unwind_emit *e, struct mt_unwind_out *out)
{
	mt_unwind_out_str(out, "\t end=none\n");
	e->ends[MT_UNWIND_END_NONE]++;
}

void mt_unwind_emit_lost(struct mt_unwind_emit *e, uint32_t pid, uint32_t tid, uint64_t time,
			 uint64_t count, const char *reason, const char *marker)
{
	struct mt_unwind_out *out = &e->b.out;
	mt_unwind_emit_head(e, out, MT_UNWIND_K_LOST, pid, tid, time);
	mt_unwind_emit_kv(out, "count", count, 1);
	mt_unwind_out_str(out, " reason=");
	mt_unwind_out_str(out, reason);
	if (marker) {
		mt_unwind_out_str(out, " marker=");
		mt_unwind_out_str(out, marker);
	}
	mt_unwind_emit_nostack(e, out);
}

int mt_unwind_is_sampler_file(const char *filename)
{
	const char *base = strrchr(filename, '/');
	return strncmp(base ? base + 1 : filename, "libmt-sampler.so", 16) == 0;
}

static int is_sampler(const struct mt_unwind_frame *f)
{
	return f->map && mt_unwind_is_sampler_file(f->map->path);
}

/* A frame as the batch keeps it: its module and ELF address, or (no usable
 * module) its text in unk. */
static void dframe_of(struct mt_unwind_dframe *d, const struct mt_unwind_frame *f,
		      struct mt_unwind_out *unk)
{
	struct mt_unwind_module *m = f->map ? f->map->mod : NULL;
	if (m && mt_unwind_module_usable(m) && f->map->delta_ok) {
		d->mod = m;
		d->vaddr = f->lookup + (uint64_t)f->map->delta;
		return;
	}
	char tmp[300];
	size_t k = mt_unwind_sym_unknown(tmp, sizeof(tmp), f->map, f->pc);
	d->mod = NULL;
	d->vaddr = unk->len;
	d->len = (uint32_t)k;
	mt_unwind_out_add(unk, tmp, k);
}

void mt_unwind_emit_stack(struct mt_unwind_emit *e, struct mt_unwind_out *out,
			  const struct mt_unwind_frame *fr, unsigned n, int end, int drop_sampler)
{
	if (drop_sampler && n > 0 && is_sampler(&fr[n - 1])) {
		/* The walk never left the sampler: the kernel copied (almost)
		 * none of the user stack.  Name that rather than the marker, so
		 * such samples group under one honest root. */
		mt_unwind_out_str(out, "\t[no user stack] end=");
		mt_unwind_out_str(out, mt_unwind_end_str(end));
		mt_unwind_out_char(out, '\n');
		e->counts.frames++;
		e->ends[end]++;
		return;
	}
	unsigned first = 0;
	if (drop_sampler)	/* keep only the outermost sampler frame */
		while (first + 1 < n && is_sampler(&fr[first]) && is_sampler(&fr[first + 1]))
			first++;
	mt_unwind_out_char(out, '\t');
	if (out == &e->b.out) {
		/* Deferred: the frames are kept; their text is made at the next
		 * flush, when the modules' loaders have had time to finish. */
		if (mt_unwind_batch_reserve(&e->b, n - first) != 0) {
			e->nomem = 1;
			return;
		}
		struct mt_unwind_seg *g = &e->b.segs[e->b.nr_segs++];
		g->text_end = out->len;
		g->fr_begin = e->b.nr_dframes;
		g->fr_count = n - first;
		for (unsigned i = n; i-- > first;) {
			struct mt_unwind_dframe *d = &e->b.dframes[e->b.nr_dframes++];
			d->trim = drop_sampler && i == first && is_sampler(&fr[i]);
			dframe_of(d, &fr[i], &e->b.unk);
		}
	} else {
		for (unsigned i = n; i-- > first;) {
			struct mt_unwind_dframe d = {
				.trim = drop_sampler && i == first && is_sampler(&fr[i]),
			};
			dframe_of(&d, &fr[i], out);
			if (d.mod) {
				if (e->wr)	/* one thread symbolises at a time */
					writer_end(e);
				/* This line waits in out; the lines' buffer is
				 * written before it. */
				if (e->sym->pprof_info)
					mt_unwind_put_modules(&e->b.out, &d, 1);
				mt_unwind_put_frame(out, e->sym, &d, &e->counts);
			} else {
				e->counts.frames++;	/* its text went straight to out */
			}
			if (i > first)
				mt_unwind_out_char(out, ';');
		}
	}
	mt_unwind_out_str(out, " end=");
	mt_unwind_out_str(out, mt_unwind_end_str(end));
	mt_unwind_out_char(out, '\n');
	e->ends[end]++;
}

/* Write the deferred lines (through the writer when there is one). */
static void flush(struct mt_unwind_emit *e)
{
	if (e->b.out.error || e->b.unk.error) {
		e->nomem = 1;
		return;
	}
	if (e->wr) {
		e->out_error = mt_unwind_writer_give(e->wr, &e->b);
		return;
	}
	mt_unwind_batch_write(&e->fdout, &e->b, e->sym, &e->counts, &e->last);
	e->out_error = e->fdout.error;
}

/* A flush waits for the loaders still at work, so while there are some the
 * buffer is what overlaps their work; afterwards small flushes keep the
 * buffers in cache, a little larger with a writer so that handing over
 * costs little (the sizes were measured: docs/BENCHMARKS.md, mt-unwind). */
void mt_unwind_emit_check(struct mt_unwind_emit *e)
{
	size_t batch = e->wr ? 1024 : 256;
	if (e->b.nr_segs >= 32768 || e->b.out.len >= ((size_t)16 << 20) ||
	    (e->b.nr_segs >= batch && !mt_unwind_modules_loading(e->modules)))
		flush(e);
	if (e->b.out.error)
		e->nomem = 1;
}

int mt_unwind_emit_finish(struct mt_unwind_emit *e)
{
	flush(e);
	if (e->wr)
		writer_end(e);
	mt_unwind_out_flush(&e->fdout);
	if (e->b.out.error || e->b.unk.error)
		e->nomem = 1;
	return e->fdout.error;
}
