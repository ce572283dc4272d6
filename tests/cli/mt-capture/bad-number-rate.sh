# --rate must be a number
mt-capture --rate x -- true
