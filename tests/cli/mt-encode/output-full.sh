# -o /dev/full: the write fails, environment error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o /dev/full empty.pipe
