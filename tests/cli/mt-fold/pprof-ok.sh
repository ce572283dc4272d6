# --pprof: nothing on stdout or stderr, a gzip file
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --pprof p.pb.gz --label host=a a.txt && test "$(head -c 2 p.pb.gz | od -An -tx1)" = " 1f 8b"
