# empty stdin (no input named): a warning, exit 0
mt-fold < /dev/null
