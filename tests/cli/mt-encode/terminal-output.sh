# binary output to a terminal, without -o or -f: usage error (script(1) makes the terminal)
printf 'PERFILE2\020\0\0\0\0\0\0\0' > empty.pipe	# a perf pipe stream header, no records
script -qec 'mt-encode -q empty.pipe 2> tty.err; echo $? > tty.rc' /dev/null > /dev/null
cat tty.err >&2
exit "$(cat tty.rc)"
