/* Hand-written pipe streams (what mt-capture writes) read back field by
 * field; any input read in any chunking, through any kind of input, gives
 * the same items and writes back the same bytes. */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_util.h"
#include "tests/codec/perf_test_build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Items as a list of (offset, size, kind, bytes hash) for comparisons. */
struct item_list {
	struct { uint64_t off; size_t size; int kind; uint64_t hash; } *v;
	size_t n;
	uint8_t *bytes;		/* the items' bytes, concatenated */
	size_t len;
};

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

static void collect(struct mt_perf_reader *r, struct item_list *l)
{
	struct mt_perf_item it;
	int ret;

	memset(l, 0, sizeof(*l));
	while ((ret = mt_perf_reader_next(r, &it)) == 1) {
		l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
		l->bytes = realloc(l->bytes, l->len + it.size);
		cr_assert(l->v && l->bytes);
		l->v[l->n].off = it.offset;
		l->v[l->n].size = it.size;
		l->v[l->n].kind = it.kind;
		l->v[l->n].hash = fnv(it.data, it.size);
		l->n++;
		memcpy(l->bytes + l->len, it.data, it.size);
		l->len += it.size;
	}
	cr_assert_eq(ret, 0, "%s", mt_perf_reader_error(r));
}

static void list_free(struct item_list *l)
{
	free(l->v);
	free(l->bytes);
}

/* Records are the same whatever the chunking; blobs may be cut anywhere
 * but must cover the same bytes. */
static void same_records(const struct item_list *a, const struct item_list *b)
{
	size_t i = 0, j = 0;

	cr_assert_eq(a->len, b->len);
	cr_assert_eq(memcmp(a->bytes, b->bytes, a->len), 0);
	for (;;) {
		while (i < a->n && a->v[i].kind == MT_PERF_ITEM_BLOB)
			i++;
		while (j < b->n && b->v[j].kind == MT_PERF_ITEM_BLOB)
			j++;
		if (i == a->n || j == b->n)
			break;
		cr_assert_eq(a->v[i].off, b->v[j].off);
		cr_assert_eq(a->v[i].size, b->v[j].size);
		cr_assert_eq(a->v[i].hash, b->v[j].hash);
		i++;
		j++;
	}
	cr_assert_eq(i, a->n);
	cr_assert_eq(j, b->n);
}

