# --live-buckets 0: no bucket to cut the run into
printf "alloc\t1/1\t5\tx\tsize=8 ptr=0x10 every=1\tmain end=complete\n" >in.txt
mt-fold --json --live-buckets 0 in.txt
