# --label naming a label every sample has: usage error
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --pprof p.pb.gz --label pid=1 a.txt
