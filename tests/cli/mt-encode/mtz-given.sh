# an .mtz as input (encoded already): data error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
mt-encode -q -o x.mtz empty.mtz
