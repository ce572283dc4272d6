/* mt-capture's command line: its options, their defaults and the checks of
 * how they combine.  Part of the program, not of the capture library: it
 * reports what is wrong itself (common/cli.h), and main exits. */
#ifndef MT_CAPTURE_OPTS_H
#define MT_CAPTURE_OPTS_H

#include <stdint.h>
#include <sys/types.h>

enum mt_capture_mode { MT_CAPTURE_SAMPLE, MT_CAPTURE_TRACE, MT_CAPTURE_EVENT };

struct mt_capture_opts {
	enum mt_capture_mode mode;	/* --mode, else: event with -e, trace with -p, sample */
	const char *output;	/* -o FILE, or NULL (and "-"): stdout */
	pid_t pid;		/* -p PID, or 0 */
	char **cmd;		/* the command and its arguments (in argv, NULL-ended),
				 * or NULL with -p */
	uint64_t rate;		/* --rate: mean bytes between sample points */
	uint64_t seed;		/* --seed, when seeded */
	int seeded;
	const char *lib;	/* --lib, or NULL: the libc */
	const char *event;	/* -e, or NULL: cpu-clock */
	uint64_t freq, count;	/* -F, -c, or 0 */
	unsigned stack_size;	/* --stack-size: a multiple of 8, at most 65528; by
				 * default 65528, 8192 where uprobes take the samples
				 * (trace mode; sample mode with -p or --no-ring) */
	unsigned mmap_pages;	/* --mmap-pages: a power of two */
	int no_ring, no_wait;	/* --no-ring, --no-wait */
	int no_timeline;	/* --no-timeline: no ticker thread in the sampler */
	int strict;		/* --strict: exit 125 when the capture lost data */
	const char *user;	/* --user NAME: run the command as NAME, or NULL */
	int as_root;		/* --as-root: under sudo, run the command as root */
};

/* Fill *o from argv (every string it points to is argv's) and check that
 * the options go together.
 * @return : 0 to capture; 1 when --help printed the usage on stdout; -1
 * when the command line is wrong, which is said on stderr. */
int mt_capture_opts_parse(int argc, char **argv, struct mt_capture_opts *o);

#endif
