/* mt: the subcommand table, `mt --help`, `mt help SUB` (see dispatch.h). */
#include "front/dispatch.h"
#include "front/sub.h"
#include "common/cli.h"
#include "common/filekind.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SYNOPSIS "mt SUBCOMMAND [options] [ARGS]"

static const struct sub {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *f);
	const char *summary;
} subs[] = {
	{ "record", mt_cmd_record, mt_help_record, "capture a program's allocations into FILE.mtz" },
	{ "report", mt_cmd_report, mt_help_report, "the allocation sites of a capture, as a table" },
	{ "flame", mt_cmd_flame, mt_help_flame, "a flame graph (SVG) of a capture" },
	{ "diff", mt_cmd_diff, mt_help_diff, "per-site change from one capture to another" },
	{ "archive", mt_cmd_archive, mt_help_archive, "the modules' files a capture needs, by build-id" },
};
#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static void usage(FILE *f)
{
	fputs("usage: " SYNOPSIS "\n"
	      "Profile a program's allocations: record, then report or draw.\n"
	      "\n", f);
	for (size_t i = 0; i < NSUBS; i++)
		fprintf(f, "  %-8s %s\n", subs[i].name, subs[i].summary);
	fputs("  help SUB this subcommand's options (also: mt SUB --help)\n"
	      "\n"
	      "  mt record -- ./prog ARGS     writes mt.prog.PID.mtz\n"
	      "  mt report mt.prog.PID.mtz    the top allocation sites\n"
	      "  mt flame mt.prog.PID.mtz     mt.prog.PID.svg, open it in a browser\n"
	      "  mt archive FILE -o DIR       DIR for mt-unwind --symfs DIR elsewhere\n"
	      "\n"
	      "The stages it runs (mt-capture, mt-encode, mt-unwind, mt-fold,\n"
	      "mt-flamegraph) are found beside mt; each has its own manual page.\n"
	      "\n"
	      "exit status: as the subcommand's; 2 for a usage error here.\n", f);
}

static const struct sub *find(const char *name)
{
	for (size_t i = 0; i < NSUBS; i++)
		if (!strcmp(subs[i].name, name))
			return &subs[i];
	return NULL;
}

/* An unknown subcommand: said, with what was meant when it is a file. */
static int unknown(const char *name)
{
	struct stat st;
	enum mt_file_kind k;
	if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && mt_file_kind_peek(name, &k) == 0 &&
	    k != MT_FILE_OTHER && k != MT_FILE_EMPTY && k != MT_FILE_FOLDED)
		mt_error("'%s' is not a subcommand: it is %s; to read it: mt report %s", name,
			 mt_file_kind_str(k), name);
	else if (name[0] == '-')
		mt_error("unknown option '%s' (the options follow the subcommand)", name);
	else
		mt_error("'%s' is not a subcommand (record, report, flame, diff, archive)", name);
	return mt_usage_hint(SYNOPSIS);
}

int mt_front_dispatch(int argc, char **argv)
{
	if (argc < 2) {
		mt_error("no subcommand given");
		return mt_usage_hint(SYNOPSIS);
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		usage(stdout);
		return MT_EXIT_OK;
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return MT_EXIT_OK;
		}
		const struct sub *s = find(argv[2]);
		if (!s)
			return unknown(argv[2]);
		s->help(stdout);
		return MT_EXIT_OK;
	}
	const struct sub *s = find(name);
	if (!s)
		return unknown(name);
	return s->run(argc - 1, argv + 1);
}
