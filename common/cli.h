/* How every mt program reports and exits: one exit-code table, and
 * printf-checked helpers for the messages (git's usage.c is the model).
 *
 * Messages go to stderr as "PROG: text" (lowercase, quoting the subject:
 * "mt-unwind: cannot open 'x.mtz': No such file or directory").  Data goes
 * to stdout.  Only a program's main exits: libraries return error codes and
 * leave the wording to it.
 */
#ifndef MT_CLI_H
#define MT_CLI_H

#include <stdnoreturn.h>

/* Exit codes, the same for every tool (README, "Exit codes"). */
enum mt_exit {
	MT_EXIT_OK = 0,
	MT_EXIT_DATA = 1,	/* some input was lost, damaged or rejected */
	MT_EXIT_USAGE = 2,	/* the command line is wrong */
	MT_EXIT_ENV = 3,	/* a file that cannot be opened, read or written, no
				 * permission, a missing dependency, out of memory */
	/* mt-capture, which runs a command, follows env(1) and timeout(1): the
	 * command's own status when it ran, else these. */
	MT_EXIT_CAPTURE_FAILED = 125,	/* mt-capture itself failed */
	MT_EXIT_CANNOT_RUN = 126,	/* the command was found and cannot be run */
	MT_EXIT_NOT_FOUND = 127,	/* the command was not found */
};

/* Names the program in every message; call first in main.  prog must
 * outlive every later call (a string literal).  argv (may be NULL) gets
 * prog as its argv[0], so that getopt's messages about options name the
 * program as ours do, not the path it was run by. */
void mt_cli_init(const char *prog, char **argv);

/* The name given to mt_cli_init ("mt" before it is called). */
const char *mt_prog(void);

/* "PROG: text\n" on stderr.  @return : -1, so that `return mt_error(...)`
 * reads well in functions that return 0 or -1. */
__attribute__((format(printf, 1, 2)))
int mt_error(const char *fmt, ...);

/* "PROG: text\n" on stderr, for summaries and statistics. */
__attribute__((format(printf, 1, 2)))
void mt_info(const char *fmt, ...);

/* "PROG: warning: text\n" on stderr. */
__attribute__((format(printf, 1, 2)))
void mt_warn(const char *fmt, ...);

/* After a usage error: "usage: SYNOPSIS   (see --help)\n" on stderr.
 * @return : MT_EXIT_USAGE. */
int mt_usage_hint(const char *synopsis);

/* "PROG: text\n" on stderr, then exit(code).  For mains only. */
__attribute__((format(printf, 2, 3)))
noreturn void mt_die(enum mt_exit code, const char *fmt, ...);

#endif
