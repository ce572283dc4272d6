/* The JSON of memory over time (docs/formats/fold-json.md): the top-level
 * "timeline", "peak", "temporary", "sizes", "lifetimes" and
 * "reconciliation", and an allocation site's "sizes" and "lifetimes".
 * Written only for an input with tick lines or seq= weights, or with
 * --sizes/--lifetimes: older captures' JSON stays byte for byte. */
#ifndef MT_FOLD_MEMJSON_H
#define MT_FOLD_MEMJSON_H

#include <stdio.h>

#include "fold/sites.h"
#include "fold/snapshot.h"

/* Does s's JSON carry the additions? */
int mt_fold_json_has_memory(const struct mt_fold_snapshot *s);

/* ",\n \"timeline\": ..." etc., each key after a comma. */
void mt_fold_json_memory(FILE *f, const struct mt_fold_snapshot *s);

/* ",\n \"live_over_time\": {...}" when s has it (--live-buckets).
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_json_live(FILE *f, const struct mt_fold_snapshot *s);

/* ", \"sizes\": [...], \"lifetimes\": [...]" of one allocation site.
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_json_site_hists(FILE *f, const struct mt_fold_snapshot *s,
			    const struct mt_fold_alloc_site *site);

#endif
