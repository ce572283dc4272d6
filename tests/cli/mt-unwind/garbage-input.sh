# a file of no kind mt reads: data error
echo garbage > g
mt-unwind g
