# an option neither mt record nor mt-capture has: 125, as mt-capture
mt record --frobnicate -- true
