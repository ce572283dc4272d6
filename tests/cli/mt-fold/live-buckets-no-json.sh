# --live-buckets is a section of --json: refused with --report
printf "alloc\t1/1\t5\tx\tsize=8 ptr=0x10 every=1\tmain end=complete\n" >in.txt
mt-fold --report --live-buckets 10 in.txt
