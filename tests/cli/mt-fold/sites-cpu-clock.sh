# a cpu-clock capture: the period is time, written in ns to s
printf "# mt-unwind 1\nsample\t5/5\t1000\tspin\tevent=cpu-clock period=1000000\tmain (s.c:3);spin (s.c:9) end=complete\nsample\t5/5\t2000\tspin\tevent=cpu-clock period=1000000\tmain (s.c:3);spin (s.c:9) end=complete\nsample\t5/5\t3000\tspin\tevent=cpu-clock period=1000000\tmain (s.c:3);idle (s.c:20) end=complete\n" > in.txt
COLUMNS=80 mt-fold --sites in.txt
