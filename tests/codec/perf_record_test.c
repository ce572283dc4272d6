/* Streams recorded at test time by perf record on the perf_small fixture,
 * in pipe and file mode: what the library reads must agree with the child's
 * pid, the attrs' register masks and stack sizes, the fixture's mappings,
 * perf script's own list of samples, and the input's bytes. */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SAMPLES 100000

struct seen {
	size_t samples, samples_with_stack, samples_full_stack, samples_dyn;
	size_t per_evsel[8];
	size_t fixture_exec_maps, libc_exec_maps, build_id_maps, exec_comms, exits;
	uint64_t libc_lo[8], libc_hi[8];
	size_t nr_libc;
	/* "pid/tid sec.usec event" per sample, as perf script prints them. */
	char **lines;
	size_t nr_lines;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_line(struct seen *sn, const struct mt_perf_sample *s)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%u/%u %llu.%06llu %s", s->pid, s->tid,
		 (unsigned long long)(s->time / 1000000000ULL),
		 (unsigned long long)(s->time % 1000000000ULL / 1000), s->evsel->name);
	sn->lines = realloc(sn->lines, (sn->nr_lines + 1) * sizeof(*sn->lines));
	cr_assert_not_null(sn->lines);
	sn->lines[sn->nr_lines++] = strdup(buf);
}

static void check_sample(struct mt_perf_reader *r, const struct perf_event_header *h,
			 pid_t child, struct seen *sn)
{
	const struct mt_perf_evsel *e;
	struct mt_perf_sample s;
	const uint8_t *rec = (const uint8_t *)h;
	int err = mt_perf_sample_parse(r, h, &s);

	cr_assert_eq(err, 0, "sample parse: %s", mt_perf_strerror(err));
	e = s.evsel;
	cr_assert_not_null(e);
	cr_assert_eq(s.sample_type, e->attr.sample_type);
	cr_assert_eq(s.pid, (uint32_t)child, "sample pid %u, child %d", s.pid, (int)child);
	if (e->nr_ids && (s.sample_type & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID))) {
		size_t i;

		for (i = 0; i < e->nr_ids && e->ids[i] != s.id; i++)
			;
		cr_assert_lt(i, e->nr_ids, "sample id %llu is not among its attr's ids",
			     (unsigned long long)s.id);
	}
	cr_assert(s.sample_type & PERF_SAMPLE_REGS_USER);
	cr_assert_eq(s.regs_mask, e->attr.sample_regs_user);
	cr_assert(s.regs_abi <= PERF_SAMPLE_REGS_ABI_64, "abi %llu",
		  (unsigned long long)s.regs_abi);
	if (s.regs_abi) {
		cr_assert_eq(s.nr_regs, (unsigned)__builtin_popcountll(e->attr.sample_regs_user));
		cr_assert_leq(s.regs_offset + 8 * s.nr_regs, h->size);
		cr_assert_eq(memcmp(rec + s.regs_offset, s.regs, 8 * s.nr_regs), 0,
			     "regs do not sit at regs_offset");
	} else {
		cr_assert_eq(s.nr_regs, 0);
	}
	cr_assert(s.sample_type & PERF_SAMPLE_STACK_USER);
	cr_assert_leq(s.stack_size, e->attr.sample_stack_user);
	cr_assert_eq(s.stack_size % 8, 0);
	cr_assert_leq(s.stack_dyn_size, s.stack_size);
	if (s.stack_size) {
		cr_assert_eq(s.stack, rec + s.stack_offset);
		/* size, data, dyn_size: the dump is followed by its dyn_size. */
		cr_assert_leq(s.stack_offset + s.stack_size + 8, h->size);
		cr_assert_eq(memcmp(rec + s.stack_offset - 8, &s.stack_size, 8), 0);
		cr_assert_eq(memcmp(rec + s.stack_offset + s.stack_size, &s.stack_dyn_size, 8), 0);
		sn->samples_with_stack++;
		sn->samples_full_stack += s.stack_size == e->attr.sample_stack_user;
		sn->samples_dyn += s.stack_dyn_size > 0;
	} else {
		cr_assert_null(s.stack);
		cr_assert_eq(s.stack_dyn_size, 0);
	}
	if (e->index < 8)
		sn->per_evsel[e->index]++;
	sn->samples++;
	add_line(sn, &s);
}

