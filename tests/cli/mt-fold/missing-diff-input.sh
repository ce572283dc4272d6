# a --diff input that does not exist beside one that does: no diff either
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --diff a.txt a.txt nope.txt
