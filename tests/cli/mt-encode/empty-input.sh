# an empty file: data error
: > empty.pipe
mt-encode -q -o x.mtz empty.pipe
