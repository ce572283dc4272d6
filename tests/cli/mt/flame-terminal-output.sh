# mt flame -o - with stdout a terminal: refused
printf '# mt-unwind 1\n' > a.txt
script -qfec "mt flame -o - a.txt" /dev/null | tr -d '\r' >&2
exit "${PIPESTATUS[0]}"
