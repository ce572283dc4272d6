# --no-ring with -p
mt-capture --no-ring -p 1
