/* mt-fold --pprof's encoder: profiles from hand-written mt-unwind text
 * (with --pprof-info's module lines and suffixes) encoded, then decoded
 * with protobuf-c's unpack and checked field by field. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fold/locs.h"
#include "fold/pprof.h"
#include "fold/profile.pb-c.h"
#include "tests/fold/helpers.h"

#define R "524288"
#define PFX (MT_FOLD_PREFIX_COMM | MT_FOLD_PREFIX_PID | MT_FOLD_PREFIX_TID)

/* Two inputs that number the same modules differently. */
static const char *const input_a =
	"# mt-unwind 1\n"
	"# module 1 aaaa /usr/bin/app\n"
	"# module 2 bbbb /lib/libc.so.6\n"
	"alloc\t7/8\t1\tapp\tsize=32 ptr=0x10 points=1 rate=" R "\t"
	"__libc_start_main (libc-start.c:360) {libc-start.c:234} @2+0x27304;"
	"main (app.c:20) {app.c:15};helper_[i] (util.h:7) {util.h:5} @1+0x1150;"
	"malloc @2+0x9a000 end=complete\n"
	"alloc\t7/8\t2\tapp\tsize=64 ptr=0x20 points=2 rate=" R "\t"
	"__libc_start_main (libc-start.c:360) {libc-start.c:234} @2+0x27304;"
	"main (app.c:22) {app.c:15} @1+0x1160;malloc @2+0x9a000 end=complete\n"
	"free\t7/8\t3\tapp\tptr=0x20 rate=" R "\t end=none\n";
static const char *const input_b =
	"# mt-unwind 1\n"
	"# module 1 bbbb /lib/libc.so.6\n"
	"# module 2 aaaa /usr/bin/app\n"
	"alloc\t9/9\t1\tapp\tsize=32 ptr=0x10 points=1 rate=" R "\t"
	"__libc_start_main (libc-start.c:360) {libc-start.c:234} @1+0x27304;"
	"main (app.c:20) {app.c:15};helper_[i] (util.h:7) {util.h:5} @2+0x1150;"
	"malloc @1+0x9a000 end=complete\n";

static void read_text(struct mt_fold_profile *p, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	cr_assert(f);
	cr_assert_eq(mt_fold_profile_read(p, f, "test", NULL, NULL), 0);
	fclose(f);
}

static const char *str(const Mtpprof__Profile *pr, int64_t i)
{
	cr_assert(i >= 0 && (size_t)i < pr->n_string_table, "string %lld", (long long)i);
	return pr->string_table[i];
}

static const Mtpprof__Location *loc(const Mtpprof__Profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == id)
			return pr->location[i];
	cr_assert_fail("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Mtpprof__Function *fn(const Mtpprof__Profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->function[i];
	cr_assert_fail("no function %llu", (unsigned long long)id);
	return NULL;
}

static const char *label(const Mtpprof__Profile *pr, const Mtpprof__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(str(pr, s->label[i]->key), key) == 0)
			return str(pr, s->label[i]->str);
	return NULL;
}

static Mtpprof__Profile *encode(const struct mt_fold_pprof_group *g, unsigned n,
				const struct mt_fold_locs *locs, struct mt_fold_pprof_stats *st)
{
	uint8_t *buf;
	size_t len;
	cr_assert_eq(mt_fold_pprof_encode(g, n, locs, &buf, &len, st), 0);
	Mtpprof__Profile *pr = mtpprof__profile__unpack(NULL, len, buf);
	free(buf);
	cr_assert(pr, "protobuf-c cannot unpack what was packed");
	return pr;
}

