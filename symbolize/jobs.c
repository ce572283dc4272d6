/* symbolize/jobs.h: stack walks on worker threads. */
#include "symbolize/jobs.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Jobs live in blocks that never move while workers read them. */
#define BLOCK 256
/* Jobs a thread takes at a time: fewer trips through the pool's lock. */
#define CLAIM 4
/* Walks waiting before a worker is woken for them. */
#define WAKE 16
/* Per-thread memos, direct-mapped: (space, lookup address) -> (mapping,
 * rule), valid while the space's generation is the one it was made in
 * (a change of the space's mappings bumps it, and happens only between
 * drains); (module, ELF address) -> rule, valid for the run (rules and
 * modules live as long as the module cache). */
#define MEMO_BITS 12
#define RULES_BITS 14

struct job {
	struct mt_unwind_space *sp;
	struct mt_unwind_regs regs;
	struct mt_unwind_memory mem;
	struct mt_unwind_job_out out;
};

struct memo_entry {
	uint64_t key;			/* lookup address + 1; 0: empty */
	uint64_t gen;			/* the space's, when made (spaces are
					 * freed only with the maps) */
	const struct mt_unwind_space *sp;
	struct mt_unwind_map *map;
	const struct mt_unwind_rule *rule;
};

struct rule_entry {
	const struct mt_unwind_module *mod;	/* NULL: empty */
	uint64_t vaddr;
	const struct mt_unwind_rule *rule;
};

struct worker {
	struct mt_unwind_jobs *j;
	pthread_t th;
	int started;
	struct mt_unwind_stats st;	/* summed into the drain's */
	uint64_t frames;
	struct memo_entry *memo;
	struct rule_entry *rules;
	struct mt_unwind_finder finder;
};

struct mt_unwind_jobs {
	struct mt_unwind_maps *mp;
	unsigned max_depth;
	pthread_mutex_t lock;		/* the fields below, to stop */
	pthread_cond_t work, idle;
	struct job **blocks;
	size_t nr_blocks;
	size_t nr, next, done;		/* added, taken, walked */
	int stop;
	unsigned waiting;		/* workers waiting for work */
	unsigned nr_workers;		/* the last is the draining thread's */
	struct worker *w;
	/* Held around what libdw and the module cache do: a rule compiled
	 * (mt_unwind_rule_get's misses), a mapping's module opened. */
	pthread_mutex_t cold;
};

static const struct mt_unwind_rule *rule_of(struct worker *w, struct mt_unwind_module *mod,
					    uint64_t vaddr)
{
	uint64_t h = ((vaddr ^ (uint64_t)(uintptr_t)mod) * 0x9E3779B97F4A7C15ULL) >> (64 - RULES_BITS);
	struct rule_entry *r = &w->rules[h];
	if (r->mod == mod && r->vaddr == vaddr)
		return r->rule;
	pthread_mutex_lock(&w->j->cold);
	const struct mt_unwind_rule *rule = mt_unwind_rule_get(mod, vaddr);
	pthread_mutex_unlock(&w->j->cold);
	if (rule)
		*r = (struct rule_entry){ .mod = mod, .vaddr = vaddr, .rule = rule };
	return rule;
}

/* The finder of a worker's walks: what the space's memo and
 * mt_unwind_maps_find do in a walk of the owning thread, without writing
 * to the space. */
