# --mmap-pages must be a power of two
mt-capture --mmap-pages 3 -- true
