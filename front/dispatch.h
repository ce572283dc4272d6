/* mt: the subcommand table, `mt --help`, `mt help SUB`. */
#ifndef MT_FRONT_DISPATCH_H
#define MT_FRONT_DISPATCH_H

/* Runs the subcommand argv[1].  @return : the exit status. */
int mt_front_dispatch(int argc, char **argv);

#endif
