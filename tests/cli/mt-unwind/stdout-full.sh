# stdout on /dev/full: the write fails, environment error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-unwind -q empty.pipe > /dev/full
