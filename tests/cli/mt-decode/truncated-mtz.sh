# an .mtz cut inside its first frame header: data error
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
mt-encode -q -o empty.mtz empty.pipe
head -c 20 empty.mtz > cut.mtz
mt-decode -q -o x cut.mtz
