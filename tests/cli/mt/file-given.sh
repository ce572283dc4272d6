# a capture given as the subcommand: say what to run
printf '# mt-unwind 1\n' > run.txt
mt run.txt
