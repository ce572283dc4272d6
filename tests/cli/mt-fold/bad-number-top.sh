# --top not a number: usage error
mt-fold --top x a.txt
