# a perf stream cut inside its header: data error
printf 'PERFILE2' > cut.pipe
mt-unwind cut.pipe
