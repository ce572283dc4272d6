# no input named: usage error
mt-unwind
