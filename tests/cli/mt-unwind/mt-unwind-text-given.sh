# mt-unwind's own output as input: data error
printf '# mt-unwind 1\n# input: x.mtz\n' > x.txt
mt-unwind x.txt