Test(pprof, heap_profile_with_inline_lines_mappings_and_labels)
{
	struct mt_fold_locs *locs = mt_fold_locs_new(1);
	struct mt_fold_profile *p = mt_fold_profile_new(PFX);
	mt_fold_profile_keep_locations(p, locs);
	read_text(p, input_a);
	read_text(p, input_b);
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	char k1[] = "host=a", k2[] = "service=api";
	struct mt_fold_label labels[2];
	unsigned nl = 0;
	cr_assert_eq(mt_fold_pprof_label(k1, labels, &nl, 2), 0);
	cr_assert_eq(mt_fold_pprof_label(k2, labels, &nl, 2), 0);
	struct mt_fold_pprof_group g = { p, labels, nl };
	struct mt_fold_pprof_stats st;
	Mtpprof__Profile *pr = encode(&g, 1, locs, &st);

	cr_assert_str_eq(str(pr, 0), "");
	cr_assert_eq(pr->n_sample_type, 4);
	const char *want[4][2] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
				   { "inuse_objects", "count" }, { "inuse_space", "bytes" } };
	for (int i = 0; i < 4; i++) {
		cr_assert_str_eq(str(pr, pr->sample_type[i]->type), want[i][0]);
		cr_assert_str_eq(str(pr, pr->sample_type[i]->unit), want[i][1]);
	}
	cr_assert_str_eq(str(pr, pr->period_type->type), "space");
	cr_assert_str_eq(str(pr, pr->period_type->unit), "bytes");
	cr_assert_eq(pr->period, 524288);
	cr_assert_str_eq(str(pr, pr->default_sample_type), "alloc_space");

	/* Both inputs' modules are one mapping each: aaaa and bbbb. */
	cr_assert_eq(pr->n_mapping, 2);
	cr_assert_eq(st.mappings, 2);
	uint64_t app = 0, libc = 0;
	for (size_t i = 0; i < pr->n_mapping; i++) {
		const Mtpprof__Mapping *m = pr->mapping[i];
		const char *id = str(pr, m->build_id), *file = str(pr, m->filename);
		if (strcmp(id, "aaaa") == 0) {
			cr_assert_str_eq(file, "/usr/bin/app");
			app = m->id;
			cr_assert_eq(m->memory_start, 0x1150);
			cr_assert_eq(m->memory_limit, 0x1161);
		} else {
			cr_assert_str_eq(id, "bbbb");
			cr_assert_str_eq(file, "/lib/libc.so.6");
			libc = m->id;
		}
		cr_assert(m->has_functions && m->has_inline_frames && m->has_line_numbers);
	}
	cr_assert(app && libc && app != libc);
	cr_assert_eq(libc, 1, "the module at the root of the samples is pprof's program");

	/* Three stacks: the two of pid 7, the first one again in pid 9. */
	cr_assert_eq(pr->n_sample, 3);
	cr_assert_eq(st.samples, 3);
	/* Locations: libc_start_main, main+helper, main (other pc), malloc. */
	cr_assert_eq(pr->n_location, 4);
	int seen_inline = 0, seen_two = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Mtpprof__Sample *s = pr->sample[i];
		cr_assert_eq(s->n_value, 4);
		cr_assert_str_eq(label(pr, s, "comm"), "app");
		cr_assert_str_eq(label(pr, s, "host"), "a");
		cr_assert_str_eq(label(pr, s, "service"), "api");
		cr_assert_eq(s->n_location_id, 3, "leaf malloc, main's location, libc");
		const Mtpprof__Location *leaf = loc(pr, s->location_id[0]);
		cr_assert_eq(leaf->mapping_id, libc);
		cr_assert_eq(leaf->address, 0x9a000);
		cr_assert_eq(leaf->n_line, 1);
		cr_assert_str_eq(str(pr, fn(pr, leaf->line[0]->function_id)->name), "malloc");
		const Mtpprof__Location *root = loc(pr, s->location_id[2]);
		cr_assert_eq(root->address, 0x27304);
		const Mtpprof__Function *lsm = fn(pr, root->line[0]->function_id);
		cr_assert_str_eq(str(pr, lsm->name), "__libc_start_main");
		cr_assert_str_eq(str(pr, lsm->filename), "libc-start.c");
		cr_assert_eq(lsm->start_line, 234);
		cr_assert_eq(root->line[0]->line, 360);
		const Mtpprof__Location *mid = loc(pr, s->location_id[1]);
		cr_assert_eq(mid->mapping_id, app);
		if (mid->n_line == 2) {
			/* the inlined callee first, the caller it is inlined into last */
			const Mtpprof__Function *h = fn(pr, mid->line[0]->function_id);
			const Mtpprof__Function *m = fn(pr, mid->line[1]->function_id);
			cr_assert_str_eq(str(pr, h->name), "helper");
			cr_assert_str_eq(str(pr, h->filename), "util.h");
			cr_assert_eq(h->start_line, 5);
			cr_assert_eq(mid->line[0]->line, 7);
			cr_assert_str_eq(str(pr, m->name), "main");
			cr_assert_eq(m->start_line, 15);
			cr_assert_eq(mid->line[1]->line, 20);
			cr_assert_eq(mid->address, 0x1150);
			/* 1 point: alloc_space 1 x rate, live (never freed) */
			cr_assert_eq(s->value[1], 524288);
			cr_assert_eq(s->value[3], 524288);
			seen_inline++;
			const char *pid = label(pr, s, "pid");
			cr_assert(strcmp(pid, "7") == 0 || strcmp(pid, "9") == 0, "pid %s", pid);
		} else {
			cr_assert_eq(mid->n_line, 1);
			cr_assert_eq(mid->address, 0x1160);
			cr_assert_eq(mid->line[0]->line, 22);
			cr_assert_str_eq(label(pr, s, "pid"), "7");
			cr_assert_str_eq(label(pr, s, "tid"), "8");
			/* 2 points, freed: nothing in use */
			cr_assert_eq(s->value[1], 2 * 524288);
			cr_assert_eq(s->value[2], 0);
			cr_assert_eq(s->value[3], 0);
			/* objects: one sampled 64 B block stands for 1/(1-e^(-64/R)),
			 * 8192.5: rounded to the nearest */
			cr_assert_eq(s->value[0], llround(1 / -expm1(-64.0 / 524288)));
			cr_assert_eq(s->value[0], 8193);
			seen_two++;
		}
	}
	cr_assert_eq(seen_inline, 2);
	cr_assert_eq(seen_two, 1);
	cr_assert_eq(pr->n_comment, 0);
	mtpprof__profile__free_unpacked(pr, NULL);
	mt_fold_profile_free(p);
	mt_fold_locs_free(locs);
}

