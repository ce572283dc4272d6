# tick lines with a bad live= and without peak_time=: skipped, named, exit 1
printf '# mt-unwind 1\ntick\t5/5\t10\tp\tlive=1x alloc_bytes=0 alloc_block_bytes=0 peak=0 peak_time=0\t end=none\n' >t.txt
printf 'tick\t5/5\t20\tp\tlive=-8 alloc_bytes=0 alloc_block_bytes=0 peak=0\t end=none\n' >>t.txt
mt-fold --report t.txt >/dev/null