static void check_mmap(struct mt_perf_reader *r, const struct perf_event_header *h,
		       pid_t child, const char *fixture, struct seen *sn)
{
	struct mt_perf_mmap m;
	const char *base;

	cr_assert_eq(mt_perf_mmap_parse(r, h, &m), 0);
	cr_assert_not_null(m.filename);
	if (m.pid != (uint32_t)child)
		return;
	cr_assert(m.sid.present, "mmap of %s has no sample_id trailer", m.filename);
	cr_assert_eq(m.sid.pid, m.pid);
	sn->build_id_maps += m.build_id_size > 0;
	if (!m.executable)
		return;
	base = strrchr(m.filename, '/');
	base = base ? base + 1 : m.filename;
	if (!strcmp(m.filename, fixture))
		sn->fixture_exec_maps++;
	if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5)) {
		sn->libc_exec_maps++;
		if (sn->nr_libc < 8) {
			sn->libc_lo[sn->nr_libc] = m.start;
			sn->libc_hi[sn->nr_libc++] = m.start + m.len;
		}
	}
}

/* Read path through, checking everything; write every item back and
 * compare the bytes with the input. */
static void check_stream(const char *dir, const char *name, pid_t child,
			 enum mt_perf_format want, struct seen *sn)
{
	char path[PATH_MAX], copy[PATH_MAX], fixture[PATH_MAX];
	struct mt_perf_reader *r;
	struct mt_perf_writer *w;
	struct mt_perf_item it;
	uint64_t expect_off = 0;
	uint8_t *a, *b;
	size_t alen, blen, i;
	int fd, ret;

	memset(sn, 0, sizeof(*sn));
	pt_fixture_path(fixture, sizeof(fixture));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(copy, sizeof(copy), "%s/%s.copy", dir, name);
	cr_assert_eq(mt_perf_reader_open(&r, path), 0, "%s", mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(r), want);
	fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(mt_perf_writer_new(&w, fd, copy), 0);
	while ((ret = mt_perf_reader_next(r, &it)) == 1) {
		const struct perf_event_header *h = it.header;

		cr_assert_eq(it.offset, expect_off, "items must tile the input");
		expect_off += it.size;
		cr_assert_eq(mt_perf_writer_write(w, it.data, it.size), 0);
		if (it.kind == MT_PERF_ITEM_BLOB) {
			cr_assert_leq(it.size, MT_PERF_BLOB_CHUNK);
			continue;
		}
		cr_assert_eq(it.size, h->size);
		cr_assert_eq((uintptr_t)h % 8, 0);
		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			cr_assert_lt(sn->samples, MAX_SAMPLES);
			check_sample(r, h, child, sn);
			cr_assert_not_null(it.evsel);
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			check_mmap(r, h, child, fixture, sn);
			break;
		case PERF_RECORD_COMM: {
			struct mt_perf_comm c;

			cr_assert_eq(mt_perf_comm_parse(r, h, &c), 0);
			if (c.exec && c.pid == (uint32_t)child && !strcmp(c.comm, "perf_small"))
				sn->exec_comms++;
			break;
		}
		case PERF_RECORD_EXIT: {
			struct mt_perf_task t;

			cr_assert_eq(mt_perf_task_parse(r, h, &t), 0);
			sn->exits += t.pid == (uint32_t)child;
			break;
		}
		}
	}
	cr_assert_eq(ret, 0, "%s: %s", path, mt_perf_reader_error(r));
	cr_assert_eq(mt_perf_writer_free(w), 0);
	close(fd);
	a = pt_slurp(path, &alen);
	b = pt_slurp(copy, &blen);
	cr_assert_eq(expect_off, alen);
	cr_assert_eq(alen, blen, "round trip: %zu bytes in, %zu out", alen, blen);
	cr_assert_eq(memcmp(a, b, alen), 0, "round trip changed the bytes");
	free(a);
	free(b);

	cr_assert_gt(sn->samples, 0, "no samples in %s", path);
	cr_assert_gt(sn->samples_with_stack, 0);
	cr_assert_gt(sn->samples_full_stack, 0, "no sample carries a full stack dump");
	cr_assert_gt(sn->samples_dyn, 0);
	cr_assert_gt(sn->fixture_exec_maps, 0, "no executable mapping of %s", fixture);
	cr_assert_gt(sn->libc_exec_maps, 0, "no executable mapping of libc");
	cr_assert_eq(sn->exec_comms, 1);
	cr_assert_geq(sn->exits, 1);
	for (i = 0; i < mt_perf_reader_nr_evsels(r); i++)
		cr_assert_gt(mt_perf_reader_evsel(r, i)->nr_ids, 0);
	mt_perf_reader_free(r);
}

