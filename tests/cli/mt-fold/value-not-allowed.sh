# a value given to an option that takes none: usage error
mt-fold --comm=1 a.txt