static const struct mt_unwind_rule *find(void *ctx, struct mt_unwind_space *sp, uint64_t addr,
					 struct mt_unwind_map **mapp, struct mt_unwind_stats *st)
{
	struct worker *w = ctx;
	struct memo_entry *e = &w->memo[(addr * 0x9E3779B97F4A7C15ULL) >> (64 - MEMO_BITS)];
	if (e->key == addr + 1 && e->sp == sp && e->gen == sp->gen) {
		st->memo_hits++;
		*mapp = e->map;
		return e->rule;
	}
	st->memo_misses++;
	struct mt_unwind_map *m = mt_unwind_maps_lookup(sp, addr);
	const struct mt_unwind_rule *rule = NULL;
	if (m && !__atomic_load_n(&m->resolved, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&w->j->cold);
		mt_unwind_maps_resolve(w->j->mp, m);
		pthread_mutex_unlock(&w->j->cold);
	}
	if (m && m->mod && m->delta_ok)
		rule = rule_of(w, m->mod, addr + (uint64_t)m->delta);
	if (rule || !m || !m->mod || !m->delta_ok)
		*e = (struct memo_entry){ .key = addr + 1, .gen = sp->gen, .sp = sp, .map = m,
					  .rule = rule };
	*mapp = m;
	return rule;
}

static void run(struct worker *w, struct job *jb)
{
	unsigned n = 0;
	int end = mt_unwind_walk_with(&w->finder, jb->sp, &jb->regs, &jb->mem, jb->out.frames,
				      w->j->max_depth, &n, &w->st);
	*jb->out.nframes = n;
	*jb->out.end = end;
	*jb->out.other_stack = w->st.last_other_stack;
	w->frames += n;
}

