# a value given to an option that takes none
mt-capture --no-ring=1 -- true
