# a mode that does not exist
mt-capture --mode bogus -- true
