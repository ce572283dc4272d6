# a --diff base that does not exist: environment error, and no diff (against
# nothing, every site would read as new)
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\n' > a.txt
mt-fold --diff nope.txt a.txt
