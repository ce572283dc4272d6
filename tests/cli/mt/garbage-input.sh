# a text file: not a capture, and what mt reads
printf 'hello\n' > notes.txt
mt report notes.txt
