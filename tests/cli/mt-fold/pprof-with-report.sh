# --pprof with --report: usage error (the profile is the only output)
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --pprof p.pb.gz --report a.txt
