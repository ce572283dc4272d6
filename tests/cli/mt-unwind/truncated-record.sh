# a perf pipe stream cut inside a record header: data error
printf 'PERFILE2\020\0\0\0\0\0\0\0\010\0\0\0' > cut.pipe
mt-unwind -q cut.pipe
