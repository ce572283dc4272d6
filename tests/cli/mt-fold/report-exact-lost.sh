# a trace-mode report of a capture that lost events: no figure is called exact
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x1 every=1\tmain;f;malloc end=complete\nalloc\t1/1\t2\tp\tsize=50 ptr=0x2 every=1\tmain;g;malloc end=complete\nlost\t1/1\t5\tp\tcount=3 reason=ring\t end=none\n' > new.txt
mt-fold --report new.txt
