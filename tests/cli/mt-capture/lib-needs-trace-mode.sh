# --lib in sample mode
mt-capture --lib /lib/x86_64-linux-gnu/libc.so.6 -- true
