/* Where the running program is (see self.h). */
#include "common/self.h"

#include <string.h>
#include <unistd.h>

int mt_self_dir(char *out, size_t len)
{
	if (len < 2)
		return -1;
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	out[n] = '\0';
	char *slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}