Test(pprof, suffixes_are_taken_off_without_pprof)
{
	/* mt-fold's other outputs of --pprof-info text are those of plain text. */
	struct mt_fold_profile *p = profile_of(input_a, 0);
	char *with = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	mt_fold_profile_free(p);
	p = profile_of(
		"alloc\t7/8\t1\tapp\tsize=32 ptr=0x10 points=1 rate=" R "\t"
		"__libc_start_main (libc-start.c:360);main (app.c:20);helper_[i] (util.h:7);"
		"malloc end=complete\n"
		"alloc\t7/8\t2\tapp\tsize=64 ptr=0x20 points=2 rate=" R "\t"
		"__libc_start_main (libc-start.c:360);main (app.c:22);malloc end=complete\n", 0);
	char *plain = collapsed_of(p, MT_FOLD_ALLOC_BYTES);
	mt_fold_profile_free(p);
	cr_assert_str_eq(with, plain);
	cr_assert(strstr(plain, "main (app.c:20);helper_[i] (util.h:7);malloc 524288\n"), "%s", plain);
	free(with);
	free(plain);
}

Test(pprof, unknown_module_number_loses_its_address_and_says_so)
{
	struct mt_fold_locs *locs = mt_fold_locs_new(1);
	struct mt_fold_profile *p = mt_fold_profile_new(PFX);
	mt_fold_profile_keep_locations(p, locs);
	read_text(p, "# module 1 aaaa /usr/bin/app\n"
		  "alloc\t1/1\t1\tx\tsize=32 ptr=0x10 points=1 rate=" R "\t"
		  "main @1+0x10;f @5+0x20 end=complete\n");
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	cr_assert_eq(mt_fold_locs_unknown(locs), 1);
	struct mt_fold_pprof_group g = { p, NULL, 0 };
	struct mt_fold_pprof_stats st;
	Mtpprof__Profile *pr = encode(&g, 1, locs, &st);
	cr_assert_eq(pr->n_sample, 1);
	const Mtpprof__Location *leaf = loc(pr, pr->sample[0]->location_id[0]);
	cr_assert_eq(leaf->mapping_id, 0);
	cr_assert_eq(leaf->address, 0);
	cr_assert_str_eq(str(pr, fn(pr, leaf->line[0]->function_id)->name), "f");
	cr_assert_eq(pr->n_comment, 1);
	cr_assert_str_eq(str(pr, pr->comment[0]),
			 "mt-fold: 1 frames named no module line: written without an address");
	mtpprof__profile__free_unpacked(pr, NULL);
	mt_fold_profile_free(p);
	mt_fold_locs_free(locs);
}

