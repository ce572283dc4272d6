# a stack whose exact sum passes 2^64: reported and left out, never wrapped; the others are written
L='alloc\t1/1\t1\tp\tsize=9223372036854775807 every=1\tmain;big end=complete\n'
printf "# mt-unwind 1\n$L$L${L}alloc\t1/1\t2\tp\tsize=18446744073709551615 every=1\tmain;max end=complete\n" > a.txt
mt-fold a.txt
