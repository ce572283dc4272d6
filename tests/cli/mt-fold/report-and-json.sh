# --report and --json together: usage error
mt-fold --report --json a.txt
