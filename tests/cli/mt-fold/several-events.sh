# samples of two events and no --event: usage error
printf '# mt-unwind 1\n' > s.txt
printf 'sample\t1/1\t1\tp\tevent=cpu-clock period=1\tmain;f end=complete\n' >> s.txt
printf 'sample\t1/1\t2\tp\tevent=page-faults period=1\tmain;g end=complete\n' >> s.txt
mt-fold s.txt
