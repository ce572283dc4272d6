# empty stdin ('-'): data error
mt-unwind - < /dev/null
