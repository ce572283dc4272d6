# mt report -o without --html: the table goes to stdout
mt report -o out.html x.mtz
