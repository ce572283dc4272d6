# peak_bytes of an input without tick lines (an older capture): a data error
printf '# mt-unwind 1\nalloc\t1/1\t10\tp\tsize=8 ptr=0x10 points=1 rate=1\tmain end=complete\n' >old.txt
mt-fold --metric peak_bytes old.txt
