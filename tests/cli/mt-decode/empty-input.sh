# an empty file: data error
: > empty.mtz
mt-decode -q -o x empty.mtz
