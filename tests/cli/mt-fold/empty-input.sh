# an empty file: a warning, exit 0
: > empty.txt
mt-fold empty.txt
