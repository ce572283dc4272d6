# empty stdin (no input named): data error
mt-encode -q -o x.mtz < /dev/null
