/* Shared test helpers: profiles from strings, renderings into strings. */
#ifndef MT_FOLD_TEST_HELPERS_H
#define MT_FOLD_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold/profile.h"
#include "fold/render.h"
#include "fold/snapshot.h"

/* Fold text (mt-unwind lines) into a finished profile; asserts success. */
static inline struct mt_fold_profile *profile_of(const char *text, unsigned prefix)
{
	struct mt_fold_profile *p = mt_fold_profile_new(prefix);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	if (!p || !f || mt_fold_profile_read(p, f, "test", NULL, NULL) ||
	    mt_fold_profile_finish(p))
		abort();
	fclose(f);
	return p;
}

/* The same, folding only the samples of event name. */
static inline struct mt_fold_profile *profile_of_event(const char *text, const char *name)
{
	struct mt_fold_profile *p = mt_fold_profile_new(0);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	if (!p || !f)
		abort();
	mt_fold_profile_only_event(p, name);
	if (mt_fold_profile_read(p, f, "test", NULL, NULL) || mt_fold_profile_finish(p))
		abort();
	fclose(f);
	return p;
}

static inline char *collapsed_of(const struct mt_fold_profile *p, enum mt_fold_metric m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || mt_fold_render_collapsed(f, p, m))
		abort();
	fclose(f);
	return buf;
}

static inline struct mt_fold_snapshot *snapshot_of(const struct mt_fold_profile *p,
						   enum mt_fold_metric m, uint32_t top)
{
	struct mt_fold_snapshot_options opt = { .metric = m, .conf = 0.95, .top = top, .few = 10 };
	struct mt_fold_snapshot *s;
	if (mt_fold_snapshot_new(&s, p, &opt))
		abort();
	return s;
}

/* s rendered by fn (mt_fold_render_table, _json) into a string to free.
 * Not inlined: gcc 12 then takes the stream's buffer for a local that
 * dangles (-Wdangling-pointer). */
static __attribute__((unused, noinline)) char *
render(int (*fn)(FILE *, const struct mt_fold_snapshot *), const struct mt_fold_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || fn(f, s))
		abort();
	fclose(f);
	return buf;
}

/* The --report table of the mt-unwind text, metric m, into a string to
 * free. */
static __attribute__((unused)) char *table_of(const char *text, enum mt_fold_metric m)
{
	struct mt_fold_profile *p = profile_of(text, 0);
	struct mt_fold_snapshot *s = snapshot_of(p, m, 0);
	char *table = render(mt_fold_render_table, s);
	mt_fold_snapshot_free(s);
	mt_fold_profile_free(p);
	return table;
}

/* The site named name in s, or NULL. */
static inline const struct mt_fold_site *site_named(const struct mt_fold_snapshot *s,
						    const char *name)
{
	for (uint32_t i = 0; i < s->nsites; i++)
		if (strcmp(s->sites[i].name, name) == 0)
			return &s->sites[i];
	return NULL;
}

#endif