Test(perf_roundtrip, hand_written_stream_fields)
{
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct mt_perf_item it;
	struct pt_mem m;
	int seen[PT_NR_KINDS] = { 0 };
	int ret;

	pt_stream_build(&st);
	cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, 0), 0, "%s",
		     mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(r), MT_PERF_PIPE);
	while ((ret = mt_perf_reader_next(r, &it)) == 1) {
		const struct perf_event_header *h = it.header;

		if (it.kind == MT_PERF_ITEM_BLOB) {
			cr_assert_eq(it.offset, 0);
			cr_assert_eq(it.size, 16);
			seen[PT_PIPE_HEADER]++;
			continue;
		}
		switch (h->type) {
		case PERF_RECORD_SAMPLE: {
			struct mt_perf_sample s;
			unsigned i;

			cr_assert_eq(mt_perf_sample_parse(r, h, &s), 0);
			cr_assert_eq(it.evsel, s.evsel);
			if (s.evsel->index == 0) {
				cr_assert_str_eq(s.evsel->name, "mt:alloc");
				cr_assert_eq(s.id, PT_ID_A2);
				cr_assert_eq(s.ip, PT_IP);
				cr_assert_eq(s.pid, PT_PID);
				cr_assert_eq(s.tid, PT_TID);
				cr_assert_eq(s.time, PT_TIME);
				cr_assert_eq(s.period, 1);
				cr_assert_eq(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
				cr_assert_eq(s.nr_regs, 3);
				for (i = 0; i < 3; i++)
					cr_assert_eq(s.regs[i], PT_REG(i));
				cr_assert_eq(s.stack_size, PT_STACK);
				cr_assert_eq(s.stack_dyn_size, PT_STACK - 16);
				for (i = 0; i < PT_STACK; i++)
					cr_assert_eq(s.stack[i], (uint8_t)(i * 7));
				seen[PT_SAMPLE_A]++;
			} else {
				cr_assert_str_eq(s.evsel->name, "cpu-clock");
				cr_assert_eq(s.id, PT_ID_B);
				cr_assert_eq(s.cpu, 1);
				cr_assert_eq(s.period, 1000);
				cr_assert_eq(s.regs_abi, 0);
				cr_assert_eq(s.nr_regs, 0);
				cr_assert_eq(s.stack_size, 0);
				cr_assert_null(s.stack);
				seen[PT_SAMPLE_B]++;
			}
			break;
		}
		case PERF_RECORD_MMAP2: {
			struct mt_perf_mmap mm;

			cr_assert_eq(mt_perf_mmap_parse(r, h, &mm), 0);
			/* The trailer's IDENTIFIER names attr A. */
			cr_assert_eq(it.evsel, mt_perf_reader_evsel(r, 0));
			cr_assert_eq(mm.pid, PT_PID);
			cr_assert_eq(mm.start, 0x400000);
			cr_assert_eq(mm.len, 0x2000);
			cr_assert_eq(mm.pgoff, 0x1000);
			cr_assert(mm.executable);
			cr_assert(mm.sid.present);
			cr_assert_eq(mm.sid.pid, PT_PID);
			cr_assert_eq(mm.sid.time, PT_TIME - 1);
			cr_assert_eq(mm.sid.id, PT_ID_A1);
			if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				cr_assert_eq(mm.build_id_size, 20);
				cr_assert_eq(mm.build_id[19], 19);
				cr_assert_eq(mm.ino, 0);
				cr_assert_str_eq(mm.filename, "/usr/lib/libbuilt.so");
				seen[PT_MMAP2_BUILD_ID]++;
			} else {
				cr_assert_eq(mm.build_id_size, 0);
				cr_assert_eq(mm.maj, 8);
				cr_assert_eq(mm.min, 1);
				cr_assert_eq(mm.ino, 123456);
				cr_assert_eq(mm.ino_generation, 7);
				cr_assert_eq(mm.prot, PROT_READ | PROT_EXEC);
				cr_assert_str_eq(mm.filename, "/usr/bin/prog");
				seen[PT_MMAP2_INODE]++;
			}
			break;
		}
		case PERF_RECORD_MMAP: {
			struct mt_perf_mmap mm;

			cr_assert_eq(mt_perf_mmap_parse(r, h, &mm), 0);
			cr_assert_str_eq(mm.filename, "/old/mmap");
			cr_assert(mm.executable);
			cr_assert_eq(mm.start, 0x10000);
			seen[PT_MMAP]++;
			break;
		}
		case PERF_RECORD_COMM: {
			struct mt_perf_comm c;

			cr_assert_eq(mt_perf_comm_parse(r, h, &c), 0);
			cr_assert_str_eq(c.comm, "prog");
			cr_assert(c.exec);
			cr_assert_eq(c.sid.tid, PT_TID);
			seen[PT_COMM]++;
			break;
		}
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT: {
			struct mt_perf_task t;

			cr_assert_eq(mt_perf_task_parse(r, h, &t), 0);
			cr_assert_eq(t.pid, PT_PID);
			cr_assert_eq(t.ppid, 1);
			cr_assert_eq(t.tid, PT_TID);
			cr_assert_eq(t.ptid, PT_PID);
			cr_assert_eq(t.time, PT_TIME + 5);
			seen[h->type == PERF_RECORD_FORK ? PT_FORK : PT_EXIT]++;
			break;
		}
		case PERF_RECORD_LOST: {
			struct mt_perf_lost l;

			cr_assert_eq(mt_perf_lost_parse(r, h, &l), 0);
			cr_assert_eq(l.id, PT_ID_A1);
			cr_assert_eq(l.lost, 42);
			seen[PT_LOST]++;
			break;
		}
		case PERF_RECORD_LOST_SAMPLES: {
			struct mt_perf_lost l;

			cr_assert_eq(mt_perf_lost_parse(r, h, &l), 0);
			cr_assert_eq(l.lost, 9);
			seen[PT_LOST_SAMPLES]++;
			break;
		}
		case PT_UNKNOWN_TYPE:
			cr_assert_eq(h->size, 24);
			seen[PT_UNKNOWN]++;
			break;
		default:
			seen[PT_OTHER]++;
		}
	}
	cr_assert_eq(ret, 0, "%s", mt_perf_reader_error(r));
	for (int k = 0; k < PT_OTHER; k++)
		cr_assert_eq(seen[k], 1, "kind %d seen %d times", k, seen[k]);
	cr_assert_eq(mt_perf_reader_nr_evsels(r), 2);
	cr_assert_eq(mt_perf_reader_evsel(r, 0)->nr_ids, 2);
	cr_assert_eq(mt_perf_reader_evsel(r, 1)->nr_ids, 1);
	mt_perf_reader_free(r);
	pt_stream_free(&st);
}

