# -o in a directory that does not exist: environment error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
mt-decode -q -o nodir/x empty.mtz
