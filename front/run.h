/* mt: finding the stage programs and running them (fork, exec, wait). */
#ifndef MT_FRONT_RUN_H
#define MT_FRONT_RUN_H

#include <sys/types.h>

/* The path of stage program name (mt-capture, mt-encode, mt-unwind,
 * mt-fold, mt-flamegraph): beside this mt (the directory of
 * /proc/self/exe), then DIR/../bin (an installed layout whose mt lives
 * elsewhere); mt-flamegraph also in the build tree's scripts/ (DIR/../../scripts,
 * or ../../../scripts for build/san/bin).  Never $PATH: the stages must be
 * those built with this mt.
 * @return : a malloc'd path, or NULL (said: "cannot find mt-unwind beside ..."). */
char *mt_front_stage(const char *name);

/* mt_front_spawn flags. */
#define MT_SPAWN_NO_INT 1	/* SIGINT and SIGQUIT ignored (mt-encode under
				 * mt record: Ctrl-C is mt-capture's to handle) */

/* Runs argv[0] (a path) with stdin in and stdout out (-1: mt's own), and
 * the fds keep[0..nkeep) left open across the exec (for /dev/fd/N paths);
 * every other fd mt opened is close-on-exec.  In directory dir unless NULL.
 * SIGINT, SIGQUIT and SIGPIPE have their default action (see flags).
 * @return : the pid, or -1 (said). */
pid_t mt_front_spawn(char *const argv[], int in, int out, const int *keep, int nkeep,
		     const char *dir, int flags);

/* Waits for pid.  @return : its exit status, 128+N when signal N ended it
 * (said, naming name, unless quiet is 1 and it is SIGPIPE, or quiet is 2 and
 * it is one mt sends: SIGPIPE, SIGTERM, SIGKILL). */
int mt_front_wait(pid_t pid, const char *name, int quiet);

/* pipe2(O_CLOEXEC).  @return : 0 or -1 (said). */
int mt_front_pipe(int fds[2]);

/* Closes *fd if open and sets it to -1. */
void mt_front_close(int *fd);

#endif
