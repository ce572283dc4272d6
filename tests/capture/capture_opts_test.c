/* mt-capture's options (capture/capture_opts.c): the --stack-size default
 * per mode, and a size given overriding it. */
#include "capture/capture_opts.h"

#include <criterion/criterion.h>
#include <stddef.h>

/* Parse the NULL-ended words (after "mt-capture").  @return : the parse's. */
static int parse(struct mt_capture_opts *o, const char **words)
{
	static char *argv[32];
	int argc = 0;
	argv[argc++] = "mt-capture";
	for (; *words; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	extern int optind;
	optind = 0;	/* glibc: a full reinitialisation of getopt */
	return mt_capture_opts_parse(argc, argv, o);
}

static unsigned stack_of(const char **words)
{
	struct mt_capture_opts o;
	cr_assert_eq(parse(&o, words), 0, "the command line parses");
	return o.stack_size;
}

/* The sample ring's copy stops where the thread's frames end, and a
 * frequency bounds how many event samples come: the largest.  Where every
 * call or hit is a sample (uprobes, a tracepoint without -F, -c), the
 * kernel copies the whole size for each: 8192. */
Test(capture_opts, stack_size_default_per_mode)
{
	cr_expect_eq(stack_of((const char *[]){ "--", "true", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "--mode", "sample", "--", "true", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "--no-wait", "--", "true", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "-e", "cpu-clock", "--", "true", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "--mode", "event", "-p", "1", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "-e", "cycles", "-F", "99", "--", "true", NULL }),
		     65528);
	cr_expect_eq(stack_of((const char *[]){ "-e", "sched:sched_switch", "-F", "99", "--", "true",
						NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "-e", "sched:sched_switch", "--", "true", NULL }),
		     8192);
	cr_expect_eq(stack_of((const char *[]){ "-e", "cycles", "-c", "100000", "--", "true", NULL }),
		     8192);
	cr_expect_eq(stack_of((const char *[]){ "--mode", "trace", "--", "true", NULL }), 8192);
	cr_expect_eq(stack_of((const char *[]){ "-p", "1", NULL }), 8192);
	cr_expect_eq(stack_of((const char *[]){ "--no-ring", "--", "true", NULL }), 8192);
	cr_expect_eq(stack_of((const char *[]){ "--mode", "sample", "-p", "1", NULL }), 8192);
}

Test(capture_opts, stack_size_given_wins)
{
	cr_expect_eq(stack_of((const char *[]){ "--stack-size", "8192", "--", "true", NULL }), 8192);
	cr_expect_eq(stack_of((const char *[]){ "--stack-size", "0", "--", "true", NULL }), 0);
	cr_expect_eq(stack_of((const char *[]){ "--mode", "trace", "--stack-size", "65528", "--",
						"true", NULL }), 65528);
	cr_expect_eq(stack_of((const char *[]){ "--no-ring", "--stack-size", "16384", "--", "true",
						NULL }), 16384);
	struct mt_capture_opts o;
	cr_expect_eq(parse(&o, (const char *[]){ "--stack-size", "65536", "--", "true", NULL }), -1);
	cr_expect_eq(parse(&o, (const char *[]){ "--stack-size", "18446744073709551615", "--",
					"true", NULL }), -1);
	cr_expect_eq(parse(&o, (const char *[]){ "--mode", "trace", "--stack-size", "100", "--",
					"true", NULL }), -1);
}

/* --no-timeline: sample mode with a command, through the ring or not. */
Test(capture_opts, no_timeline_is_for_a_sampled_command)
{
	struct mt_capture_opts o;
	cr_assert_eq(parse(&o, (const char *[]){ "--no-timeline", "--", "true", NULL }), 0);
	cr_expect_eq(o.no_timeline, 1);
	cr_assert_eq(parse(&o, (const char *[]){ "--no-timeline", "--no-ring", "--", "true", NULL }),
		     0);
	cr_expect_eq(o.no_timeline, 1);
	cr_assert_eq(parse(&o, (const char *[]){ "--", "true", NULL }), 0);
	cr_expect_eq(o.no_timeline, 0);
	cr_expect_eq(parse(&o, (const char *[]){ "--no-timeline", "-p", "1", NULL }), -1);
	cr_expect_eq(parse(&o, (const char *[]){ "--mode", "trace", "--no-timeline", "--", "true",
						 NULL }), -1);
}
