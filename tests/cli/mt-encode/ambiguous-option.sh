# an abbreviation of several long options (--frame-size, --force): usage error
mt-encode --f -o x.mtz a.pipe
