# a line that is not an event: data error, the others are folded
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\nalloc 1/1\n' > a.txt
mt-fold a.txt
