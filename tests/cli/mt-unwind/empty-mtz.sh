# an .mtz of a perf pipe stream without records: the header lines, exit 0
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
mt-unwind -q empty.mtz
