# an empty file: not a capture
: > empty.mtz
mt report empty.mtz
