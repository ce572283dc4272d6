# mt report passes --metric peak_bytes, --at and --sizes to mt-fold --sites
printf '# mt-unwind 1\n' >t.txt
cat "$MT_SRC/tests/cli/mt-fold/timeline-input.txt" >>t.txt
COLUMNS=80 mt report --metric peak_bytes --at 205ms --sizes --top 2 t.txt
