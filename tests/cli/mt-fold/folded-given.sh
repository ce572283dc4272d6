# collapsed stacks (mt-fold's output) as input: data error
printf 'main;f 10\n' > a.folded
mt-fold a.folded
