# collapsed stacks given to decode: a hint to draw them
printf 'main;work;malloc 4096\n' > a.folded
mt-encode -d a.folded
