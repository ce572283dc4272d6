# mt-unwind output with no events: a report of nothing, with mt-fold's warning
printf '# mt-unwind 1\n' > a.txt
mt report a.txt
