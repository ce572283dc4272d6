# an input named like FILE@KEY=VALUE that exists is that file; one that
# does not is FILE with labels, and FILE missing is an environment error
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x10 every=1\tmain;f end=complete\n' > a.txt
cp a.txt 'b.txt@host=x'
mt-fold --pprof p.pb.gz 'b.txt@host=x' && mt-fold --pprof p.pb.gz 'c.txt@host=y'
