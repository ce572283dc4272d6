# --sites with --report: exclusive
mt-fold --sites --report
