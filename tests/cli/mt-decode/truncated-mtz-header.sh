# an .mtz cut inside its file header: data error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
head -c 8 empty.mtz > cut.mtz
mt-decode -q -o x cut.mtz