Test(pprof, cpu_samples_count_and_nanoseconds)
{
	struct mt_fold_profile *p = profile_of(
		"sample\t3/3\t1\tc\tevent=cpu-clock period=1000000\tmain;spin end=complete\n"
		"sample\t3/3\t2\tc\tevent=cpu-clock period=3000000\tmain;spin end=complete\n"
		"sample\t3/4\t3\tc\tevent=cpu-clock period=2000000\tmain;wait end=complete\n"
		"lost\t0/0\t4\t?\tcount=5 reason=kernel\t end=none\n", PFX);
	struct mt_fold_pprof_group g = { p, NULL, 0 };
	struct mt_fold_pprof_stats st;
	Mtpprof__Profile *pr = encode(&g, 1, NULL, &st);
	cr_assert_eq(pr->n_sample_type, 2);
	cr_assert_str_eq(str(pr, pr->sample_type[0]->type), "samples");
	cr_assert_str_eq(str(pr, pr->sample_type[0]->unit), "count");
	cr_assert_str_eq(str(pr, pr->sample_type[1]->type), "cpu");
	cr_assert_str_eq(str(pr, pr->sample_type[1]->unit), "nanoseconds");
	cr_assert_str_eq(str(pr, pr->period_type->type), "cpu");
	cr_assert_eq(pr->period, 2000000);	/* 6 ms over 3 samples */
	cr_assert_eq(pr->n_sample, 2);
	int64_t total[2] = { 0, 0 };
	for (size_t i = 0; i < pr->n_sample; i++) {
		total[0] += pr->sample[i]->value[0];
		total[1] += pr->sample[i]->value[1];
		cr_assert_eq(pr->sample[i]->n_location_id, 2);	/* no mapping: by name */
		cr_assert_eq(loc(pr, pr->sample[i]->location_id[0])->mapping_id, 0);
	}
	cr_assert_eq(total[0], 3);
	cr_assert_eq(total[1], 6000000);
	cr_assert_eq(pr->n_mapping, 0);
	cr_assert_eq(pr->n_comment, 1);
	cr_assert_str_eq(str(pr, pr->comment[0]), "mt-fold: the capture lost 5 events");
	mtpprof__profile__free_unpacked(pr, NULL);
	mt_fold_profile_free(p);
}

Test(pprof, written_gzipped)
{
	struct mt_fold_profile *p = profile_of(input_a, PFX);
	struct mt_fold_pprof_group g = { p, NULL, 0 };
	struct mt_fold_pprof_stats st;
	char path[] = "/tmp/mt-pprof-test-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	cr_assert_eq(mt_fold_pprof_write(path, &g, 1, NULL, &st), 0);
	gzFile z = gzopen(path, "rb");
	cr_assert(z);
	static uint8_t buf[1 << 16];
	int n = gzread(z, buf, sizeof(buf));
	cr_assert(n > 0);
	cr_assert_eq(gzdirect(z), 0, "a gzip stream, not plain bytes");
	gzclose(z);
	unlink(path);
	Mtpprof__Profile *pr = mtpprof__profile__unpack(NULL, (size_t)n, buf);
	cr_assert(pr);
	cr_assert_eq(pr->n_sample, 2);
	/* No profile kept locations: the suffixes were taken off, no mapping. */
	cr_assert_eq(pr->n_mapping, 0);
	mtpprof__profile__free_unpacked(pr, NULL);
	cr_assert_eq(mt_fold_pprof_write("/nonexistent-dir/x.pb.gz", &g, 1, NULL, &st),
		     MT_FOLD_EIO);
	mt_fold_profile_free(p);
}

Test(pprof, keys_without_prefix_frames_are_refused)
{
	struct mt_fold_profile *p = profile_of(input_a, 0);
	struct mt_fold_pprof_group g = { p, NULL, 0 };
	struct mt_fold_pprof_stats st;
	uint8_t *buf;
	size_t len;
	cr_assert_eq(mt_fold_pprof_encode(&g, 1, NULL, &buf, &len, &st), MT_FOLD_ESTATE);
	mt_fold_profile_free(p);
}

