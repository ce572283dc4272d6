# -o naming a directory: environment error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mkdir d
mt-unwind -q -o d empty.pipe
