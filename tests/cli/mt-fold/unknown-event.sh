# --event naming an event the input has no sample of: usage error
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --event cpu-clock a.txt
