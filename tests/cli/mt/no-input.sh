# mt report without a capture: usage error
mt report
