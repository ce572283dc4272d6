# -o naming a directory: environment error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
mkdir d
mt-decode -q -o d empty.mtz
