# a file that is not a perf stream: data error
echo garbage > g
mt-encode -q -o x.mtz g
