# a perf pipe stream (not encoded) as input: data error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-decode -q -o x empty.pipe
