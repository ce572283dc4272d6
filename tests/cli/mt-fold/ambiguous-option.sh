# an abbreviation of several long options (--metric, --min-samples): usage error
mt-fold --m x a.txt