Test(pprof, label_arguments)
{
	struct mt_fold_label l[2];
	unsigned n = 0;
	char ok[] = "host=db-1", eq[] = "version=1=2", none[] = "host", empty[] = "=x",
	     bad[] = "ho st=x", pid[] = "pid=3", twice[] = "host=b", third[] = "a=1", more[] = "b=2";
	cr_assert_eq(mt_fold_pprof_label(ok, l, &n, 2), 0);
	cr_assert_str_eq(l[0].key, "host");
	cr_assert_str_eq(l[0].value, "db-1");
	cr_assert_eq(mt_fold_pprof_label(eq, l, &n, 2), 0);
	cr_assert_str_eq(l[1].value, "1=2");
	n = 1;
	cr_assert_eq(mt_fold_pprof_label(none, l, &n, 2), -1);
	cr_assert_eq(mt_fold_pprof_label(empty, l, &n, 2), -1);
	cr_assert_eq(mt_fold_pprof_label(bad, l, &n, 2), -1);
	cr_assert_eq(mt_fold_pprof_label(pid, l, &n, 2), -1);
	cr_assert_eq(mt_fold_pprof_label(twice, l, &n, 2), -1);
	cr_assert_eq(mt_fold_pprof_label(third, l, &n, 2), 0);
	cr_assert_eq(mt_fold_pprof_label(more, l, &n, 2), -1);
	cr_assert_eq(n, 2);
}

Test(pprof, input_labels_keep_hosts_apart)
{
	/* The same pid and pointer on two hosts: host b's free is not host
	 * a's block's.  Without labels the free would end it. */
	const char *host_a =
		"alloc\t5/5\t1\tsrv\tsize=32 ptr=0x10 points=1 rate=" R "\tmain;a end=complete\n";
	const char *host_b =
		"alloc\t5/5\t1\tsrv\tsize=32 ptr=0x10 points=1 rate=" R "\tmain;b end=complete\n"
		"free\t5/5\t2\tsrv\tptr=0x10 rate=" R "\t end=none\n"
		"free\t5/5\t3\tsrv\tptr=0x10 rate=" R "\t end=none\n";
	struct mt_fold_profile *p = mt_fold_profile_new(PFX | MT_FOLD_PREFIX_LABELS);
	cr_assert_eq(mt_fold_profile_prefix_frames(p), 4);
	cr_assert_eq(mt_fold_profile_input_labels(p, "host=a,zone=1"), 0);
	read_text(p, host_a);
	cr_assert_eq(mt_fold_profile_input_labels(p, "host=b"), 0);
	read_text(p, host_b);
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	/* b's first free ends b's block, the second finds none: unmatched. */
	cr_assert_eq(mt_fold_profile_counts(p)->unmatched_frees, 1);
	char k1[] = "service=shop";
	struct mt_fold_label global[1];
	unsigned ng = 0;
	cr_assert_eq(mt_fold_pprof_label(k1, global, &ng, 1), 0);
	struct mt_fold_pprof_group g = { p, global, ng };
	struct mt_fold_pprof_stats st;
	Mtpprof__Profile *pr = encode(&g, 1, NULL, &st);
	cr_assert_eq(pr->n_sample, 2);
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Mtpprof__Sample *s = pr->sample[i];
		const Mtpprof__Location *leaf = loc(pr, s->location_id[0]);
		const char *site = str(pr, fn(pr, leaf->line[0]->function_id)->name);
		cr_assert_str_eq(label(pr, s, "service"), "shop");
		cr_assert_str_eq(label(pr, s, "pid"), "5");
		if (strcmp(site, "a") == 0) {
			cr_assert_eq(s->n_label, 6);
			cr_assert_str_eq(label(pr, s, "host"), "a");
			cr_assert_str_eq(label(pr, s, "zone"), "1");
			cr_assert_eq(s->value[3], 524288, "a's block is live");
		} else {
			cr_assert_str_eq(site, "b");
			cr_assert_eq(s->n_label, 5);
			cr_assert_str_eq(label(pr, s, "host"), "b");
			cr_assert_null(label(pr, s, "zone"));
			cr_assert_eq(s->value[3], 0, "b's block was freed");
		}
	}
	mtpprof__profile__free_unpacked(pr, NULL);
	mt_fold_profile_free(p);
}

