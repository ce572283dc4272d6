/* mt's per-user cache directory (see cache_dir.h). */
#include "common/cache_dir.h"

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

void mt_build_id_hex(char *out, const uint8_t *id, size_t id_len)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < id_len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * id_len] = '\0';
}
