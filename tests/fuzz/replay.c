/* Runs saved inputs through a fuzz target without libFuzzer: each argument
 * is a file, or a directory whose files are all run.  Exit status 0 when
 * every input ran (a failed invariant aborts), 2 on usage, 3 when an input
 * cannot be read. */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap) {
			uint8_t *b = realloc(buf, cap *= 2);
			if (!b)
				free(buf);
			buf = b;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	unsigned long runs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 3;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 3;
			runs++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, by_name);
		if (n < 0) {
			perror(argv[i]);
			return 3;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				if (run_file(path))
					return 3;
				runs++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("%lu inputs ran\n", runs);
	return 0;
}
