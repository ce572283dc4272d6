# collapsed stacks given to mt report: what they are and what draws them
printf 'main;alloc 4096\n' > s.folded
mt report s.folded
