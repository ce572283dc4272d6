# more buckets than the limit
mt-fold --json --live-buckets 100001 -
