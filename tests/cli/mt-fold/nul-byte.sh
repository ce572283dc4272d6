# a NUL byte inside a line: the line is bad (it would cut the names), the rest is folded
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\nalloc\t1/1\t2\tp\tsize=7 every=1\tmain;g\000h end=complete\n' > a.txt
mt-fold a.txt