Test(pprof, input_label_arguments)
{
	struct mt_fold_label global[1] = { { "service", "shop" } };
	const char *l;
	char plain[] = "capture.txt", none[] = "me@example.org";
	cr_assert_eq(mt_fold_pprof_input_labels(plain, global, 1, &l), 0);
	cr_assert_null(l);
	cr_assert_eq(mt_fold_pprof_input_labels(none, global, 1, &l), 0, "no '=' after '@'");
	char two[] = "db/a@x.txt@host=db-1,zone=eu";
	cr_assert_eq(mt_fold_pprof_input_labels(two, global, 1, &l), 1);
	cr_assert_str_eq(two, "db/a@x.txt");
	cr_assert_str_eq(l, "host=db-1,zone=eu");
	char clash[] = "a.txt@service=x", semi[] = "a.txt@host=a;b", bad[] = "a.txt@host=a,pid=3";
	cr_assert_eq(mt_fold_pprof_input_labels(clash, global, 1, &l), -1);
	cr_assert_eq(mt_fold_pprof_input_labels(semi, global, 1, &l), -1);
	cr_assert_eq(mt_fold_pprof_input_labels(bad, global, 1, &l), -1);
	cr_assert_str_eq(bad, "a.txt@host=a,pid=3", "left whole when refused");
	/* An existing file's name wins over the labels it seems to hold. */
	char path[] = "/tmp/mt-pprof-host=XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	char dir[64];
	snprintf(dir, sizeof(dir), "%s", path);
	char *at = strstr(dir, "-host=");
	*at = '@';
	cr_assert_eq(rename(path, dir), 0);
	char arg[64];
	snprintf(arg, sizeof(arg), "%s", dir);
	cr_assert_eq(mt_fold_pprof_input_labels(arg, global, 1, &l), 0);
	cr_assert_str_eq(arg, dir);
	unlink(dir);
}

Test(pprof, peak_and_temp_sample_types_with_ticks_and_seq)
{
	/* rate 1: one 100-byte temporary, one 40-byte block live at the peak */
	static const char text[] = "# mt-unwind 1\n"
		"tick\t5/5\t1\tp\tlive=0 alloc_bytes=0 alloc_block_bytes=0 peak=0 peak_time=0\t end=none\n"
		"alloc\t5/5\t2\tp\tsize=100 ptr=0x10 points=100 rate=1 seq=1\tmain;t end=complete\n"
		"free\t5/5\t3\tp\tptr=0x10 rate=1 seq=1\t end=none\n"
		"alloc\t5/5\t4\tp\tsize=40 ptr=0x20 points=40 rate=1 seq=2\tmain;k end=complete\n"
		"tick\t5/5\t5\tp\tlive=48 alloc_bytes=140 alloc_block_bytes=160 peak=112 peak_time=2\t end=none\n"
		"tick\t5/5\t9\tp\tlive=48 alloc_bytes=140 alloc_block_bytes=160 peak=112 peak_time=4\t end=none\n";
	struct mt_fold_profile *p = mt_fold_profile_new(PFX);
	read_text(p, text);
	cr_assert_eq(mt_fold_profile_finish(p), 0);
	struct mt_fold_pprof_group g = { p, NULL, 0 };
	struct mt_fold_pprof_stats st;
	Mtpprof__Profile *pr = encode(&g, 1, NULL, &st);
	cr_assert_eq(pr->n_sample_type, 8);
	const char *want[8][2] = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
				   { "inuse_objects", "count" }, { "inuse_space", "bytes" },
				   { "peak_objects", "count" }, { "peak_space", "bytes" },
				   { "temp_objects", "count" }, { "temp_space", "bytes" } };
	for (int i = 0; i < 8; i++) {
		cr_assert_str_eq(str(pr, pr->sample_type[i]->type), want[i][0]);
		cr_assert_str_eq(str(pr, pr->sample_type[i]->unit), want[i][1]);
	}
	/* the peak (112 at time 2, the largest peak=; equal peaks keep the
	 * earlier moment): the 100-byte block, freed at 3, live then */
	int seen = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Mtpprof__Sample *s = pr->sample[i];
		cr_assert_eq(s->n_value, 8);
		const char *leaf = str(pr, pr->function[pr->location[s->location_id[0] - 1]->line[0]->function_id - 1]->name);
		if (!strcmp(leaf, "t")) {
			cr_assert_eq(s->value[5], 100);	/* peak_space */
			cr_assert_eq(s->value[7], 100);	/* temp_space */
			seen |= 1;
		} else if (!strcmp(leaf, "k")) {
			cr_assert_eq(s->value[5], 0);
			cr_assert_eq(s->value[7], 0);
			cr_assert_eq(s->value[3], 40);	/* inuse_space */
			seen |= 2;
		}
	}
	cr_assert_eq(seen, 3);
	mtpprof__profile__free_unpacked(pr, NULL);
	mt_fold_profile_free(p);
}
