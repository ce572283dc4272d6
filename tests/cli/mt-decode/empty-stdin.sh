# empty stdin (no input named): data error
mt-decode -q -o x < /dev/null
