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

#endif
