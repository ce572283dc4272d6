# mt report --html with --json: two outputs asked, refused
mt report --html --json x.mtz
