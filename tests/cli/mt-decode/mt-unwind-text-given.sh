# mt-unwind output as input: data error
printf '# mt-unwind 1\n# input: x.mtz\n' > x.txt
mt-decode -q -o x x.txt
