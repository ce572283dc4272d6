# mt report of two captures: usage error (mt diff compares two)
printf '# mt-unwind 1\n' > a.txt
mt report a.txt a.txt
