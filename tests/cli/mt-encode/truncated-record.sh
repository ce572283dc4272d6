# a perf pipe stream cut inside a record header: data error, the rest kept as it is
printf 'PERFILE2\020\0\0\0\0\0\0\0\010\0\0\0' > cut.pipe
mt-encode -q -o x.mtz cut.pipe
