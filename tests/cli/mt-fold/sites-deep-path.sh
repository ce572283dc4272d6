# --sites --wide with a call path of 100 frames: each ';' becomes " < ", so
# the line is longer than the stack it comes from (it overran its buffer)
{ echo '# mt-unwind 1'; printf 'alloc\t1/1\t1\tp\tsize=64 ptr=0x1 fn=malloc every=1\t'
  for i in $(seq 0 99); do printf 'f%d;' $i; done; printf 'malloc end=complete\n'; } > a.txt
mt-fold --sites --wide a.txt | grep -c '^ *100.0%  f98 < f97 < .* < f1 < f0$'
