# mt report --html -o - with stdout a terminal: refused
printf '# mt-unwind 1\n' > a.txt
script -qfec "mt report --html -o - a.txt" /dev/null | tr -d '\r' >&2
exit "${PIPESTATUS[0]}"
