/* Where the running program is: stages and the sampler are found beside
 * it (the build tree, or the installed layout). */
#ifndef MT_SELF_H
#define MT_SELF_H

#include <stddef.h>

/* The directory of /proc/self/exe into out (len bytes).
 * @return : 0, or -1 when it cannot be read or does not fit. */
int mt_self_dir(char *out, size_t len);

#endif
