# temp_bytes of an unwound text without seq= (an older capture): mt-fold's error, exit 1
printf '# mt-unwind 1\nalloc\t1/1\t10\tp\tsize=8 ptr=0x10 points=1 rate=1\tmain end=complete\n' >old.txt
mt report --metric temp_bytes old.txt