/* The samples perf script lists, as "pid/tid sec.usec event", must be ours.
 * only (may be NULL): compare that event's lines only (perf script splits a
 * group-read sample into one line per member). */
static void check_against_perf_script_only(const char *dir, const char *name,
					   struct seen *sn, const char *only)
{
	char cmd[2 * PATH_MAX], line[512];
	char **theirs = NULL;
	size_t n = 0, i;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cd '%s' && perf script -i '%s' -G -F pid,tid,time,event "
		 "2>/dev/null", dir, name);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned pid, tid;
		unsigned long long sec, usec;
		char ev[256], buf[300];

		if (sscanf(line, " %u/%u %llu.%llu: %255s", &pid, &tid, &sec, &usec, ev) != 5)
			continue;
		ev[strlen(ev) - 1] = 0;		/* perf script ends the name with ':' */
		if (only && strcmp(ev, only))
			continue;
		snprintf(buf, sizeof(buf), "%u/%u %llu.%06llu %s", pid, tid, sec, usec, ev);
		theirs = realloc(theirs, (n + 1) * sizeof(*theirs));
		theirs[n++] = strdup(buf);
	}
	cr_assert_eq(pclose(p), 0, "perf script failed on %s", name);
	cr_assert_eq(n, sn->nr_lines, "perf script lists %zu samples, we read %zu", n,
		     sn->nr_lines);
	qsort(theirs, n, sizeof(*theirs), cmp_str);
	qsort(sn->lines, n, sizeof(*theirs), cmp_str);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(sn->lines[i], theirs[i]);
	for (i = 0; i < n; i++) {
		free(theirs[i]);
		free(sn->lines[i]);
	}
	free(theirs);
	free(sn->lines);
}

static void check_against_perf_script(const char *dir, const char *name, struct seen *sn)
{
	check_against_perf_script_only(dir, name, sn, NULL);
}

#define DWARF_CLOCK "-e cpu-clock -F 999 --call-graph dwarf,4096"

Test(perf_record, pipe_mode_cpu_clock_dwarf)
{
	char dir[PATH_MAX];
	struct seen sn;
	pid_t child;

	pt_tmpdir(dir, sizeof(dir));
	child = pt_perf_record(dir, DWARF_CLOCK, 1, "p.data");
	check_stream(dir, "p.data", child, MT_PERF_PIPE, &sn);
	check_against_perf_script(dir, "p.data", &sn);
	pt_tmpdir_remove(dir);
}

Test(perf_record, file_mode_cpu_clock_dwarf)
{
	char dir[PATH_MAX];
	struct seen sn;
	pid_t child;

	pt_tmpdir(dir, sizeof(dir));
	child = pt_perf_record(dir, DWARF_CLOCK, 0, "f.data");
	check_stream(dir, "f.data", child, MT_PERF_FILE, &sn);
	check_against_perf_script(dir, "f.data", &sn);
	pt_tmpdir_remove(dir);
}

/* Two attrs (a malloc uprobe and cpu-clock) with different sample types:
 * perf adds IDENTIFIER, and each sample must find its own attr. */
static char probe_event[128];

/* Runs even when an assertion fails, so no probe outlives its test. */
static void probe_cleanup(void)
{
	if (probe_event[0])
		pt_probe_del(probe_event);
	probe_event[0] = 0;
}

