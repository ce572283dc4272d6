# an empty file: data error
: > empty.mtz
mt-unwind empty.mtz
