/* Fuzz target: mt-fold on any text, as if mt-unwind had written it.
 *
 * Input: byte 0 holds options, then the text; a NUL byte in the text, if
 * any, ends it and starts a second text, the --diff base.
 *   bits 0-2: the --comm, --pid, --tid prefixes; bits 3-5: the metric
 *   (modulo their count; the peak metrics are 6 and 7); bit 6: --top 0
 *   (all rows), else 3; bit 7: --few 1.  The histograms are always shown.
 * Every rendering is made: collapsed stacks, the report, JSON, the
 * allocation sites (table at 80 columns, a call tree, JSON), and with a base
 * the per-site diff as a table and as JSON.  Bad lines are skipped and
 * counted; none may crash, hang or trip a sanitizer. */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <string.h>

#include "fold/diff.h"
#include "fold/profile.h"
#include "fold/render.h"
#include "fold/sites.h"
#include "fold/sitestext.h"
#include "fold/snapshot.h"

static struct mt_fold_profile *profile_of(const uint8_t *text, size_t n, unsigned prefix)
{
	struct mt_fold_profile *p = mt_fold_profile_new(prefix);
	FILE *f = n ? fmemopen((void *)text, n, "r") : fopen("/dev/null", "r");
	if (!p || !f || mt_fold_profile_read(p, f, "fuzz", NULL, NULL) ||
	    mt_fold_profile_finish(p)) {
		mt_fold_profile_free(p);
		p = NULL;
	}
	if (f)
		fclose(f);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	if (!sink && !(sink = fopen("/dev/null", "w")))
		return 0;
	if (size < 1)
		return 0;
	unsigned opt = data[0];
	const uint8_t *text = data + 1, *nul = memchr(text, 0, size - 1);
	size_t n = nul ? (size_t)(nul - text) : size - 1;
	unsigned prefix = opt & 7;
	struct mt_fold_profile *p = profile_of(text, n, prefix), *base = NULL;
	if (!p)
		return 0;
	if (nul)
		base = profile_of(nul + 1, size - 1 - n - 1, prefix);
	struct mt_fold_snapshot_options so = {
		.metric = (enum mt_fold_metric)((opt >> 3 & 7) % MT_FOLD_NMETRICS),
		.conf = 0.95, .top = opt & 64 ? 0 : 3, .few = opt & 128 ? 1 : 10,
		.sizes = 1, .lifetimes = 1, .width = 80,
	};
	mt_fold_render_collapsed(sink, p, so.metric);
	struct mt_fold_snapshot *s = NULL, *bs = NULL;
	struct mt_fold_sites *st = NULL, *bst = NULL, *tree = NULL;
	struct mt_fold_diff *d = NULL;
	if (mt_fold_snapshot_new(&s, p, &so) == 0) {
		mt_fold_render_table(sink, s);
		mt_fold_render_json(sink, s);
		struct mt_fold_sites_options to = { .width = 80, .top = so.top, .paths = 3,
						    .groups = 5, .min_share = 1 };
		if (mt_fold_sites_new(&st, p, s, NULL, MT_FOLD_TREE_NONE) == 0) {
			mt_fold_render_sites(sink, s, st, &to);
			mt_fold_render_json_sites(sink, s, st, 3);
		}
		to.tree = opt & 1 ? MT_FOLD_TREE_CALLERS : MT_FOLD_TREE_DOWN;
		if (mt_fold_sites_new(&tree, p, s, NULL, to.tree) == 0)
			mt_fold_render_sites(sink, s, tree, &to);
		if (st && base && mt_fold_snapshot_new(&bs, base, &so) == 0 &&
		    mt_fold_sites_new(&bst, base, bs, NULL, MT_FOLD_TREE_NONE) == 0 &&
		    mt_fold_diff_new(&d, bs, bst, s, st, so.top) == 0) {
			mt_fold_render_diff_table(sink, d, "base");
			mt_fold_render_diff_json(sink, d, "base");
		}
	}
	mt_fold_diff_free(d);
	mt_fold_sites_free(tree);
	mt_fold_sites_free(bst);
	mt_fold_sites_free(st);
	mt_fold_snapshot_free(bs);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(base);
	mt_fold_profile_free(p);
	return 0;
}
