# mt diff needs two captures
printf '# mt-unwind 1\n' > a.txt
mt diff a.txt
