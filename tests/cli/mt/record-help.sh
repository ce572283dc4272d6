# mt record --help: its own options and the capture options it passes on
mt record --help
