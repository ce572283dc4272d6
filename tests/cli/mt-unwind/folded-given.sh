# collapsed stacks (mt-fold output) given: a hint to draw them
printf 'main;work;malloc 4096\n' > a.folded
mt-unwind a.folded
