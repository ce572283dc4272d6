/* common/cli.h: messages and exits of every mt program. */
#include "common/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *prog_name = "mt";

void mt_cli_init(const char *prog, char **argv)
{
	prog_name = prog;
	if (argv && argv[0])
		argv[0] = (char *)prog;
}

int mt_usage_hint(const char *synopsis)
{
	fprintf(stderr, "usage: %s   (see --help)\n", synopsis);
	return MT_EXIT_USAGE;
}

const char *mt_prog(void)
{
	return prog_name;
}

/* One fprintf per message, so that lines of two threads never interleave. */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: %s%s\n", prog_name, prefix, msg);
}

int mt_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void mt_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void mt_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

noreturn void mt_die(enum mt_exit code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	exit(code);
}