/* The writer's output is the builder's byte for byte, and reading then
 * writing changes nothing. */
Test(perf_roundtrip, hand_written_stream_bytes)
{
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct item_list l;
	struct pt_mem m;

	pt_stream_build(&st);
	cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, 0), 0);
	collect(r, &l);
	cr_assert_eq(l.len, st.len);
	cr_assert_eq(memcmp(l.bytes, st.data, st.len), 0);
	list_free(&l);
	mt_perf_reader_free(r);
	pt_stream_free(&st);
}

/* Debian's perf must read what the writer writes: perf script lists the
 * hand-written samples with their pid/tid and time. */
Test(perf_roundtrip, perf_script_reads_hand_written_stream)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], cmd[2 * PATH_MAX], line[512];
	struct pt_stream st;
	int fd, n = 0;
	FILE *p;

	pt_tmpdir(dir, sizeof(dir));
	pt_stream_build_ex(&st, 0);
	snprintf(path, sizeof(path), "%s/hand.data", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, st.data, st.len), (ssize_t)st.len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s' -G -F pid,tid,time,event 2>&1", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p)) {
		char want_a[128], want_b[128];

		snprintf(want_a, sizeof(want_a), "%u/%u", PT_PID, PT_TID);
		snprintf(want_b, sizeof(want_b), "%llu.%06llu:",
			 (unsigned long long)(PT_TIME / 1000000000ULL),
			 (unsigned long long)(PT_TIME % 1000000000ULL / 1000));
		if (strstr(line, want_a) && strstr(line, want_b))
			n++;
		else
			cr_log_info("perf script: %s", line);
	}
	pclose(p);
	cr_assert_eq(n, 2, "perf script shows %d of the 2 samples", n);
	pt_stream_free(&st);
	pt_tmpdir_remove(dir);
}

/* Every chunking of the input gives the same records. */
Test(perf_roundtrip, chunked_reads)
{
	static const size_t chunks[] = { 1, 3, 8, 13, 4097, 65537 };
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct item_list ref, l;
	struct pt_mem m;
	size_t i;

	pt_stream_build(&st);
	cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, 0), 0);
	collect(r, &ref);
	mt_perf_reader_free(r);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, chunks[i]), 0);
		collect(r, &l);
		same_records(&ref, &l);
		list_free(&l);
		mt_perf_reader_free(r);
	}
	list_free(&ref);
	pt_stream_free(&st);
}

/* Lent chunks (mt_perf_reader_new_chunked): each chunk in a buffer of its
 * own, freed at the next call, so that a pointer kept into an old chunk is a
 * use after free (ASan) and a wrong byte. */
struct lender {
	const uint8_t *data;
	size_t len, pos, chunk;
	uint8_t *lent;
};

static ssize_t lend(void *ctx, const void **out)
{
	struct lender *l = ctx;
	size_t n = l->len - l->pos;

	free(l->lent);
	l->lent = NULL;
	if (n > l->chunk)
		n = l->chunk;
	if (n == 0)
		return 0;
	/* one byte more than needed: chunks start at odd addresses too */
	l->lent = malloc(n + 1);
	cr_assert_not_null(l->lent);
	memcpy(l->lent + (l->pos & 1), l->data + l->pos, n);
	*out = l->lent + (l->pos & 1);
	l->pos += n;
	return (ssize_t)n;
}

