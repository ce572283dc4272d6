# a file that is not an .mtz: data error
echo garbage > g
mt-decode -q -o x g
