# a perf stream cut inside its header: data error
printf 'PERFILE2' > cut.pipe
mt-encode -q -o x.mtz cut.pipe
