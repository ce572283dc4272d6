# an .mtz (its file header) as input: data error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
head -c 16 empty.mtz > head.mtz	# the frames' bytes vary with the zstd version
mt-fold head.mtz
