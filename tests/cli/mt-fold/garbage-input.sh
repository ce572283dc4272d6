# binary garbage: data error
printf '\001\002\003\377' > g
mt-fold g
