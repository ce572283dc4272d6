/* mt: the subcommands, each a main of its own (argv[0] is its name). */
#ifndef MT_FRONT_SUB_H
#define MT_FRONT_SUB_H

#include <stdio.h>

int mt_cmd_record(int argc, char **argv);
int mt_cmd_report(int argc, char **argv);
int mt_cmd_flame(int argc, char **argv);
int mt_cmd_diff(int argc, char **argv);
int mt_cmd_archive(int argc, char **argv);

/* Each subcommand's --help text (also for `mt help SUB`). */
void mt_help_record(FILE *f);
void mt_help_report(FILE *f);
void mt_help_flame(FILE *f);
void mt_help_diff(FILE *f);
void mt_help_archive(FILE *f);

/* FILE without .mtz/.perf/.data, then suffix (".svg"): malloc'd, NULL
 * when out of memory (flame.c). */
char *mt_front_default_out(const char *file, const char *suffix);

/* mt report --html, mt diff --html (html.c): the page at out ("-": stdout);
 * fold (NULL-terminated) the options every mt-fold run takes (filters). */
int mt_html_report(const char *file, const char *out, const char *metric, char **fold,
		   int no_cache, int verbose);
int mt_html_diff(const char *base, const char *new, const char *out, const char *metric,
		 int no_cache, int verbose);

#endif
