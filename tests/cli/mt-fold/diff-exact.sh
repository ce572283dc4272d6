# trace-mode diff of complete captures: exact changes, no test, no warning
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x1 every=1\tmain;f;malloc end=complete\nalloc\t1/1\t2\tp\tsize=30 ptr=0x2 every=1\tmain;g;malloc end=complete\n' > base.txt
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x1 every=1\tmain;f;malloc end=complete\nalloc\t1/1\t2\tp\tsize=50 ptr=0x2 every=1\tmain;g;malloc end=complete\nalloc\t1/1\t3\tp\tsize=7 ptr=0x3 every=1\tmain;h;malloc end=complete\n' > new.txt
mt-fold --diff base.txt --json new.txt
