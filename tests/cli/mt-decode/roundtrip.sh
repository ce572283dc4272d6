# an .mtz of a perf pipe stream without records: decoded to the same bytes, exit 0
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
mt-decode -q -o back.pipe empty.mtz
cmp empty.pipe back.pipe
