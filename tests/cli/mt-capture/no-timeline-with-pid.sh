# --no-timeline with -p: the running process keeps its ticker
mt-capture --no-timeline -p 1