static void same_through_lent_chunks(const uint8_t *data, size_t len, const struct item_list *ref,
				     size_t chunk)
{
	struct lender l = { .data = data, .len = len, .chunk = chunk };
	struct mt_perf_reader *r;
	struct item_list got;

	cr_assert_eq(mt_perf_reader_new_chunked(&r, lend, &l, "lent"), 0, "%s",
		     mt_perf_reader_error(NULL));
	collect(r, &got);
	same_records(ref, &got);
	list_free(&got);
	mt_perf_reader_free(r);
	free(l.lent);
}

Test(perf_roundtrip, lent_chunks)
{
	static const size_t chunks[] = { 1, 3, 8, 13, 4097, 65537, SIZE_MAX };
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct item_list ref;
	struct pt_mem m;
	uint8_t *data;
	size_t len, i;

	pt_stream_build(&st);
	cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, 0), 0);
	collect(r, &ref);
	mt_perf_reader_free(r);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		same_through_lent_chunks(st.data, st.len, &ref, chunks[i]);
	list_free(&ref);
	pt_stream_free(&st);

	/* A real recording: 1 KiB stack dumps, records cut by most chunk ends. */
	pt_tmpdir(dir, sizeof(dir));
	pt_perf_record(dir, "-e cpu-clock -F 999 --call-graph dwarf,1024", 1, "p.data");
	snprintf(path, sizeof(path), "%s/p.data", dir);
	data = pt_slurp(path, &len);
	cr_assert_eq(pt_mem_reader(&r, &m, data, len, 0), 0);
	collect(r, &ref);
	mt_perf_reader_free(r);
	cr_assert_gt(ref.n, 10, "only %zu items", ref.n);
	same_through_lent_chunks(data, len, &ref, 777);
	same_through_lent_chunks(data, len, &ref, 8191);
	list_free(&ref);
	free(data);
	pt_tmpdir_remove(dir);
}

/* A perf.data file read by path (seekable, pread), through a read function
 * in small chunks and through a real pipe (non-seekable: the bytes before
 * the data section are kept) gives the same items and attrs. */
