# every allocation recorded (every=1) but a stack cut: the sites are not exact
printf "# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=100 ptr=0x1 fn=malloc every=1\t_start;main (m.c:3);make (m.c:9);malloc end=complete\nalloc\t1/1\t2\tp\tsize=40 ptr=0x2 fn=malloc every=1\tdeep (d.c:1);make (m.c:9);malloc end=end-of-dump\n" > in.txt
COLUMNS=80 mt-fold --sites in.txt
