# --only-pid keeps one process; what is left out is counted
printf "# mt-unwind 1\nalloc\t1/1\t1\tapp\tsize=100 ptr=0x1 fn=malloc every=1\tmain;a;malloc end=complete\nalloc\t2/2\t2\tother\tsize=40 ptr=0x2 fn=malloc every=1\tmain;b;malloc end=complete\n" > in.txt
mt-fold --only-pid 2 --only-comm other in.txt
