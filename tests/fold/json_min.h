/* A minimal JSON reader for tests: parses a whole document into a tree.
 * Strict enough to reject what mt-fold must never write (trailing commas,
 * bare control characters, bad escapes, NaN). */
#ifndef MT_FOLD_TEST_JSON_MIN_H
#define MT_FOLD_TEST_JSON_MIN_H

#include <stddef.h>

enum jm_type { JM_NULL, JM_BOOL, JM_NUM, JM_STR, JM_ARR, JM_OBJ };

struct jm {
	enum jm_type type;
	double num;		/* JM_NUM; JM_BOOL: 0 or 1 */
	char *str;		/* JM_STR (UTF-8, NUL-terminated); key of an object member */
	char *key;
	struct jm *kids;	/* JM_ARR, JM_OBJ */
	size_t nkids;
};

/* @return : the tree, or NULL on a syntax error (message in err[0..256)). */
struct jm *jm_parse(const char *text, char *err);
void jm_free(struct jm *j);
/* Member of an object by key, or NULL. */
const struct jm *jm_get(const struct jm *obj, const char *key);

#endif
