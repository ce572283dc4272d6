# an option mt-capture does not have
mt-capture --bogus -- true
