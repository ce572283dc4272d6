# trace-mode diff (every call recorded): the changes are exact sums, but the
# new capture lost events: every exact row says 'lost', the header why
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x1 every=1\tmain;f;malloc end=complete\nalloc\t1/1\t2\tp\tsize=30 ptr=0x2 every=1\tmain;g;malloc end=complete\n' > base.txt
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 ptr=0x1 every=1\tmain;f;malloc end=complete\nalloc\t1/1\t2\tp\tsize=50 ptr=0x2 every=1\tmain;g;malloc end=complete\nlost\t1/1\t5\tp\tcount=3 reason=ring\t end=none\n' > new.txt
mt-fold --diff base.txt new.txt
