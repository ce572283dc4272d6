# mt diff with a base that does not exist
printf '# mt-unwind 1\n' > new.txt
mt diff nope.mtz new.txt
