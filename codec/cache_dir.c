/* mt's per-user cache directory (see cache_dir.h). */
#include "codec/cache_dir.h"

#include <stdio.h>
#include <stdlib.h>

char *mt_cache_dir(const char *sub)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir = NULL;
	if (x && *x == '/') {
		if (asprintf(&dir, "%s/mt/%s", x, sub) < 0)
			dir = NULL;
	} else if (home && *home == '/') {
		if (asprintf(&dir, "%s/.cache/mt/%s", home, sub) < 0)
			dir = NULL;
	}
	return dir;
}