static void uprobe_case(int pipe_mode)
{
	char dir[PATH_MAX], args[512], path[PATH_MAX + 16];
	char *event = probe_event;
	const char *name = pipe_mode ? "u.pipe" : "u.file";
	struct mt_perf_reader *r;
	struct seen sn;
	pid_t child;
	size_t i;

	pt_tmpdir(dir, sizeof(dir));
	pt_probe_add(event, sizeof(probe_event));
	snprintf(args, sizeof(args), "-e %s -e cpu-clock -F 999 --call-graph dwarf,4096", event);
	child = pt_perf_record(dir, args, pipe_mode, name);
	check_stream(dir, name, child, pipe_mode ? MT_PERF_PIPE : MT_PERF_FILE, &sn);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cr_assert_eq(mt_perf_reader_open(&r, path), 0);
	cr_assert_eq(pt_drain(r, SIZE_MAX, NULL), 0);
	cr_assert_eq(mt_perf_reader_nr_evsels(r), 2);
	cr_assert_str_eq(mt_perf_reader_evsel(r, 0)->name, event);
	cr_assert(!strcmp(mt_perf_reader_evsel(r, 1)->name, "cpu-clock") ||
		  !strcmp(mt_perf_reader_evsel(r, 1)->name, "cpu-clock:u"),
		  "name '%s'", mt_perf_reader_evsel(r, 1)->name);
	cr_assert(mt_perf_reader_evsel(r, 0)->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	cr_assert_neq(mt_perf_reader_evsel(r, 0)->attr.sample_type,
		      mt_perf_reader_evsel(r, 1)->attr.sample_type);
	mt_perf_reader_free(r);
	cr_assert_gt(sn.per_evsel[0], 0, "no malloc uprobe samples");
	cr_assert_gt(sn.per_evsel[1], 0, "no cpu-clock samples");
	check_against_perf_script(dir, name, &sn);

	/* Every malloc hit's ip lies in libc's text. */
	cr_assert_eq(mt_perf_reader_open(&r, path), 0);
	for (;;) {
		struct mt_perf_item it;
		struct mt_perf_sample s;
		int in = 0;

		if (mt_perf_reader_next(r, &it) != 1)
			break;
		if (it.kind != MT_PERF_ITEM_RECORD || it.header->type != PERF_RECORD_SAMPLE)
			continue;
		cr_assert_eq(mt_perf_sample_parse(r, it.header, &s), 0);
		if (s.evsel->index != 0)
			continue;
		for (i = 0; i < sn.nr_libc; i++)
			in |= s.ip >= sn.libc_lo[i] && s.ip < sn.libc_hi[i];
		cr_assert(in, "malloc hit at %#llx outside libc", (unsigned long long)s.ip);
	}
	mt_perf_reader_free(r);
	pt_tmpdir_remove(dir);
}

Test(perf_record, pipe_mode_uprobe_and_cpu_clock, .fini = probe_cleanup)
{
	uprobe_case(1);
}

Test(perf_record, file_mode_uprobe_and_cpu_clock, .fini = probe_cleanup)
{
	uprobe_case(0);
}

/* --buildid-mmap: MMAP2 records carry build-ids instead of inodes. */
Test(perf_record, mmap2_build_id_form)
{
	char dir[PATH_MAX];
	struct seen sn;
	pid_t child;

	pt_tmpdir(dir, sizeof(dir));
	child = pt_perf_record(dir, DWARF_CLOCK " --buildid-mmap", 1, "b.data");
	check_stream(dir, "b.data", child, MT_PERF_PIPE, &sn);
	cr_assert_gt(sn.build_id_maps, 0, "no MMAP2 with a build-id");
	check_against_perf_script(dir, "b.data", &sn);
	pt_tmpdir_remove(dir);
}

/* Leader sampling of a group: samples carry READ (GROUP|ID|LOST) before the
 * callchain, and two attrs without IDENTIFIER are told apart by ID. */
Test(perf_record, group_read_leader_sampling)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], leader[128];
	struct mt_perf_reader *r;
	const struct mt_perf_evsel *e;
	struct seen sn;
	pid_t child;

	pt_tmpdir(dir, sizeof(dir));
	child = pt_perf_record(dir, "-e '{cpu-clock,task-clock}:S' --call-graph dwarf,1024", 1,
			       "g.data");
	check_stream(dir, "g.data", child, MT_PERF_PIPE, &sn);
	snprintf(path, sizeof(path), "%s/g.data", dir);
	cr_assert_eq(mt_perf_reader_open(&r, path), 0);
	cr_assert_eq(pt_drain(r, SIZE_MAX, NULL), 0);
	cr_assert_eq(mt_perf_reader_nr_evsels(r), 2);
	e = mt_perf_reader_evsel(r, 0);
	cr_assert(e->attr.sample_type & PERF_SAMPLE_READ);
	cr_assert(e->attr.read_format & PERF_FORMAT_GROUP);
	cr_assert_not(e->attr.sample_type & PERF_SAMPLE_IDENTIFIER);
	snprintf(leader, sizeof(leader), "%s", e->name);
	mt_perf_reader_free(r);
	cr_assert_gt(sn.per_evsel[0], 0);
	cr_assert_eq(sn.per_evsel[1], 0, "only the leader samples");
	check_against_perf_script_only(dir, "g.data", &sn, leader);
	pt_tmpdir_remove(dir);
}
