# a perf.data file cut after 16 bytes of its header: data error
printf 'PERFILE2\150\0\0\0\0\0\0\0' > cut.data	# header size 104
mt-unwind cut.data