Test(perf_roundtrip, file_mode_seekable_and_not)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct mt_perf_reader *r, *q;
	struct item_list a, b;
	struct pt_mem m;
	uint8_t *data;
	size_t len, i;
	int fds[2], status;
	pid_t feeder;

	pt_tmpdir(dir, sizeof(dir));
	pt_perf_record(dir, "-e cpu-clock -F 999 --call-graph dwarf,1024", 0, "f.data");
	snprintf(path, sizeof(path), "%s/f.data", dir);
	data = pt_slurp(path, &len);

	cr_assert_eq(mt_perf_reader_open(&r, path), 0, "%s", mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(r), MT_PERF_FILE);
	collect(r, &a);
	cr_assert_eq(a.len, len);
	cr_assert_eq(memcmp(a.bytes, data, len), 0);
	/* perf adds ":u" when it may only count user space. */
	cr_assert(!strcmp(mt_perf_reader_evsel(r, 0)->name, "cpu-clock") ||
		  !strcmp(mt_perf_reader_evsel(r, 0)->name, "cpu-clock:u"),
		  "name '%s'", mt_perf_reader_evsel(r, 0)->name);

	cr_assert_eq(pt_mem_reader(&q, &m, data, len, 777), 0, "%s", mt_perf_reader_error(NULL));
	collect(q, &b);
	same_records(&a, &b);
	list_free(&b);
	cr_assert_eq(mt_perf_reader_nr_evsels(q), mt_perf_reader_nr_evsels(r));
	for (i = 0; i < mt_perf_reader_nr_evsels(r); i++) {
		const struct mt_perf_evsel *x = mt_perf_reader_evsel(r, i);
		const struct mt_perf_evsel *y = mt_perf_reader_evsel(q, i);

		cr_assert_eq(memcmp(&x->attr, &y->attr, sizeof(x->attr)), 0);
		cr_assert_eq(x->nr_ids, y->nr_ids);
		cr_assert_eq(memcmp(x->ids, y->ids, 8 * x->nr_ids), 0);
		/* Names live in a feature section after the data: seekable only. */
		cr_assert_str_eq(y->name, "");
	}
	mt_perf_reader_free(q);

	cr_assert_eq(pipe(fds), 0);
	feeder = fork();
	cr_assert_geq(feeder, 0);
	if (feeder == 0) {
		size_t off = 0;

		close(fds[0]);
		while (off < len) {
			ssize_t n = write(fds[1], data + off, len - off > 1000 ? 1000 : len - off);

			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(mt_perf_reader_fdopen(&q, fds[0], "pipe"), 0, "%s",
		     mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(q), MT_PERF_FILE);
	collect(q, &b);
	same_records(&a, &b);
	cr_assert_eq(mt_perf_reader_evsel(q, 0)->nr_ids, mt_perf_reader_evsel(r, 0)->nr_ids);
	list_free(&b);
	mt_perf_reader_free(q);
	close(fds[0]);
	cr_assert_eq(waitpid(feeder, &status, 0), feeder);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	list_free(&a);
	mt_perf_reader_free(r);
	free(data);
	pt_tmpdir_remove(dir);
}

Test(perf_roundtrip, writer_reports_failed_writes)
{
	struct mt_perf_writer *w;
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(mt_perf_writer_new(&w, fds[1], "closed pipe"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(w), 0);
	cr_assert_eq(mt_perf_writer_bytes(w), 16);
	cr_assert_eq(mt_perf_writer_flush(w), MT_PERF_EIO);
	cr_assert(strstr(mt_perf_writer_error(w), "offset 0"), "%s", mt_perf_writer_error(w));
	cr_assert(strstr(mt_perf_writer_error(w), strerror(EPIPE)), "%s",
		  mt_perf_writer_error(w));
	/* Sticky. */
	cr_assert_eq(mt_perf_writer_pipe_header(w), MT_PERF_EIO);
	cr_assert_eq(mt_perf_writer_free(w), MT_PERF_EIO);
	close(fds[1]);
}

Test(perf_roundtrip, open_reports_missing_file)
{
	struct mt_perf_reader *r = (void *)1;

	cr_assert_eq(mt_perf_reader_open(&r, "/nonexistent/x.data"), MT_PERF_EIO);
	cr_assert_null(r);
	cr_assert_str_eq(mt_perf_reader_error(NULL),
			 "cannot open '/nonexistent/x.data': No such file or directory");
}

/* perf's EVENT_DESC feature as a HEADER_FEATURE record names attrs by id,
 * whatever the order of its entries. */
Test(perf_roundtrip, event_desc_feature_names)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				     .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP };
	uint64_t ids_a[] = { 11, 12 }, ids_b[] = { 21 };
	uint8_t feat[1024] = { 0 };
	struct mt_perf_reader *r;
	struct mt_perf_writer *w;
	struct pt_mem m;
	struct perf_event_header h;
	size_t n = 0;
	uint32_t v;
	uint64_t feat_id = 12, len;
	uint8_t *data;
	int fd;

#define FEAT(p, sz) (memcpy(feat + n, (p), (sz)), n += (sz))
	v = 2;
	FEAT(&v, 4);
	v = sizeof(a);
	FEAT(&v, 4);
	/* The second attr comes first: u32 nr_ids, u32 len, name, ids. */
	FEAT(&a, sizeof(a));
	v = 1;
	FEAT(&v, 4);
	v = 64;
	FEAT(&v, 4);
	memcpy(feat + n, "probe:second", 13);
	n += 64;
	FEAT(ids_b, 8);
	FEAT(&a, sizeof(a));
	v = 2;
	FEAT(&v, 4);
	v = 8;
	FEAT(&v, 4);
	memcpy(feat + n, "first", 6);
	n += 8;
	FEAT(ids_a, 16);
#undef FEAT
	fd = memfd_create("feat", 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(mt_perf_writer_new(&w, fd, "memfd"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(w), 0);
	cr_assert_eq(mt_perf_writer_attr(w, &a, ids_a, 2), 0);
	cr_assert_eq(mt_perf_writer_attr(w, &a, ids_b, 1), 0);
	h.type = 80;
	h.misc = 0;
	h.size = (uint16_t)(8 + 8 + n);
	cr_assert_eq(mt_perf_writer_write(w, &h, 8), 0);
	cr_assert_eq(mt_perf_writer_write(w, &feat_id, 8), 0);
	cr_assert_eq(mt_perf_writer_write(w, feat, n), 0);
	cr_assert_eq(mt_perf_writer_free(w), 0);
	len = (uint64_t)lseek(fd, 0, SEEK_END);
	data = malloc(len);
	cr_assert_eq(pread(fd, data, len, 0), (ssize_t)len);
	close(fd);

	cr_assert_eq(pt_mem_reader(&r, &m, data, len, 0), 0);
	cr_assert_eq(pt_drain(r, 100, NULL), 0, "%s", mt_perf_reader_error(r));
	cr_assert_eq(mt_perf_reader_nr_evsels(r), 2);
	cr_assert_str_eq(mt_perf_reader_evsel(r, 0)->name, "first");
	cr_assert_str_eq(mt_perf_reader_evsel(r, 1)->name, "probe:second");
	mt_perf_reader_free(r);
	free(data);
}

/* A reader that has seen one attr (and nothing else). */
static struct mt_perf_reader *reader_with_attr(const struct perf_event_attr *a, uint64_t id,
					       uint8_t **buf)
{
	static struct pt_mem m;
	struct mt_perf_reader *r;
	struct mt_perf_writer *w;
	off_t len;
	int fd = memfd_create("attr", 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(mt_perf_writer_new(&w, fd, "memfd"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(w), 0);
	cr_assert_eq(mt_perf_writer_attr(w, a, &id, 1), 0);
	cr_assert_eq(mt_perf_writer_free(w), 0);
	len = lseek(fd, 0, SEEK_END);
	*buf = malloc((size_t)len);
	cr_assert_eq(pread(fd, *buf, (size_t)len, 0), len);
	close(fd);
	cr_assert_eq(pt_mem_reader(&r, &m, *buf, (size_t)len, 0), 0);
	cr_assert_eq(pt_drain(r, 10, NULL), 0);
	return r;
}

/* Every sample field perf_event.h documents, in kernel order; the ones mt
 * skips (READ, CALLCHAIN, RAW, BRANCH_STACK, the tail) must be stepped over
 * exactly, and any cut inside them is an overrun. */
Test(perf_roundtrip, sample_every_field)
{
	struct perf_event_attr a = { 0 };
	union { uint64_t u[128]; struct perf_event_header h; } rb = { { 0 } };
	uint64_t *rec = rb.u;
	uint8_t *buf, *raw;
	struct mt_perf_reader *r;
	struct mt_perf_sample s;
	struct perf_event_header *h = &rb.h;
	size_t n = 1, i, size, stack_at, regs_at;

	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
			PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR |
			PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE |
			PERF_SAMPLE_AUX;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |
			PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	a.sample_regs_user = 0x3;
	a.sample_regs_intr = 0x7;
	a.sample_stack_user = 16;
	r = reader_with_attr(&a, 5, &buf);

	rec[n++] = 5;				/* IDENTIFIER */
	rec[n++] = 0xaaa;			/* IP */
	rec[n++] = 10 | (11ULL << 32);		/* TID */
	rec[n++] = 777;				/* TIME */
	rec[n++] = 0xadd;			/* ADDR */
	rec[n++] = 5;				/* ID */
	rec[n++] = 66;				/* STREAM_ID */
	rec[n++] = 3;				/* CPU, res */
	rec[n++] = 99;				/* PERIOD */
	rec[n++] = 2;				/* READ: nr, enabled, running, 2 x {v, id, lost} */
	n += 2 + 2 * 3;
	rec[n++] = 3;				/* CALLCHAIN: nr, ips */
	n += 3;
	raw = (uint8_t *)&rec[n];		/* RAW: u32 size, 12 bytes */
	raw[0] = 12;
	n += 2;
	rec[n++] = 2;				/* BRANCH_STACK: nr, hw_idx, 2 x 24 bytes */
	n += 1 + 6;
	regs_at = 8 * n + 8;
	rec[n++] = PERF_SAMPLE_REGS_ABI_64;	/* REGS_USER: abi, 2 regs */
	rec[n++] = 0x1111;
	rec[n++] = 0x2222;
	rec[n++] = 16;				/* STACK_USER: size, data, dyn_size */
	stack_at = 8 * n;
	rec[n++] = 0x5555;
	rec[n++] = 0x6666;
	rec[n++] = 8;
	n += 3;					/* WEIGHT DATA_SRC TRANSACTION */
	rec[n++] = PERF_SAMPLE_REGS_ABI_64;	/* REGS_INTR: abi, 3 regs */
	n += 3;
	n += 4;					/* PHYS_ADDR CGROUP DATA/CODE_PAGE_SIZE */
	rec[n++] = 8;				/* AUX: size, data */
	n += 1;
	size = 8 * n;
	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)size;

	cr_assert_eq(mt_perf_sample_parse(r, h, &s), 0);
	cr_assert_eq(s.id, 5);
	cr_assert_eq(s.ip, 0xaaa);
	cr_assert_eq(s.pid, 10);
	cr_assert_eq(s.tid, 11);
	cr_assert_eq(s.time, 777);
	cr_assert_eq(s.addr, 0xadd);
	cr_assert_eq(s.stream_id, 66);
	cr_assert_eq(s.cpu, 3);
	cr_assert_eq(s.period, 99);
	cr_assert_eq(s.nr_regs, 2);
	cr_assert_eq(s.regs[0], 0x1111);
	cr_assert_eq(s.regs[1], 0x2222);
	cr_assert_eq(s.regs_offset, regs_at);
	cr_assert_eq(s.stack_size, 16);
	cr_assert_eq(s.stack_offset, stack_at);
	cr_assert_eq(s.stack_dyn_size, 8);
	/* Fields the attr lacks are 0, whatever the struct held before. */
	{
		struct perf_event_attr b = { .size = sizeof(b), .sample_type = PERF_SAMPLE_IP };
		struct mt_perf_reader *q;
		union { uint64_t u[2]; struct perf_event_header h; } small = { { 0, 0xbbb } };
		uint8_t *qbuf;

		small.h.type = PERF_RECORD_SAMPLE;
		small.h.size = 16;
		q = reader_with_attr(&b, 9, &qbuf);
		memset(&s, 0xa5, sizeof(s));
		cr_assert_eq(mt_perf_sample_parse(q, &small.h, &s), 0);
		cr_assert_eq(s.ip, 0xbbb);
		cr_assert_eq(s.pid + s.tid + s.cpu + s.time + s.id + s.period, 0);
		cr_assert_eq(s.regs_abi + s.nr_regs + s.regs_offset + s.stack_size, 0);
		cr_assert_eq(s.stack_dyn_size + s.stack_offset, 0);
		cr_assert_null(s.stack);
		mt_perf_reader_free(q);
		free(qbuf);
	}
	/* Every shorter record overruns some field. */
	for (i = 8; i < size; i += 4) {
		h->size = (uint16_t)i;
		cr_assert_eq(mt_perf_sample_parse(r, h, &s), MT_PERF_EFORMAT, "size %zu", i);
	}
	mt_perf_reader_free(r);
	free(buf);
}

/* Records that cannot exist are refused and nothing is written. */
Test(perf_roundtrip, writer_refuses_impossible_records)
{
	struct perf_event_attr a = { .size = 12 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 4 };
	uint64_t id = 1;
	char *name = malloc(70000);
	struct mt_perf_writer *w;
	int fd = memfd_create("w", 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(mt_perf_writer_new(&w, fd, "memfd"), 0);
	cr_assert_eq(mt_perf_writer_attr(w, &a, &id, 1), MT_PERF_EFORMAT);
	a.size = sizeof(a) + 8;
	cr_assert_eq(mt_perf_writer_attr(w, &a, &id, 1), MT_PERF_EFORMAT);
	a.size = sizeof(a);
	cr_assert_eq(mt_perf_writer_attr(w, &a, &id, 9000), MT_PERF_EFORMAT);
	cr_assert_eq(mt_perf_writer_record(w, &h), MT_PERF_EFORMAT);
	memset(name, 'n', 69999);
	name[69999] = 0;
	cr_assert_eq(mt_perf_writer_event_name(w, 1, name), MT_PERF_EFORMAT);
	cr_assert_eq(mt_perf_writer_bytes(w), 0);
	/* Not sticky: the writer still works. */
	cr_assert_eq(mt_perf_writer_attr(w, &a, &id, 1), 0);
	cr_assert_eq(mt_perf_writer_bytes(w), 8 + sizeof(a) + 8);
	cr_assert_eq(mt_perf_writer_free(w), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_END), (off_t)(8 + sizeof(a) + 8));
	close(fd);
	free(name);
}
