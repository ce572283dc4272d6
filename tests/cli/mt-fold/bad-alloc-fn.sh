# --alloc-fn that is no regular expression: usage error
mt-fold --sites --alloc-fn "(x"