/* Take up to CLAIM jobs (lock held).  @return : how many. */
static size_t claim(struct mt_unwind_jobs *j, struct job **got)
{
	size_t k = 0;
	while (k < CLAIM && j->next < j->nr) {
		got[k++] = &j->blocks[j->next / BLOCK][j->next % BLOCK];
		j->next++;
	}
	return k;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct mt_unwind_jobs *j = w->j;
	struct job *got[CLAIM];
	pthread_mutex_lock(&j->lock);
	for (;;) {
		while (!j->stop && j->next == j->nr) {
			j->waiting++;
			pthread_cond_wait(&j->work, &j->lock);
			j->waiting--;
		}
		if (j->stop)
			break;
		size_t k = claim(j, got);
		pthread_mutex_unlock(&j->lock);
		for (size_t i = 0; i < k; i++)
			run(w, got[i]);
		pthread_mutex_lock(&j->lock);
		j->done += k;
		if (j->done == j->nr)
			pthread_cond_signal(&j->idle);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

unsigned mt_unwind_jobs_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? (unsigned)n : 1;
}

int mt_unwind_jobs_new(struct mt_unwind_jobs **out, unsigned threads, struct mt_unwind_maps *mp,
		       unsigned max_depth)
{
	*out = NULL;
	struct mt_unwind_jobs *j = calloc(1, sizeof(*j));
	if (!j)
		return MT_UNWIND_ENOMEM;
	j->mp = mp;
	j->max_depth = max_depth;
	j->nr_workers = threads < 2 ? 2 : threads;
	pthread_mutex_init(&j->lock, NULL);
	pthread_mutex_init(&j->cold, NULL);
	pthread_cond_init(&j->work, NULL);
	pthread_cond_init(&j->idle, NULL);
	/* Built on first use, by one thread: now, before there are others. */
	(void)mt_unwind_rule_frame_pointer();
	if (!(j->w = calloc(j->nr_workers, sizeof(*j->w))))
		goto fail;
	for (unsigned i = 0; i < j->nr_workers; i++) {
		struct worker *w = &j->w[i];
		w->j = j;
		w->finder = (struct mt_unwind_finder){ .find = find, .ctx = w };
		if (!(w->memo = calloc((size_t)1 << MEMO_BITS, sizeof(*w->memo))) ||
		    !(w->rules = calloc((size_t)1 << RULES_BITS, sizeof(*w->rules))))
			goto fail;
	}
	unsigned started = 0;
	for (unsigned i = 0; i + 1 < j->nr_workers; i++)
		if (pthread_create(&j->w[i].th, NULL, worker_main, &j->w[i]) == 0)
			j->w[i].started = 1, started++;
	if (!started)
		goto fail;
	*out = j;
	return 0;
fail:
	mt_unwind_jobs_free(j);
	return MT_UNWIND_ENOMEM;
}

void mt_unwind_jobs_free(struct mt_unwind_jobs *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->stop = 1;
	pthread_cond_broadcast(&j->work);
	pthread_mutex_unlock(&j->lock);
	for (unsigned i = 0; j->w && i < j->nr_workers; i++) {
		if (j->w[i].started)
			pthread_join(j->w[i].th, NULL);
		free(j->w[i].memo);
		free(j->w[i].rules);
	}
	for (size_t i = 0; i < j->nr_blocks; i++)
		free(j->blocks[i]);
	free(j->blocks);
	free(j->w);
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_destroy(&j->cold);
	pthread_cond_destroy(&j->work);
	pthread_cond_destroy(&j->idle);
	free(j);
}

int mt_unwind_jobs_add(struct mt_unwind_jobs *j, struct mt_unwind_space *sp,
		       const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
		       const struct mt_unwind_job_out *out)
{
	pthread_mutex_lock(&j->lock);
	size_t b = j->nr / BLOCK;
	if (b == j->nr_blocks) {
		struct job **v = realloc(j->blocks, (b + 1) * sizeof(*v));
		struct job *blk = v ? malloc(BLOCK * sizeof(*blk)) : NULL;
		if (v)
			j->blocks = v;
		if (!blk) {
			pthread_mutex_unlock(&j->lock);
			return MT_UNWIND_ENOMEM;
		}
		j->blocks[j->nr_blocks++] = blk;
	}
	struct job *jb = &j->blocks[b][j->nr % BLOCK];
	jb->sp = sp;
	jb->regs = *regs;
	jb->mem = *mem;
	jb->out = *out;
	j->nr++;
	/* A waiting worker is woken for a handful of walks, not for each:
	 * one wake-up per walk was more context switches than walks, and
	 * more time than the walks took (a parallel build's recording). */
	if (j->waiting && j->nr - j->next >= WAKE)
		pthread_cond_signal(&j->work);
	pthread_mutex_unlock(&j->lock);
	return 0;
}

size_t mt_unwind_jobs_pending(const struct mt_unwind_jobs *j)
{
	return j->nr;	/* only the adding thread asks, between drains */
}

uint64_t mt_unwind_jobs_drain(struct mt_unwind_jobs *j, struct mt_unwind_stats *stats)
{
	struct worker *self = &j->w[j->nr_workers - 1];
	struct job *got[CLAIM];
	pthread_mutex_lock(&j->lock);
	if (j->nr == 0) {
		pthread_mutex_unlock(&j->lock);
		return 0;
	}
	if (j->waiting && j->nr - j->next > CLAIM)
		pthread_cond_broadcast(&j->work);
	for (;;) {
		size_t k = claim(j, got);
		if (k) {
			pthread_mutex_unlock(&j->lock);
			for (size_t i = 0; i < k; i++)
				run(self, got[i]);
			pthread_mutex_lock(&j->lock);
			j->done += k;
			continue;
		}
		if (j->done == j->nr)
			break;
		pthread_cond_wait(&j->idle, &j->lock);
	}
	/* Every worker is waiting for work: their counts are still. */
	uint64_t frames = 0;
	for (unsigned i = 0; i < j->nr_workers; i++) {
		struct worker *w = &j->w[i];
		stats->steps_cfi += w->st.steps_cfi;
		stats->steps_fp += w->st.steps_fp;
		stats->rules_failed += w->st.rules_failed;
		stats->memo_hits += w->st.memo_hits;
		stats->memo_misses += w->st.memo_misses;
		frames += w->frames;
		memset(&w->st, 0, sizeof(w->st));
		w->frames = 0;
	}
	j->nr = j->next = j->done = 0;
	pthread_mutex_unlock(&j->lock);
	return frames;
}
